package report_test

import (
	"strings"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/report"
)

func TestText(t *testing.T) {
	var out, errb strings.Builder
	r := report.NewText(&out, &errb, protocol.HotfixOnError, func(rel string) string { return "/ws/" + rel })
	for _, m := range []struct {
		t protocol.Type
		p any
	}{
		{protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: "x = 3"}}},
		{protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStderr, Line: "warning: slow"}}},
		{protocol.TypeProgress, &protocol.Progress{Verdict: &protocol.Verdict{State: protocol.Error, Detector: "divergence", Message: "x grows"}}},
		{protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsArtifact, Artifact: &protocol.Artifact{Path: "fig.png", MIMEType: "image/png", Size: 42}}}},
		{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: "Traceback\nNameError", Result: &protocol.Result{Line: 3, DurationS: 0.5}}},
	} {
		if err := r.Message(m.t, m.p); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "x = 3\n" {
		t.Errorf("stdout = %q", out.String())
	}
	want := "warning: slow\nlabmate: [Error] divergence: x grows\nlabmate: hot-fix (on_error): interrupting\nlabmate: artifact fig.png (image/png, 42 bytes): /ws/fig.png\nlabmate: error at line 3 after 0.500s: Traceback\n"
	if errb.String() != want {
		t.Errorf("stderr = %q, want %q", errb.String(), want)
	}

}

// TestVerdictCorrection: a verdict's suggested correction is printed with it.
func TestVerdictCorrection(t *testing.T) {
	var out, errb strings.Builder
	r := report.NewText(&out, &errb, protocol.HotfixOnError, func(rel string) string { return rel })
	v := &protocol.Verdict{State: protocol.Error, Detector: "drift", Message: "dE/E0 is not conserved", Correction: "use a symplectic integrator"}
	if err := r.Message(protocol.TypeProgress, &protocol.Progress{Verdict: v}); err != nil {
		t.Fatal(err)
	}
	if want := "labmate: [Error] drift: dE/E0 is not conserved; suggested fix: use a symplectic integrator\n"; !strings.HasPrefix(errb.String(), want) {
		t.Errorf("stderr = %q, want %q", errb.String(), want)
	}
}
