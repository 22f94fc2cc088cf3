package perception

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/labmate/labmate/protocol"
)

// seriesKey identifies a telemetry series. The source is part of the key: the same quantity
// logged with the helper and printed as `name = value` arrives twice per step (the printed
// copy rounded), and the two copies must not be mistaken for a value repeating itself.
type seriesKey struct {
	name string
	src  protocol.SampleSource
}

// series is the per-series state of the numeric detectors. It is allocated once, when the
// series first appears; judging later samples allocates nothing.
type series struct {
	name    string
	src     protocol.SampleSource
	bounded bool // a watch expression bounds it from above
	isStep  bool // its name is an integrator's step size
	lower   string
	// setpoint: the series is a printed reference; process: it has a usual process-value name
	setpoint, process bool
	role              roleInfo
	nf                nonFiniteState
	div               divergenceState
	qty               quantityState
	osc               oscillationState
	stag              freezeState
	crawl             crawlState
	cons              []constraintState
}

func newSeries(name string, src protocol.SampleSource, cons []*Constraint) *series {
	s := &series{name: name, src: src, isStep: slices.Contains(stepNames, name), lower: strings.ToLower(name)}
	_, s.setpoint = isSetpoint(name)
	s.process = slices.Contains(processNames, s.lower)
	if len(cons) > 0 {
		s.cons = make([]constraintState, len(cons))
		for i, c := range cons {
			s.cons[i].c = c
			s.bounded = s.bounded || bounds(c)
		}
	}
	return s
}

// label names the series in evidence: "y", or "y (printed)" for samples parsed from stdout.
func (s *series) label() string {
	switch s.src {
	case protocol.FromStdout:
		return s.name + " (printed)"
	case protocol.FromFile:
		return s.name + " (file)"
	}
	return s.name
}

// roleText names the series' role and why it was assigned, for a verdict; "" when unknown.
func (s *series) roleText() string {
	if s.role.role == RoleUnknown {
		return ""
	}
	return s.label() + ": " + s.role.describe()
}

// sampleValues returns the sample's scalar (its Value: the first element of a vector), its
// magnitude (|Value|, or the largest |element| of a vector) and whether every element is finite.
func sampleValues(s *protocol.Sample) (v, norm float64, finite bool) {
	v = s.Value
	if len(s.Values) == 0 {
		return v, math.Abs(v), isFinite(v)
	}
	finite = true
	for _, x := range s.Values {
		if !isFinite(x) {
			finite = false
			continue
		}
		norm = max(norm, math.Abs(x))
	}
	return v, norm, finite
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fingerprint identifies a sample's value exactly (bit for bit, so NaN repeats too).
func fingerprint(s *protocol.Sample) uint64 {
	if len(s.Values) == 0 {
		return math.Float64bits(s.Value)
	}
	h := uint64(14695981039346656037) // FNV-1a over the elements' bits
	for _, x := range s.Values {
		h ^= math.Float64bits(x)
		h *= 1099511628211
	}
	return h
}

// num formats a number for evidence.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// at formats a sample's simulation time for evidence: " at t=1.5", or "".
func at(s *protocol.Sample) string {
	if s.T == nil {
		return ""
	}
	return " at t=" + num(*s.T)
}

var (
	nan    = math.NaN()
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)

func pow10(e int) float64 { return math.Pow10(e) }

// sourceIndex numbers the sources whose runs the LAMMPS rules keep apart.
func sourceIndex(src protocol.SampleSource) int {
	if src == protocol.FromFile {
		return 1
	}
	return 0
}

// bounds reports whether c bounds its series from above (`x < 1e20`, `x in [0, 1e6]`): a
// declared range, within which growth is expected, so the divergence detector (and LAMMPS'
// explosion rules) leave the series to the constraint.
func bounds(c *Constraint) bool {
	switch c.kind {
	case within:
		return true
	case compare:
		return c.op == "<" || c.op == "<=" || c.op == "=="
	}
	return false
}

// stepNames are the series integrators' step sizes are printed or logged as.
var stepNames = []string{"h", "dt", "step", "step_size", "stepsize", "hstep", "h_step", "dt_step"}
