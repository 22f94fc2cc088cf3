package perception

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config configures the Monitor of one operation. A nil *Config means defaults.
type Config struct {
	// Watch holds the operation's constraint expressions (`labmate exec --watch EXPR`),
	// parsed by New; see ParseConstraint for the grammar.
	Watch []string
	// Expect declares what a healthy run of this operation may legitimately do.
	Expect Expectation
	// Thresholds tune the detectors; zero fields take the documented defaults.
	Thresholds Thresholds
	// Profile names the software whose output is read (see Profile); empty: ProfileGeneric.
	// ProfileFor chooses one from a cell's kernel and code.
	Profile Profile
	// Code is the cell's code. Profiles read declarations from it: LAMMPS' `fix … nve`
	// (energy must be conserved) and its other fixes.
	Code string
}

// Expectation declares what a healthy run of the operation may legitimately do.
type Expectation struct {
	// Silence is the longest legitimate stretch without output or telemetry while the
	// process computes (a large factorisation, a quiet solver). A busy, silent run stays
	// Normal until Silence has passed, is a Warning after it and an Error after twice it.
	// Zero: only Thresholds.Silence and Thresholds.SilenceError apply.
	Silence time.Duration
	// Batch says the run is a batch job (job/local, Slurm), not an interactive cell. A job
	// computes for long stretches without printing, often writing only to files: what it
	// shows of progress is its output, the growth of its followed files (ObsFile observations,
	// with or without a complete line) and its CPU time rising. So for a batch run a resource
	// sample whose CPU time rose by at least half a second per second since the previous one
	// is activity, and silence means none of these: a job that neither prints, nor writes, nor
	// computes (hung on a lock, a dead peer, a stalled file system). Without resource samples
	// (a scheduler that cannot measure its jobs) silence is never judged. A batch run's
	// default silence limits are DefaultJobSilence and DefaultJobSilenceError, or, with a
	// WallTime, a quarter and a half of it (never below DefaultSilence and
	// DefaultSilenceError); limits set in Thresholds win.
	Batch bool
	// WallTime is a batch job's declared wall time: its scheduler ends it then.
	WallTime time.Duration
}

// Thresholds tune the detectors. Each detector's doc comment explains its defaults; a zero
// field takes the default.
type Thresholds struct {
	Silence      time.Duration // busy with no output or telemetry this long → Warning (10 s)
	SilenceError time.Duration // … this long → Error (30 s)

	Frozen    int           // samples in a row with no series changing → Error (40) …
	FrozenFor time.Duration // … when they also span at least this long (1 s)

	DivergenceWindow int     // samples judged for exponential growth (16)
	DivergenceBound  float64 // |x| at or above this diverged, whatever its history (none by default)

	SwingGrowth   float64 // swing-to-swing amplitude ratio of a growing oscillation (1.2)
	GrowingSwings int     // successive growing swings (ratios ≥ SwingGrowth) → Error (3)

	MemoryWarning float64 // resident memory / memory limit → Warning (0.80)
	MemoryError   float64 // … → Error (0.95)
	OutputWarning float64 // output bytes / output limit → Warning (0.80)
	// MemoryLimit is used when resource samples carry no MemoryLimit (0: no limit known).
	MemoryLimit int64

	// Cadence scales the silence limits with the run's own rhythm: a run whose longest gap
	// between outputs so far was g is not silent before Cadence·g (3).
	Cadence float64

	StepCollapse float64       // integrator step below its largest / this → collapsed (1e4) …
	CrawlFor     time.Duration // … while t crawls (step ≤ 1e-5·|t|) for this long → Error (1 s)

	ScfRise  float64 // QE: estimated scf accuracy this many times its best → Error (1e4)
	ScfStall int     // QE: SCF iterations without a new best accuracy → Error (12)
	// QE: the accuracy ScfSlosh (20) times its best or more, ScfSloshRun (4) times in a row → Error
	ScfSlosh    float64
	ScfSloshRun int

	ResidualStall     int     // a residual without progress over this many samples, bouncing above its best → Error (25)
	DriftTolerance    float64 // relative drift of a conserved quantity → Error (0.05), when sustained and growing
	SetpointDeviation float64 // relative distance of a controlled quantity from its setpoint (0.5) …
	SetpointRows      int     // … for this many samples in a row → Error (15)
	ScfStallLong      int     // QE: SCF iterations without a 20% improvement on the best, far above conv_thr → Error (15)

	TemperatureRise float64 // LAMMPS: Temp this many times its start → Error (100)
	EnergyRise      float64 // LAMMPS: energy risen by this many times its scale → Error (10)
	NVEDrift        float64 // LAMMPS, NVE: |ΔTotEng| / kinetic energy → Error (0.25); a fifth → Warning

	// Off turns detectors off by name (DetectorLanguage, DetectorNonFinite, …); the
	// constraint detector — the operation's own watch expressions — cannot be turned off.
	Off []string
}

// The default thresholds.
const (
	DefaultSilence          = 10 * time.Second
	DefaultSilenceError     = 30 * time.Second
	DefaultJobSilence       = 5 * time.Minute  // a batch job without a wall time: Warning
	DefaultJobSilenceError  = 15 * time.Minute // … Error
	DefaultFrozen           = 40
	DefaultFrozenFor        = time.Second
	DefaultDivergenceWindow = 16
	DefaultSwingGrowth      = 1.2
	DefaultGrowingSwings    = 3
	DefaultMemoryWarning    = 0.80
	DefaultMemoryError      = 0.95
	DefaultOutputWarning    = 0.80
	DefaultCadence          = 3.0
	DefaultStepCollapse     = 1e4
	DefaultCrawlFor         = time.Second
	DefaultScfRise          = 1e4
	DefaultScfStall         = 12
	DefaultScfSlosh         = 20.0
	DefaultScfSloshRun      = 4
	DefaultResidualStall    = 25
	DefaultDriftTolerance   = 0.05
	DefaultSetpointDev      = 0.5
	DefaultSetpointRows     = 15
	DefaultScfStallLong     = 15
	DefaultTemperatureRise  = 100.0
	DefaultEnergyRise       = 10.0
	DefaultNVEDrift         = 0.25
)

// withDefaults fills zero (or meaningless negative) fields with the defaults and folds the
// declared expectation into the silence thresholds.
func (t Thresholds) withDefaults(e Expectation) Thresholds {
	if e.Batch {
		warn, err := DefaultJobSilence, DefaultJobSilenceError
		if e.WallTime > 0 {
			warn, err = max(DefaultSilence, e.WallTime/4), max(DefaultSilenceError, e.WallTime/2)
		}
		if t.Silence <= 0 {
			t.Silence = warn
		}
		if t.SilenceError <= 0 {
			t.SilenceError = max(err, t.Silence)
		}
	}
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
		t.DivergenceBound = math.Inf(1) // no absolute bound: growth is judged by its shape
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
	if t.Cadence <= 0 {
		t.Cadence = DefaultCadence
	}
	if t.StepCollapse <= 1 {
		t.StepCollapse = DefaultStepCollapse
	}
	if t.CrawlFor <= 0 {
		t.CrawlFor = DefaultCrawlFor
	}
	if t.ScfRise <= 1 {
		t.ScfRise = DefaultScfRise
	}
	if t.ScfStall <= 0 {
		t.ScfStall = DefaultScfStall
	}
	if t.ScfSlosh <= 1 {
		t.ScfSlosh = DefaultScfSlosh
	}
	if t.ScfSloshRun <= 0 {
		t.ScfSloshRun = DefaultScfSloshRun
	}
	if t.ResidualStall <= 0 {
		t.ResidualStall = DefaultResidualStall
	}
	t.ResidualStall = min(t.ResidualStall, divRing-1)
	if t.DriftTolerance <= 0 {
		t.DriftTolerance = DefaultDriftTolerance
	}
	if t.SetpointDeviation <= 0 {
		t.SetpointDeviation = DefaultSetpointDev
	}
	if t.SetpointRows <= 0 {
		t.SetpointRows = DefaultSetpointRows
	}
	if t.ScfStallLong <= 0 {
		t.ScfStallLong = DefaultScfStallLong
	}
	if t.TemperatureRise <= 1 {
		t.TemperatureRise = DefaultTemperatureRise
	}
	if t.EnergyRise <= 0 {
		t.EnergyRise = DefaultEnergyRise
	}
	if t.NVEDrift <= 0 {
		t.NVEDrift = DefaultNVEDrift
	}
	return t
}

// thresholdKeys are the names Set accepts, in the order the documentation lists them.
var thresholdKeys = []string{
	"silence", "silence_error", "cadence", "frozen", "frozen_for", "divergence_window",
	"divergence_bound", "swing_growth", "growing_swings", "memory_warning", "memory_error",
	"output_warning", "memory_limit", "step_collapse", "crawl_for", "scf_rise", "scf_stall",
	"scf_slosh", "scf_slosh_run", "temperature_rise", "energy_rise", "nve_drift",
	"residual_stall", "drift_tolerance", "setpoint_deviation", "setpoint_rows", "scf_stall_long",
}

// Set sets one threshold from its snake_case name and a textual value — a duration for
// silence, silence_error, frozen_for and crawl_for ("20s", "2m"), a whole number for frozen,
// divergence_window, growing_swings, scf_stall and memory_limit (bytes), a number for the
// rest — or turns a detector off or on again (`divergence=off`, `nonfinite=on`). It is what
// `labmate exec --perception KEY=VALUE` and the operation request's `perception` object use.
// The error wraps ErrConfig and names the key and the problem.
func (t *Thresholds) Set(key, value string) error {
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if slices.Contains(detectorNames[:], key) {
		switch strings.ToLower(value) {
		case "off", "false", "no", "0":
			if key == DetectorConstraint {
				return fmt.Errorf("%w: %s cannot be turned off: drop the watch expressions instead", ErrConfig, key)
			}
			if !slices.Contains(t.Off, key) {
				t.Off = append(t.Off, key)
			}
		case "on", "true", "yes", "1":
			t.Off = slices.DeleteFunc(t.Off, func(s string) bool { return s == key })
		default:
			return fmt.Errorf("%w: %s=%q: a detector is on or off", ErrConfig, key, value)
		}
		return nil
	}
	dur := func(p *time.Duration) error {
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return fmt.Errorf("%w: %s=%q: want a positive duration such as 20s or 2m", ErrConfig, key, value)
		}
		*p = d
		return nil
	}
	whole := func(p *int) error {
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: %s=%q: want a positive whole number", ErrConfig, key, value)
		}
		*p = n
		return nil
	}
	number := func(p *float64) error {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s=%q: want a positive number", ErrConfig, key, value)
		}
		*p = v
		return nil
	}
	switch key {
	case "silence":
		return dur(&t.Silence)
	case "silence_error":
		return dur(&t.SilenceError)
	case "cadence":
		return number(&t.Cadence)
	case "frozen":
		return whole(&t.Frozen)
	case "frozen_for":
		return dur(&t.FrozenFor)
	case "divergence_window":
		return whole(&t.DivergenceWindow)
	case "divergence_bound":
		return number(&t.DivergenceBound)
	case "swing_growth":
		return number(&t.SwingGrowth)
	case "growing_swings":
		return whole(&t.GrowingSwings)
	case "memory_warning":
		return number(&t.MemoryWarning)
	case "memory_error":
		return number(&t.MemoryError)
	case "output_warning":
		return number(&t.OutputWarning)
	case "memory_limit":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: %s=%q: want a positive number of bytes", ErrConfig, key, value)
		}
		t.MemoryLimit = n
		return nil
	case "step_collapse":
		return number(&t.StepCollapse)
	case "crawl_for":
		return dur(&t.CrawlFor)
	case "scf_rise":
		return number(&t.ScfRise)
	case "scf_stall":
		return whole(&t.ScfStall)
	case "scf_slosh":
		return number(&t.ScfSlosh)
	case "scf_slosh_run":
		return whole(&t.ScfSloshRun)
	case "temperature_rise":
		return number(&t.TemperatureRise)
	case "energy_rise":
		return number(&t.EnergyRise)
	case "nve_drift":
		return number(&t.NVEDrift)
	case "residual_stall":
		return whole(&t.ResidualStall)
	case "drift_tolerance":
		return number(&t.DriftTolerance)
	case "setpoint_deviation":
		return number(&t.SetpointDeviation)
	case "setpoint_rows":
		return whole(&t.SetpointRows)
	case "scf_stall_long":
		return whole(&t.ScfStallLong)
	}
	return fmt.Errorf("%w: unknown perception setting %q: thresholds are %s; detectors (=off) are %s",
		ErrConfig, key, strings.Join(thresholdKeys, ", "), strings.Join(detectorNames[:], ", "))
}

// ParseThresholds applies settings (KEY → VALUE, see Thresholds.Set) to the defaults, in
// key order; every bad setting is reported.
func ParseThresholds(settings map[string]string) (Thresholds, error) {
	var t Thresholds
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if err := t.Set(k, settings[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return t, errors.Join(errs...)
}
