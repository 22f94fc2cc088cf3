package perception_test

import (
	"fmt"
	"time"

	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// A simulation logs y with the telemetry helper; y doubles every step. The monitor first
// warns (exponential growth, still plausible), then reports an Error once y has grown ten
// orders of magnitude — the moment an on_error policy interrupts the run.
func Example() {
	m, err := perception.New(&perception.Config{Watch: []string{"finite(y)"}})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	y := 1.0
	for i := range 60 {
		y *= 2
		v := m.Observe(&protocol.Observation{
			Kind:   protocol.ObsTelemetry,
			Time:   start.Add(time.Duration(i) * 50 * time.Millisecond),
			Sample: &protocol.Sample{Name: "y", Value: y, Source: protocol.FromHelper},
		})
		if v == nil {
			continue // no change: the monitor stays quiet
		}
		fmt.Printf("sample %d: %s (%s) %s\n", i, v.State, v.Detector, v.Message)
		fmt.Printf("  evidence %q, action %s\n", v.Evidence, v.Action)
		fmt.Printf("  interrupt under on_error: %v, under on_warning: %v\n",
			perception.Interrupts(protocol.HotfixOnError, v), perception.Interrupts(protocol.HotfixOnWarning, v))
	}
	// Output:
	// sample 15: Warning (divergence) y grows exponentially: |y| grew ×32768 over 16 samples
	//   evidence ["|y| = 65536, ×32768 in 16 samples"], action annotate
	//   interrupt under on_error: false, under on_warning: true
	// sample 34: Error (divergence) y diverges: |y| grew ×8.58993e+09 over 35 samples to 3.43597e+10
	//   evidence ["|y| = 3.43597e+10, ×8.58993e+09 in 35 samples"], action interrupt
	//   interrupt under on_error: true, under on_warning: true
}

// ParseConstraint reports what is wrong with a watch expression, and where.
func ExampleParseConstraint() {
	for _, expr := range []string{"overshoot_pct <= 5", "temperature in [15, 27]", "x <", "residual shrinking"} {
		c, err := perception.ParseConstraint(expr)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: about series %q\n", c, c.Name)
	}
	// Output:
	// overshoot_pct <= 5: about series "overshoot_pct"
	// temperature in [15, 27]: about series "temperature"
	// watch "x <": expected a number after "<" at column 4
	// watch "residual shrinking": expected a comparison (< <= > >= == !=), "in", "decreasing" or "increasing" after "residual", found "shrinking" at column 10
}
