package perception

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// A code's profile is one file. This test's code, a made-up self-consistent solver "toyscf"
// that prints `SCF step N  drho = X` and stops with `FATAL: …`, is everything a new code
// (VASP, CP2K, …) has to write: registered, it is chosen from the command that runs it and
// named by --profile, its progress lines become telemetry (Parsed, and judged by every
// detector) and its fault lines verdicts with a correction.

type toyReader struct{ steps int }

func (r *toyReader) line(m *Monitor, st *stream, kind protocol.ObservationKind, line string) {
	t := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(t, "SCF step"):
		if i := strings.Index(t, "drho ="); i >= 0 {
			if v, ok := firstNumber(t[i+len("drho ="):]); ok {
				r.steps++
				m.emit(st, "toy_drho", v)
			}
		}
	case strings.HasPrefix(t, "FATAL:"):
		m.raise(detProfile, finding{state: protocol.Error, message: "toyscf: " + strings.TrimSpace(t[len("FATAL:"):]),
			evidence: string(kind) + ": " + line, severity: 1, correction: "toyscf: lower the mixing"})
	}
}

func (r *toyReader) sample(*Monitor, *series, *protocol.Sample) {}

func withToyCode(t *testing.T) {
	saved := codes
	t.Cleanup(func() { codes = saved })
	codes = slices.Clone(codes)
	registerCode(&code{
		name:    "toyscf",
		aliases: []string{"toy"},
		runs:    func(w string) bool { return w == "toyscf" },
		reader:  func(*Monitor, *Config) reader { return &toyReader{} },
	})
}

func TestCodeInOneFile(t *testing.T) {
	withToyCode(t)
	if got := ProfileFor("shell", "toyscf -in x.in > x.out"); got != "toyscf" {
		t.Errorf("ProfileFor chose %q for a cell that runs toyscf", got)
	}
	if got, err := ParseProfile("TOY"); err != nil || got != "toyscf" {
		t.Errorf("ParseProfile(TOY) = %q, %v", got, err)
	}
	if ps := Profiles(); ps[len(ps)-1] != "toyscf" {
		t.Errorf("Profiles() = %v, want toyscf listed", ps)
	}
	m := newMonitor(t, &Config{Profile: "toy"})
	var got []float64
	var verdicts []emitted
	lines := []string{"toyscf 1.0", "SCF step 1  drho = 0.5", "SCF step 2  drho = 0.05", "FATAL: density went negative", "SCF step 3  drho = 0.01"}
	for i, l := range lines {
		if v := m.Observe(stdout(float64(i)*0.1, l)); v != nil {
			verdicts = append(verdicts, emitted{i, v.State, v.Detector})
		}
		for _, s := range m.Parsed() { // the code's series, and the pairs every profile reads (drho)
			if s.Name == "toy_drho" {
				got = append(got, s.Value)
			}
		}
	}
	if diff := cmp.Diff([]float64{0.5, 0.05, 0.01}, got); diff != "" {
		t.Errorf("toy_drho read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]emitted{{3, protocol.Error, DetectorProfile}}, verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if v := m.Verdict(); v.Message != "toyscf: density went negative" || v.Correction == "" {
		t.Errorf("verdict %+v", v)
	}
	// Another profile does not read toyscf's lines.
	g := newMonitor(t, &Config{Profile: ProfileShell})
	for i, l := range lines {
		if v := g.Observe(stdout(float64(i)*0.1, l)); v != nil {
			t.Errorf("the shell profile judged toyscf's line %q: %+v", l, v)
		}
	}
}

func TestRegisterCodeTwice(t *testing.T) {
	withToyCode(t)
	defer func() {
		if recover() == nil {
			t.Error("a second code named qe was registered")
		}
	}()
	registerCode(&code{name: "other", aliases: []string{"qe"}})
}
