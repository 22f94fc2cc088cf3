package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/labmate/labmate/lab/bench"
)

// testDeck is a plate (slot 1), a reservoir (2), 300 µL tips (3), 20 µL tips (4) and a tube
// rack (5), a p300 single-channel on the left; 10 mL of 0.1 M NaCl in res/A1, 10 mL of 0.5 M
// glucose in res/A2 and 100 µL of water in plate/A1.
func testDeck(t testing.TB) *bench.Deck {
	t.Helper()
	d := bench.NewDeck()
	for _, l := range [][3]string{
		{"corning_96_wellplate_360ul_flat", "1", "plate"},
		{"nest_12_reservoir_15ml", "2", "res"},
		{"opentrons_96_tiprack_300ul", "3", "tips"},
		{"opentrons_96_tiprack_20ul", "4", "tips20"},
		{"opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap", "5", "tubes"},
	} {
		if err := d.LoadLabware(l[0], l[1], l[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.LoadInstrument("p300_single_gen2", "left", "tips"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "load_liquid", bench.Args{Well: "res/A1", Volume: 10000, Concentrations: map[string]float64{"NaCl": 0.1}})
	do(t, d, "load_liquid", bench.Args{Well: "res/A2", Volume: 10000, Concentrations: map[string]float64{"glucose": 0.5}})
	do(t, d, "load_liquid", bench.Args{Well: "plate/A1", Volume: 100})
	return d
}

func do(t testing.TB, d *bench.Deck, name string, a bench.Args) *bench.Event {
	t.Helper()
	ev, err := d.Do(bench.Command{Name: name, Args: a})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

type cmd struct {
	name string
	args bench.Args
}

func TestErrors(t *testing.T) {
	left := func(a bench.Args) bench.Args { a.Mount = "left"; return a }
	right := func(a bench.Args) bench.Args { a.Mount = "right"; return a }
	tip := cmd{"pick_up_tip", left(bench.Args{})}
	multi := cmd{"load_instrument", bench.Args{Instrument: "p20_multi_gen2", Mount: "right", TipRacks: []string{"tips20"}}}
	multiTip := cmd{"pick_up_tip", right(bench.Args{})}
	var emptyRack []cmd
	for range 96 {
		emptyRack = append(emptyRack, tip, cmd{"drop_tip", left(bench.Args{})})
	}
	var emptyMultiRack []cmd
	for range 12 {
		emptyMultiRack = append(emptyMultiRack, multiTip, cmd{"drop_tip", right(bench.Args{})})
	}
	tests := []struct {
		name  string
		setup []cmd
		cmd   cmd
		err   error
		msg   string
	}{
		{"below the pipette's minimum", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 10, Well: "res/A1"})},
			bench.ErrPipetteRange, "bench: aspirate 10 µL from res/A1 (left): 10 µL is below the minimum volume of p300_single_gen2 (20 µL)"},
		{"above the pipette's maximum", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 350, Well: "res/A1"})},
			bench.ErrPipetteRange, "bench: aspirate 350 µL from res/A1 (left): 350 µL is above the maximum volume of p300_single_gen2 (300 µL)"},
		{"dispense below the minimum", []cmd{tip, {"aspirate", left(bench.Args{Volume: 50, Well: "res/A1"})}}, cmd{"dispense", left(bench.Args{Volume: 10, Well: "plate/B1"})},
			bench.ErrPipetteRange, "bench: dispense 10 µL into plate/B1 (left): 10 µL is below the minimum volume of p300_single_gen2 (20 µL)"},
		{"more than the well holds", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 150, Well: "plate/A1"})},
			bench.ErrWellShort, "bench: aspirate 150 µL from plate/A1 (left): plate/A1 holds 100 µL, less than the 150 µL to aspirate"},
		{"8 channels from one reservoir well", []cmd{multi, multiTip, {"load_liquid", bench.Args{Well: "res/A3", Volume: 100}}},
			cmd{"aspirate", right(bench.Args{Volume: 15, Well: "res/A3"})},
			bench.ErrWellShort, "bench: aspirate 15 µL from res/A3 (right): res/A3 holds 100 µL, less than the 120 µL to aspirate (8 channels × 15 µL)"},
		{"more than the tip takes", []cmd{tip, {"aspirate", left(bench.Args{Volume: 200, Well: "res/A1"})}}, cmd{"aspirate", left(bench.Args{Volume: 150, Well: "res/A1"})},
			bench.ErrTipFull, "bench: aspirate 150 µL from res/A1 (left): the tip (tips/A1) holds 200 µL; 150 µL more exceeds its capacity of 300 µL"},
		{"a tip smaller than the pipette", []cmd{{"load_instrument", bench.Args{Instrument: "p1000_single_gen2", Mount: "right", TipRacks: []string{"tips"}}}, multiTip},
			cmd{"aspirate", right(bench.Args{Volume: 400, Well: "res/A1"})},
			bench.ErrTipFull, "bench: aspirate 400 µL from res/A1 (right): the tip (tips/A1) holds 0 µL; 400 µL more exceeds its capacity of 300 µL"},
		{"dispensing more than the tip holds", []cmd{tip, {"aspirate", left(bench.Args{Volume: 30, Well: "res/A1"})}}, cmd{"dispense", left(bench.Args{Volume: 50, Well: "plate/B1"})},
			bench.ErrTipShort, "bench: dispense 50 µL into plate/B1 (left): the tip (tips/A1) holds 30 µL, less than the 50 µL to dispense"},
		{"dispensing over the well's capacity", []cmd{tip, {"aspirate", left(bench.Args{Volume: 300, Well: "res/A1"})}}, cmd{"dispense", left(bench.Args{Volume: 300, Well: "plate/A1"})},
			bench.ErrOverflow, "bench: dispense 300 µL into plate/A1 (left): plate/A1 would hold 400 µL, over its capacity of 360 µL (it holds 100 µL)"},
		{"blowing out over the well's capacity", []cmd{tip, {"aspirate", left(bench.Args{Volume: 300, Well: "res/A1"})}}, cmd{"blow_out", left(bench.Args{Well: "plate/A1"})},
			bench.ErrOverflow, "bench: blow_out into plate/A1 (left): plate/A1 would hold 400 µL, over its capacity of 360 µL (it holds 100 µL)"},
		{"loading over the well's capacity", nil, cmd{"load_liquid", bench.Args{Volume: 400, Well: "plate/B1"}},
			bench.ErrOverflow, "bench: load_liquid 400 µL into plate/B1: plate/B1 would hold 400 µL, over its capacity of 360 µL (it holds 0 µL)"},
		{"no tip", nil, cmd{"aspirate", left(bench.Args{Volume: 50, Well: "res/A1"})},
			bench.ErrNoTip, "bench: aspirate 50 µL from res/A1 (left): no tip on the left pipette (p300_single_gen2)"},
		{"dropping no tip", nil, cmd{"drop_tip", left(bench.Args{})},
			bench.ErrNoTip, "bench: drop_tip (left): no tip on the left pipette (p300_single_gen2)"},
		{"tip already attached", []cmd{tip}, tip,
			bench.ErrTipAttached, "bench: pick_up_tip (left): the left pipette (p300_single_gen2) already has a tip (tips/A1)"},
		{"tip rack empty", emptyRack, tip,
			bench.ErrNoTipLeft, "bench: pick_up_tip (left): no unused tip left in the tip racks (tips) of the left pipette (p300_single_gen2)"},
		{"no column of 8 tips left", append([]cmd{multi}, emptyMultiRack...), multiTip,
			bench.ErrNoTipLeft, "bench: pick_up_tip (right): no column of 8 unused tips left in the tip racks (tips20) of the right pipette (p20_multi_gen2)"},
		{"a named tip already taken", []cmd{tip, {"drop_tip", left(bench.Args{})}}, cmd{"pick_up_tip", left(bench.Args{Well: "tips/A1"})},
			bench.ErrNoTipLeft, "bench: pick_up_tip tips/A1 (left): tips/A1 holds no tip"},
		{"a tip from a plate", nil, cmd{"pick_up_tip", left(bench.Args{Well: "plate/A1"})},
			bench.ErrNoTipLeft, "bench: pick_up_tip plate/A1 (left): plate (corning_96_wellplate_360ul_flat) is not a tip rack"},
		{"a pipette without tip racks", []cmd{{"load_instrument", bench.Args{Instrument: "p20_single_gen2", Mount: "right"}}}, multiTip,
			bench.ErrNoTipLeft, "bench: pick_up_tip (right): the right pipette (p20_single_gen2) has no tip racks: name a tip (tips/A1) or load it with tip racks"},
		{"unknown well", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 50, Well: "plate/Z9"})},
			bench.ErrUnknownWell, `bench: aspirate 50 µL from plate/Z9 (left): plate (corning_96_wellplate_360ul_flat) has no well "Z9" (wells A1…H12)`},
		{"a well without its labware", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 50, Well: "A1"})},
			bench.ErrUnknownWell, `bench: aspirate 50 µL from A1 (left): well "A1" is not labware/well (for example plate/A1 or 1/A1)`},
		{"labware not on the deck", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 50, Well: "foo/A1"})},
			bench.ErrUnknownLabware, `bench: aspirate 50 µL from foo/A1 (left): no labware "foo" on the deck (loaded: plate, res, tips, tips20, tubes)`},
		{"an empty slot", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: 50, Well: "9/A1"})},
			bench.ErrUnknownLabware, `bench: aspirate 50 µL from 9/A1 (left): no labware "9" on the deck (loaded: plate, res, tips, tips20, tubes)`},
		{"slot collision", nil, cmd{"load_labware", bench.Args{LoadName: "nest_12_reservoir_15ml", Slot: "1", Label: "res2"}},
			bench.ErrSlot, "bench: load_labware nest_12_reservoir_15ml in slot 1 as res2: slot 1 is occupied by plate (corning_96_wellplate_360ul_flat)"},
		{"the trash slot", nil, cmd{"load_labware", bench.Args{LoadName: "nest_12_reservoir_15ml", Slot: "12"}},
			bench.ErrSlot, `bench: load_labware nest_12_reservoir_15ml in slot 12: slot "12" is not a deck slot: slots are 1–11 (12 is the fixed trash)`},
		{"slot out of range", nil, cmd{"load_labware", bench.Args{LoadName: "nest_12_reservoir_15ml", Slot: "0"}},
			bench.ErrSlot, `bench: load_labware nest_12_reservoir_15ml in slot 0: slot "0" is not a deck slot: slots are 1–11 (12 is the fixed trash)`},
		{"unknown load name", nil, cmd{"load_labware", bench.Args{LoadName: "corning_384_wellplate", Slot: "6"}},
			bench.ErrUnknownLabware, `bench: load_labware corning_384_wellplate in slot 6: unknown load name "corning_384_wellplate": not one of Opentrons' standard definitions nor a custom one given (the protocol's labware/ folder, --labware DIR, or load_labware_from_definition)`},
		{"a label taken", nil, cmd{"load_labware", bench.Args{LoadName: "nest_12_reservoir_15ml", Slot: "6", Label: "res"}},
			bench.ErrBadArgs, `bench: load_labware nest_12_reservoir_15ml in slot 6 as res: label "res" is already used by slot 2`},
		{"a label like a slot", nil, cmd{"load_labware", bench.Args{LoadName: "nest_12_reservoir_15ml", Slot: "6", Label: "7"}},
			bench.ErrBadArgs, `bench: load_labware nest_12_reservoir_15ml in slot 6 as 7: label "7": a label may not be a number, "trash" or contain "/"`},
		{"8 channels off row A", []cmd{multi, multiTip}, cmd{"aspirate", right(bench.Args{Volume: 10, Well: "plate/B1"})},
			bench.ErrChannels, "bench: aspirate 10 µL from plate/B1 (right): p20_multi_gen2 has 8 channels: address a column by its row A well, not plate/B1"},
		{"8 channels in a 4-row rack", []cmd{multi, multiTip}, cmd{"aspirate", right(bench.Args{Volume: 10, Well: "tubes/A1"})},
			bench.ErrChannels, "bench: aspirate 10 µL from tubes/A1 (right): p20_multi_gen2 has 8 channels: tubes (opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap) has 4 rows, not 8 or 1"},
		{"unknown instrument", nil, cmd{"load_instrument", bench.Args{Instrument: "p50_single_flex", Mount: "right"}},
			bench.ErrInstrument, `bench: load_instrument p50_single_flex on right: unknown instrument "p50_single_flex" (known: p1000_single, p1000_single_gen2, p10_multi, p10_single, p20_multi_gen2, p20_single_gen2, p300_multi, p300_multi_gen2, p300_single, p300_single_gen2, p50_multi, p50_single)`},
		{"unknown mount", nil, cmd{"load_instrument", bench.Args{Instrument: "p20_single_gen2", Mount: "middle"}},
			bench.ErrInstrument, `bench: load_instrument p20_single_gen2 on middle: mount "middle" is not left or right`},
		{"mount taken", nil, cmd{"load_instrument", bench.Args{Instrument: "p20_single_gen2", Mount: "left"}},
			bench.ErrInstrument, "bench: load_instrument p20_single_gen2 on left: the left mount already holds p300_single_gen2"},
		{"tip racks that are not", nil, cmd{"load_instrument", bench.Args{Instrument: "p20_single_gen2", Mount: "right", TipRacks: []string{"plate"}}},
			bench.ErrBadArgs, "bench: load_instrument p20_single_gen2 on right: tip rack plate (corning_96_wellplate_360ul_flat) is not a tip rack"},
		{"no pipette", nil, cmd{"aspirate", right(bench.Args{Volume: 50, Well: "res/A1"})},
			bench.ErrInstrument, "bench: aspirate 50 µL from res/A1 (right): no pipette on the right mount"},
		{"a negative volume", []cmd{tip}, cmd{"aspirate", left(bench.Args{Volume: -5, Well: "res/A1"})},
			bench.ErrBadArgs, "bench: aspirate -5 µL from res/A1 (left): volume -5 µL is not a positive number"},
		{"loading into a tip rack", nil, cmd{"load_liquid", bench.Args{Volume: 10, Well: "tips/A1"}},
			bench.ErrBadArgs, "bench: load_liquid 10 µL into tips/A1: tips (opentrons_96_tiprack_300ul) is a tip rack"},
		{"dispensing into a tip rack", []cmd{tip, {"aspirate", left(bench.Args{Volume: 50, Well: "res/A1"})}}, cmd{"dispense", left(bench.Args{Volume: 50, Well: "tips/B1"})},
			bench.ErrBadArgs, "bench: dispense 50 µL into tips/B1 (left): tips (opentrons_96_tiprack_300ul) is a tip rack"},
		{"unknown command", nil, cmd{"touch_tip", left(bench.Args{})},
			bench.ErrUnknownCommand, `bench: touch_tip (left): unknown command "touch_tip" (known: air_gap, analyze, aspirate, blow_out, configure_nozzle_layout, consolidate, deck, delay, dispense, distribute, drop_tip, hs_close_latch, hs_deactivate_heater, hs_deactivate_shaker, hs_open_latch, hs_set_shake_speed, hs_set_temperature, load_instrument, load_labware, load_liquid, load_module, mag_disengage, mag_engage, mix, note, params, pick_up_tip, protocol, read_plate, reader_initialize, reset_tipracks, return_tip, set_tip_racks, starting_tip, tc_deactivate, tc_lid, tc_profile, tc_set_block, tc_set_lid, temp_deactivate, temp_set, transfer, unload_labware)`},
		{"a transfer running dry", nil, cmd{"transfer", left(bench.Args{Volumes: []float64{50, 50, 50}, Source: []string{"plate/A1"}, Dest: []string{"plate/B1", "plate/C1", "plate/D1"}})},
			bench.ErrWellShort, "bench: transfer 50, 50, 50 µL from plate/A1 to 3 wells (plate/B1…plate/D1) (left), at step 6 of 8, aspirate 50 µL from plate/A1 (left): plate/A1 holds 0 µL, less than the 50 µL to aspirate"},
		{"a transfer overflowing", nil, cmd{"transfer", left(bench.Args{Volume: 300, Source: []string{"res/A1"}, Dest: []string{"plate/A1"}, NewTip: "always"})},
			bench.ErrOverflow, "bench: transfer 300 µL from res/A1 to plate/A1, new tip always (left), at step 3 of 4, dispense 300 µL into plate/A1 (left): plate/A1 would hold 400 µL, over its capacity of 360 µL (it holds 100 µL)"},
		{"a transfer without a tip", nil, cmd{"transfer", left(bench.Args{Volume: 50, Source: []string{"res/A1"}, Dest: []string{"plate/B1"}, NewTip: "never"})},
			bench.ErrNoTip, "bench: transfer 50 µL from res/A1 to plate/B1, new tip never (left): no tip on the left pipette (p300_single_gen2)"},
		{"unknown tip policy", nil, cmd{"transfer", left(bench.Args{Volume: 50, Source: []string{"res/A1"}, Dest: []string{"plate/B1"}, NewTip: "sometimes"})},
			bench.ErrBadArgs, `bench: transfer 50 µL from res/A1 to plate/B1, new tip sometimes (left): new_tip "sometimes" is not always, once or never`},
		{"well lists that do not divide", nil, cmd{"transfer", left(bench.Args{Volume: 50, Source: []string{"res/A1", "res/A2"}, Dest: []string{"plate/B1", "plate/C1", "plate/D1"}})},
			bench.ErrBadArgs, "bench: transfer 50 µL from 2 wells (res/A1…res/A2) to 3 wells (plate/B1…plate/D1) (left): 2 source and 3 dest wells: one count must divide the other"},
		{"volumes that do not match", nil, cmd{"transfer", left(bench.Args{Volumes: []float64{50, 60}, Source: []string{"res/A1"}, Dest: []string{"plate/B1", "plate/C1", "plate/D1"}})},
			bench.ErrBadArgs, "bench: transfer 50, 60 µL from res/A1 to 3 wells (plate/B1…plate/D1) (left): 2 volumes for 3 transfers"},
		{"distribute from two sources", nil, cmd{"distribute", left(bench.Args{Volume: 50, Source: []string{"res/A1", "res/A2"}, Dest: []string{"plate/B1"}})},
			bench.ErrBadArgs, "bench: distribute 50 µL from 2 wells (res/A1…res/A2) to plate/B1 (left): distribute takes one source well, not 2"},
		{"consolidate into two", nil, cmd{"consolidate", left(bench.Args{Volume: 50, Source: []string{"res/A1"}, Dest: []string{"plate/B1", "plate/C1"}})},
			bench.ErrBadArgs, "bench: consolidate 50 µL from res/A1 to 2 wells (plate/B1…plate/C1) (left): consolidate takes one dest well, not 2"},
		{"a mix with no repetitions", []cmd{tip}, cmd{"mix", left(bench.Args{Repetitions: -1, Volume: 50, Well: "plate/A1"})},
			bench.ErrBadArgs, "bench: mix -1 × 50 µL in plate/A1 (left): repetitions -1 is not a positive count"},
		{"a mix larger than the well", []cmd{tip}, cmd{"mix", left(bench.Args{Repetitions: 3, Volume: 150, Well: "plate/A1"})},
			bench.ErrWellShort, "bench: mix 3 × 150 µL in plate/A1 (left), at step 1 of 6, aspirate 150 µL from plate/A1 (left): plate/A1 holds 100 µL, less than the 150 µL to aspirate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeck(t)
			for _, c := range tc.setup {
				do(t, d, c.name, c.args)
			}
			before := d.Snapshot()
			ev, err := d.Do(bench.Command{Name: tc.cmd.name, Args: tc.cmd.args})
			if err == nil {
				t.Fatalf("no error; event %+v", ev)
			}
			if err.Error() != tc.msg {
				t.Errorf("error\n got %s\nwant %s", err, tc.msg)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if diff := cmp.Diff(before, d.Snapshot()); diff != "" {
				t.Errorf("a refused command changed the deck (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCommandErrorLine(t *testing.T) {
	d := testDeck(t)
	_, err := d.Do(bench.Command{Name: "drop_tip", Args: bench.Args{Mount: "left"}, Line: 12})
	var ce *bench.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CommandError", err)
	}
	want := bench.CommandError{Name: "drop_tip", Line: 12, Command: "drop_tip (left)", Problem: "no tip on the left pipette (p300_single_gen2)", Err: bench.ErrNoTip}
	if diff := cmp.Diff(want, *ce, cmpopts.EquateErrors()); diff != "" {
		t.Error(diff)
	}
	if got, want := err.Error(), "bench: line 12: drop_tip (left): no tip on the left pipette (p300_single_gen2)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestContamination(t *testing.T) {
	d := testDeck(t)
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	steps := []struct {
		cmd  cmd
		warn []string
	}{
		{cmd{"aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A2"}}, nil},
		// dispensing into an empty well, and into water, carries only what the tip is meant to
		{cmd{"dispense", bench.Args{Mount: "left", Volume: 50, Well: "plate/B1"}}, nil},
		{cmd{"dispense", bench.Args{Mount: "left", Volume: 50, Well: "plate/A1"}}, nil},
		// back in the glucose: nothing foreign
		{cmd{"aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A2"}}, nil},
		{cmd{"dispense", bench.Args{Mount: "left", Well: "plate/B1"}}, nil},
		// into the NaCl reservoir with a tip that touched glucose
		{cmd{"aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A1"}}, []string{
			"contamination: the left tip from tips/A1 has touched glucose (in res/A2) and enters res/A1, which holds none"}},
		// it carries NaCl on purpose, but glucose too
		{cmd{"dispense", bench.Args{Mount: "left", Well: "plate/C1"}}, []string{
			"contamination: the left tip from tips/A1 has touched glucose (in res/A2) and enters plate/C1, which holds none"}},
		{cmd{"mix", bench.Args{Mount: "left", Repetitions: 3, Volume: 50, Well: "plate/D1"}}, nil},
	}
	do(t, d, "load_liquid", bench.Args{Well: "plate/D1", Volume: 100, Concentrations: map[string]float64{"urea": 1}})
	steps[len(steps)-1].warn = []string{"contamination: the left tip from tips/A1 has touched NaCl (in res/A1) and glucose (in res/A2) and enters plate/D1, which holds none of them"}
	for _, s := range steps {
		ev := do(t, d, s.cmd.name, s.cmd.args)
		if diff := cmp.Diff(s.warn, ev.Warnings); diff != "" {
			t.Errorf("%s %s: warnings (-want +got):\n%s", s.cmd.name, s.cmd.args.Well, diff)
		}
	}
	// a fresh tip touched nothing
	do(t, d, "drop_tip", bench.Args{Mount: "left"})
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	if ev := do(t, d, "aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A1"}); ev.Warnings != nil {
		t.Errorf("a fresh tip warns %q", ev.Warnings)
	}
	tip := d.Snapshot().Pipettes[0].Tips[0]
	if want := []string{"res/A1"}; !cmp.Equal(tip.Touched, want) || !cmp.Equal(tip.Species, []string{"NaCl"}) {
		t.Errorf("fresh tip touched %q species %q, want %q [NaCl]", tip.Touched, tip.Species, want)
	}
}

func TestCommandJSON(t *testing.T) {
	d := testDeck(t)
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	var c bench.Command
	if err := json.Unmarshal([]byte(`{"name":"aspirate","args":{"mount":"left","volume":50,"well":"res/A1"},"line":12}`), &c); err != nil {
		t.Fatal(err)
	}
	ev, err := d.Do(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"aspirate","line":12,"steps":[{"action":"aspirate","mount":"left","well":"res/A1","channels":1,"volume_ul":50}],"volumes_ul":{"res/A1":9950}}`
	if string(b) != want {
		t.Errorf("event\n got %s\nwant %s", b, want)
	}
	if got, want := ev.Steps[0].String(), "aspirate 50 µL from res/A1 (left)"; got != want {
		t.Errorf("step %q, want %q", got, want)
	}
}

func TestAspirateDispense(t *testing.T) {
	d := testDeck(t)
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	do(t, d, "aspirate", bench.Args{Mount: "left", Volume: 250, Well: "res/A1"})
	do(t, d, "dispense", bench.Args{Mount: "left", Volume: 100, Well: "plate/B1"})
	do(t, d, "blow_out", bench.Args{Mount: "left", Well: "plate/C1"})
	do(t, d, "aspirate", bench.Args{Mount: "left", Volume: 150, Well: "plate/C1"})
	ev, err := d.Do(bench.Command{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: 20, Well: "plate/C1"}})
	if err == nil {
		t.Fatalf("aspirating an empty well: %+v", ev)
	}
	do(t, d, "blow_out", bench.Args{Mount: "left"})                   // into the trash
	do(t, d, "aspirate", bench.Args{Mount: "left", Well: "res/A1"})   // no volume: all the tip takes
	do(t, d, "dispense", bench.Args{Mount: "left", Well: "tubes/A1"}) // no volume: all it holds
	do(t, d, "drop_tip", bench.Args{Mount: "left"})
	s := d.Snapshot()
	near := cmp.Comparer(func(a, b float64) bool { return a == b || abs(a-b) <= 1e-12*max(abs(a), abs(b)) })
	want := map[string]bench.Contents{
		"A1": {Volume: 100},
		"B1": {Volume: 100, Species: map[string]float64{"NaCl": 10}}, // 100 µL × 0.1 M = 10 µmol
	}
	if diff := cmp.Diff(want, s.Labware[0].Wells, near); diff != "" {
		t.Errorf("plate wells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(bench.Contents{Volume: 150, Species: map[string]float64{"NaCl": 15}}, s.Trash, near); diff != "" {
		t.Errorf("trash (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(bench.Contents{Volume: 9450, Species: map[string]float64{"NaCl": 945}}, s.Labware[1].Wells["A1"], near); diff != "" {
		t.Errorf("res/A1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(bench.Contents{Volume: 300, Species: map[string]float64{"NaCl": 30}}, s.Labware[4].Wells["A1"], near); diff != "" {
		t.Errorf("tubes/A1 (-want +got):\n%s", diff)
	}
	if s.TrashedTips != 1 || len(s.Labware[2].Fresh) != 95 || s.Labware[2].Fresh[0] != "B1" {
		t.Errorf("trashed %d tips, %d fresh from %v; want 1, 95 from B1", s.TrashedTips, len(s.Labware[2].Fresh), s.Labware[2].Fresh[:1])
	}
}

func abs(x float64) float64 { return max(x, -x) }

func TestMultiChannel(t *testing.T) {
	d := testDeck(t)
	if err := d.LoadInstrument("p20_multi_gen2", "right", "tips20"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "pick_up_tip", bench.Args{Mount: "right", Well: "tips20/A3"})
	ev := do(t, d, "aspirate", bench.Args{Mount: "right", Volume: 15, Well: "res/A1"})
	if got, want := ev.Steps[0].String(), "aspirate 120 µL from res/A1 (right, 8 channels)"; got != want {
		t.Errorf("step %q, want %q", got, want)
	}
	do(t, d, "dispense", bench.Args{Mount: "right", Volume: 15, Well: "plate/A2"})
	do(t, d, "return_tip", bench.Args{Mount: "right"})
	s := d.Snapshot()
	for _, w := range []string{"A2", "B2", "C2", "D2", "E2", "F2", "G2", "H2"} {
		if c := s.Labware[0].Wells[w]; abs(c.Volume-15) > 1e-12 || abs(c.Species["NaCl"]-1.5) > 1e-12 {
			t.Errorf("plate/%s holds %+v, want 15 µL and 1.5 µmol NaCl", w, c)
		}
	}
	if v := s.Labware[1].Wells["A1"].Volume; v != 10000-120 {
		t.Errorf("res/A1 holds %v µL, want %v", v, 10000-120)
	}
	racks := s.Labware[3]
	if len(racks.Fresh) != 88 || len(racks.Returned) != 8 || racks.Returned["H3"].Origin != "tips20/H3" || !racks.Returned["H3"].Used {
		t.Errorf("tips20: %d fresh, returned %+v", len(racks.Fresh), racks.Returned)
	}
	// the next pick-up takes the first column of unused tips
	ev = do(t, d, "pick_up_tip", bench.Args{Mount: "right"})
	if got := ev.Steps[0].Well; got != "tips20/A1" {
		t.Errorf("next column from %s, want tips20/A1", got)
	}
}

func TestRun(t *testing.T) {
	d := testDeck(t)
	cmds := []bench.Command{
		{Name: "pick_up_tip", Args: bench.Args{Mount: "left"}, Line: 3},
		{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: 50, Well: "res/A1"}, Line: 4},
		{Name: "dispense", Args: bench.Args{Mount: "left", Volume: 60, Well: "plate/B1"}, Line: 5},
		{Name: "drop_tip", Args: bench.Args{Mount: "left"}, Line: 6},
	}
	evs, err := d.Run(context.Background(), cmds)
	if len(evs) != 2 || err == nil || !strings.HasPrefix(err.Error(), "bench: line 5: dispense 60 µL") {
		t.Errorf("Run: %d events, error %v; want 2 and line 5", len(evs), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	evs, err = d.Clone().Run(ctx, cmds)
	if len(evs) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: %d events, %v", len(evs), err)
	}
}
