package perception

import "time"

// Config configures the Monitor of one operation. A nil *Config means defaults.
type Config struct {
	// Watch holds the operation's constraint expressions (`labmate exec --watch EXPR`),
	// parsed by New; see ParseConstraint for the grammar.
	Watch []string
	// Expect declares what a healthy run of this operation may legitimately do.
	Expect Expectation
	// Thresholds tune the detectors; zero fields take the documented defaults.
	Thresholds Thresholds
}

// Expectation declares what a healthy run of the operation may legitimately do.
type Expectation struct {
	// Silence is the longest legitimate stretch without output or telemetry while the
	// process computes (a large factorisation, a quiet solver). A busy, silent run stays
	// Normal until Silence has passed, is a Warning after it and an Error after twice it.
	// Zero: only Thresholds.Silence and Thresholds.SilenceError apply.
	Silence time.Duration
}

// Thresholds tune the detectors. Each detector's doc comment explains its defaults; a zero
// field takes the default.
type Thresholds struct {
	Silence      time.Duration // busy with no output or telemetry this long → Warning (10 s)
	SilenceError time.Duration // … this long → Error (30 s)

	Frozen    int           // samples in a row with no series changing → Error (50) …
	FrozenFor time.Duration // … when they also span at least this long (1 s)

	DivergenceWindow int     // samples judged for exponential growth (16)
	DivergenceBound  float64 // |x| at or above this diverged, whatever its history (1e100)

	SwingGrowth   float64 // swing-to-swing amplitude ratio of a growing oscillation (1.2)
	GrowingSwings int     // successive growing swings (ratios ≥ SwingGrowth) → Error (3)

	MemoryWarning float64 // resident memory / memory limit → Warning (0.80)
	MemoryError   float64 // … → Error (0.95)
	OutputWarning float64 // output bytes / output limit → Warning (0.80)
	// MemoryLimit is used when resource samples carry no MemoryLimit (0: no limit known).
	MemoryLimit int64
}

// The default thresholds.
const (
	DefaultSilence          = 10 * time.Second
	DefaultSilenceError     = 30 * time.Second
	DefaultFrozen           = 50
	DefaultFrozenFor        = time.Second
	DefaultDivergenceWindow = 16
	DefaultDivergenceBound  = 1e100
	DefaultSwingGrowth      = 1.2
	DefaultGrowingSwings    = 3
	DefaultMemoryWarning    = 0.80
	DefaultMemoryError      = 0.95
	DefaultOutputWarning    = 0.80
)

// withDefaults fills zero (or meaningless negative) fields with the defaults and folds the
// declared expectation into the silence thresholds.
func (t Thresholds) withDefaults(e Expectation) Thresholds {
	if t.Silence <= 0 {
		t.Silence = DefaultSilence
	}
	if t.SilenceError <= 0 {
		t.SilenceError = DefaultSilenceError
	}
	if e.Silence > t.Silence {
		t.Silence = e.Silence
	}
	if 2*e.Silence > t.SilenceError {
		t.SilenceError = 2 * e.Silence
	}
	if t.SilenceError < t.Silence {
		t.SilenceError = t.Silence
	}
	if t.Frozen <= 0 {
		t.Frozen = DefaultFrozen
	}
	if t.FrozenFor <= 0 {
		t.FrozenFor = DefaultFrozenFor
	}
	if t.DivergenceWindow <= 0 {
		t.DivergenceWindow = DefaultDivergenceWindow
	}
	if t.DivergenceWindow < divergenceMinSamples {
		t.DivergenceWindow = divergenceMinSamples
	}
	if t.DivergenceBound <= 0 {
		t.DivergenceBound = DefaultDivergenceBound
	}
	if t.SwingGrowth <= 1 {
		t.SwingGrowth = DefaultSwingGrowth
	}
	if t.GrowingSwings <= 0 {
		t.GrowingSwings = DefaultGrowingSwings
	}
	if t.GrowingSwings > maxGrowingSwings {
		t.GrowingSwings = maxGrowingSwings
	}
	if t.MemoryWarning <= 0 {
		t.MemoryWarning = DefaultMemoryWarning
	}
	if t.MemoryError <= 0 {
		t.MemoryError = DefaultMemoryError
	}
	if t.OutputWarning <= 0 {
		t.OutputWarning = DefaultOutputWarning
	}
	return t
}
