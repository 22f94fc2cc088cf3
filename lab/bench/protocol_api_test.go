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

// TestMultiChannelTipsBeyondRack: an 8-channel pipette dropping its tips into a rack at row C
// (drop_tip(location)) puts 6 back, as the robot does; the 2 beyond the rack are lost.
func TestMultiChannelTipsBeyondRack(t *testing.T) {
	d := bench.NewDeck()
	if err := d.LoadLabware("opentrons_96_tiprack_300ul", "1", "tips"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "protocol", bench.Args{APILevel: "2.13"})
	if err := d.LoadInstrument("p300_multi_gen2", "left", "tips"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "pick_up_tip", bench.Args{Mount: "left", Well: "tips/A3"})
	do(t, d, "drop_tip", bench.Args{Mount: "left"})
	do(t, d, "pick_up_tip", bench.Args{Mount: "left", Well: "tips/A2"})
	ev := do(t, d, "return_tip", bench.Args{Mount: "left", Well: "tips/C3"})
	if want := "2 of the 8 tips fall beyond tips (opentrons_96_tiprack_300ul): counted as in the trash"; !slices.Contains(ev.Warnings, want) {
		t.Errorf("warnings %q, want %q", ev.Warnings, want)
	}
	var fresh []string
	for _, lw := range d.Snapshot().Labware {
		if lw.Name == "tips" {
			fresh = lw.Fresh
		}
	}
	if strings.Contains(strings.Join(fresh, " "), "3") {
		t.Errorf("put-back tips count as fresh: %v", fresh)
	}
	// The pipette is free again: a full column of the rack is taken next.
	ev = do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	if s := ev.Steps[len(ev.Steps)-1]; s.Well != "tips/A1" || s.Channels != 8 {
		t.Errorf("next pick-up %+v, want tips/A1 with 8 channels", s)
	}
}

// TestDispenseOverMaximum: below API level 2.14 the OT-2 dispenses what the tip holds when a
// protocol asks for more than the pipette's maximum; from 2.14 the API refuses it.
func TestDispenseOverMaximum(t *testing.T) {
	for _, level := range []string{"2.13", "2.14"} {
		d := testDeck(t)
		do(t, d, "protocol", bench.Args{APILevel: level})
		do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
		do(t, d, "aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A1"})
		_, err := d.Do(bench.Command{Name: "dispense", Args: bench.Args{Mount: "left", Volume: 1000, Well: "plate/B1"}})
		if level == "2.13" {
			c, _ := d.Well("plate/B1")
			if err != nil || c.Volume != 100 {
				t.Errorf("%s: dispense 1000 µL holding 100: %v, plate/B1 holds %v µL", level, err, c.Volume)
			}
		} else if !errors.Is(err, bench.ErrPipetteRange) {
			t.Errorf("%s: dispense 1000 µL: %v, want ErrPipetteRange", level, err)
		}
	}
}

// TestResetOneRack: Labware.reset() on a tip rack (reset_tipracks with its label) makes its
// every tip fresh again, so pick_up_tip takes its first one.
func TestResetOneRack(t *testing.T) {
	d := testDeck(t)
	do(t, d, "protocol", bench.Args{APILevel: "2.12"})
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	do(t, d, "drop_tip", bench.Args{Mount: "left"})
	do(t, d, "reset_tipracks", bench.Args{Label: "tips"})
	ev := do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	if s := ev.Steps[len(ev.Steps)-1]; s.Well != "tips/A1" {
		t.Errorf("after the rack's reset the pipette takes %s, want tips/A1", s.Well)
	}
	if _, err := d.Do(bench.Command{Name: "reset_tipracks", Args: bench.Args{Label: "plate"}}); !errors.Is(err, bench.ErrBadArgs) {
		t.Errorf("resetting a plate's tips: %v, want ErrBadArgs", err)
	}
}
