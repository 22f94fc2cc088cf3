package bench_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/bench"
)

// TestProtocolAcceptsWhatTheAPIDoes: in a protocol run (api_level given), what the Opentrons
// API carries out is done and warned about where it is physically wrong; the bench alone
// (no protocol) still refuses it.
func TestProtocolAcceptsWhatTheAPIDoes(t *testing.T) {
	for _, protocol := range []bool{false, true} {
		d := testDeck(t)
		if protocol {
			do(t, d, "protocol", bench.Args{APILevel: "2.13"})
		}
		// plate/C1 is declared with 100 µL: the robot aspirates 150 µL all the same.
		do(t, d, "load_liquid", bench.Args{Well: "plate/C1", Volume: 100})
		do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
		ev, err := d.Do(bench.Command{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: 150, Well: "plate/C1"}})
		if !protocol {
			if !errors.Is(err, bench.ErrWellShort) {
				t.Errorf("bench: aspirating 150 µL of 100: %v, want ErrWellShort", err)
			}
		} else if err != nil || !slices.ContainsFunc(ev.Warnings, func(w string) bool {
			return strings.Contains(w, "plate/C1 holds 100 µL, less than the 150 µL aspirated")
		}) {
			t.Errorf("protocol: aspirating 150 µL of 100: %v, warnings %q", err, ev.Warnings)
		}
		// load_liquid of 0 µL: a well declared empty.
		_, err = d.Do(bench.Command{Name: "load_liquid", Args: bench.Args{Well: "plate/B1", Volume: 0}})
		if protocol != (err == nil) {
			t.Errorf("protocol %v: load_liquid 0 µL: %v", protocol, err)
		}
	}
}
