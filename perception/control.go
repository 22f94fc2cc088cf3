package perception

import (
	"fmt"
	"strings"
	"time"

	"github.com/labmate/labmate/protocol"
)

// control judges a controlled quantity against a reference the code prints with it: a line or
// table row that carries a setpoint (setpoint, sp, ref, reference, target, T_set, level_sp…)
// and the process value it is for — a series named like the setpoint's stem (T and T_set,
// level and level_sp) or a usual process-value name (y, pv, temperature, level, speed,
// position, pressure, output). A controller's job is to bring the process value to the
// setpoint; after a setpoint change the gap |y − r| may take its time to close, overshoot and
// ring, but it keeps closing. It is an Error when, for 20 paired samples in a row after the
// setpoint last changed, the gap has not fallen below 95% of its smallest value since the
// change while staying, all along, above 20% of the step (the gap when the setpoint was set)
// and above 10% of |r|: the process value is stuck away from its setpoint — an actuator at its
// limit, an integral term missing, a loop that does not act. A noisy process held around its
// setpoint (a gap within 10% of |r|), a slow but steady approach (the gap keeps shrinking) and
// a loop still settling stay Normal; an unstable loop is the oscillation detector's.
type control struct {
	r       float64   // the current setpoint
	rName   string    // its series
	rAt     time.Time // when it was last printed
	have    bool
	changed time.Time // when it last changed
	y       string    // the process value paired with it
	step    float64   // the gap at the first paired sample after the change
	minGap  float64
	since   int // paired samples since the smallest gap
	n       int // paired samples since the change
	far     int // paired samples in a row with the gap above both bounds
	fired   bool
	stem    string // the setpoint's stem ("t" of T_set)

	ySer *series // the last candidate process value, its value and time
	yv   float64
	yAt  time.Time
}

const (
	controlStall   = 20   // paired samples without the gap closing
	controlOfStep  = 0.2  // the gap must stay above this share of the step …
	controlOfSet   = 0.1  // … and of |r|
	controlClosing = 0.95 // a gap below this share of its smallest value is closing
)

// setpointNames are what a printed reference is called (lowercased).
var setpointNames = []string{"setpoint", "set_point", "sp", "ref", "reference", "target", "y_ref", "yref", "r_ref", "sv", "t_set", "tset",
	"t_sp", "t_ref", "t_target", "level_sp", "level_ref", "demand", "command", "desired", "goal", "t_goal", "t_desired", "t_cmd"}

// processNames are usual names of a controlled process value.
var processNames = []string{"y", "pv", "process_value", "temperature", "temp", "t", "level", "speed", "position", "pressure", "output",
	"measured", "y_meas", "t_meas", "flow", "height", "angle", "theta", "omega", "velocity", "x"}

// isSetpoint reports whether name is a reference, and the stem it refers to ("T_set" → "t").
func isSetpoint(name string) (stem string, ok bool) {
	base := strings.ToLower(name)
	if in1(base, setpointNames...) {
		stem, _, _ = strings.Cut(base, "_")
		return stem, true
	}
	for _, suf := range []string{"_setpoint", "_set", "_sp", "_ref", "_target", "_desired", "_goal", "_cmd"} {
		if s, found := strings.CutSuffix(base, suf); found && s != "" {
			return s, true
		}
	}
	for _, pre := range []string{"setpoint_", "sp_", "ref_", "target_"} {
		if s, found := strings.CutPrefix(base, pre); found && s != "" {
			return s, true
		}
	}
	return "", false
}

// controlSample feeds one finite scalar sample at now to the controller rule: a setpoint
// sample, or a candidate process value; a pair is a setpoint and a process value printed on
// the same line (the same observation time), in either order.
func (m *Monitor) controlSample(now time.Time, sr *series, v float64) {
	c := &m.ctl
	if c.fired {
		return
	}
	if sr.setpoint {
		if c.rName != "" && c.rName != sr.name {
			return // one reference per run
		}
		if !c.have || v != c.r {
			c.changed, c.n, c.step, c.since, c.far = now, 0, 0, 0, 0
		}
		if c.rName == "" {
			c.stem, _ = isSetpoint(sr.name)
		}
		c.r, c.rName, c.rAt, c.have = v, sr.name, now, true
		if c.ySer != nil && now.Equal(c.yAt) {
			m.controlPair(c.ySer, c.yv)
		}
		return
	}
	if !m.pairs(sr) {
		return
	}
	c.ySer, c.yv, c.yAt = sr, v, now
	if c.have && now.Equal(c.rAt) {
		m.controlPair(sr, v)
	}
}

// controlPair judges one process value against the setpoint printed with it.
func (m *Monitor) controlPair(sr *series, v float64) {
	c := &m.ctl
	if c.y == "" {
		c.y = sr.name
	}
	if sr.name != c.y || c.fired {
		return
	}
	gap := abs(v - c.r)
	c.n++
	if c.n == 1 {
		c.step, c.minGap, c.since = gap, gap, 0
		return
	}
	if gap >= controlOfStep*c.step && gap >= controlOfSet*abs(c.r) {
		c.far++
	} else {
		c.far = 0
	}
	if gap < controlClosing*c.minGap {
		c.minGap, c.since = gap, 0
		return
	}
	c.since++
	if c.since < controlStall || c.far < controlStall {
		return
	}
	c.fired = true
	ri := roleInfo{role: RoleControlled, why: "it is printed with the setpoint " + c.rName + ", which it should track"}
	m.raise(detSetpoint, finding{state: protocol.Error,
		message: fmt.Sprintf("%s stays %s away from its setpoint %s = %s: the gap has not closed in %d samples (smallest %s, %s of the %s step); it is a %s",
			sr.label(), num(gap), c.rName, num(c.r), c.since, num(c.minGap), percent(gap/c.step), num(c.step), ri.describe()),
		evidence: fmt.Sprintf("%s = %s, %s = %s", sr.label(), num(v), c.rName, num(c.r)),
		severity: 0.8, role: sr.label() + ": " + ri.describe(),
		correction: "the loop does not bring the process to its setpoint: check for an actuator at its limit (saturation: size the actuator or lower the setpoint), add integral action for a steady offset (with anti-windup), and check the loop's sign and gains"})
}

// pairs reports whether sr is the process value of the printed setpoint: named like its stem,
// or with a usual process-value name.
func (m *Monitor) pairs(sr *series) bool {
	c := &m.ctl
	if c.y != "" {
		return sr.name == c.y
	}
	if !sr.process && c.stem == "" {
		return false
	}
	return sr.process || sr.lower == c.stem || strings.HasPrefix(sr.lower, c.stem+"_") && !strings.Contains(sr.lower, "err")
}
