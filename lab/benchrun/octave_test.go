package benchrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/benchrun"
)

// octaveRows is an Octave protocol colouring every other row of a plate.
const octaveRows = `## colour every other row
plate = load_labware ("corning_96_wellplate_360ul_flat", 1, "plate");
res = load_labware ("nest_12_reservoir_15ml", 2, "res");
tips = load_labware ("opentrons_96_tiprack_300ul", 3);
p = load_instrument ("p300_single_gen2", "left", tips);
load_liquid (res.wells.A1, 10000, struct ("tartrazine", 0.001));
for r = 1:2:numel (plate.rows)
  transfer (p, 100, res.wells.A1, plate.rows{r});
endfor
`

func TestSimulateOctaveProtocol(t *testing.T) {
	rep, err := benchrun.Simulate(context.Background(), octaveRows, &benchrun.Options{Start: starter(t), Kernel: benchrun.Octave})
	if err != nil {
		t.Fatal(err)
	}
	text, err := rep.Text()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure != "" {
		t.Fatalf("failed: %s\n%s", rep.Failure, text)
	}
	full := "100.0" + strings.Repeat(" 100.0", 11)
	empty := strings.TrimSpace(strings.Repeat("     .", 12))
	for _, want := range []string{"A " + full, "B     " + empty, "G " + full, "H     " + empty,
		"   9  line 8: transfer 100 µL from res/A1 to 12 wells (plate/G1…plate/G12), new tip once (left)"} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no line %q in\n%s", want, text)
		}
	}
}

// A wrong Octave protocol fails simulation naming its line, whether the twin refuses a
// command, Octave itself fails, or the protocol uses an Opentrons name the twin lacks.
func TestSimulateWrongOctaveProtocol(t *testing.T) {
	setup := octaveRows[:strings.Index(octaveRows, "for r")] + "pick_up_tip (p);\n" // lines 1–7
	for _, tc := range []struct{ name, body, want string }{
		{"over-volume", "aspirate (p, 100, res.wells.A1);\naspirate (p, 400, res.wells.A1);\n",
			"bench: line 9: aspirate 400 µL from res/A1 (left): 400 µL is above the maximum volume of p300_single_gen2 (300 µL)"},
		{"no such well", "dispense (p, 0, wells (plate, \"A1\"));\n\ndispense (p, 10, wells (plate, \"Z1\"));\n", "line 10: wells: plate has no well 'Z1'"},
		{"unsupported", "\nair_gap (p, 10);\n", "line 9: air_gap is not supported by labmate's bench twin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := benchrun.Simulate(context.Background(), setup+tc.body, &benchrun.Options{Start: starter(t), Kernel: benchrun.Octave})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rep.Failure, tc.want) {
				text, _ := rep.Text()
				t.Errorf("failure %q, want it to start with %q\n%s", rep.Failure, tc.want, text)
			}
		})
	}
}

// simulate_protocol takes an Octave protocol as the agent and MCP clients send it.
func TestSimulateProtocolToolOctave(t *testing.T) {
	ts := benchrun.Tools(&benchrun.ToolsOptions{Start: starter(t), Workspace: func(context.Context) (string, error) { return "", nil }})
	code, _ := json.Marshal(octaveRows)
	res := call(t, ts[0], `{"language": "octave", "code": `+string(code)+`}`)
	s, ok := res.Data.(*benchrun.Summary)
	if res.IsError || !ok || !s.OK || len(s.Commands) != 9 || s.Commands[8].Command.Line != 8 {
		t.Fatalf("simulate_protocol: %+v", res)
	}
	if want := "C 100.0" + strings.Repeat(" 100.0", 11) + "\n"; !strings.Contains(s.PlateMaps["plate"], want) {
		t.Errorf("no row C of 100 µL in\n%s", res.Content)
	}
	if res = call(t, ts[0], `{"language": "julia", "code": "x = 1"}`); !res.IsError || !strings.Contains(res.Content, "python or octave") {
		t.Errorf("a Julia protocol: %+v", res)
	}
}

// An Octave protocol drives the modules with the Python module's names; each is a command of
// the report at its line.
func TestSimulateOctaveModules(t *testing.T) {
	code := `hs = load_module ("heaterShakerModuleV1", 4);
plate = load_labware ("corning_96_wellplate_360ul_flat", hs, "plate");
load_liquid (plate.wells.A1, 200, {"tartrazine", 5e-5});
close_labware_latch (hs);
set_and_wait_for_temperature (hs, 37);
set_and_wait_for_shake_speed (hs, 500);
delay (0, 10);
deactivate_shaker (hs);
reader = load_module ("absorbanceReaderV1", 7);
initialize (reader, "single", 426);
r = read (reader, plate);
rd = load_labware ("corning_96_wellplate_360ul_flat", reader, "rd");
r2 = read (reader);
if (! strcmp (r2.wells{1}, "rd/A1") || r.od_by_well.A1 <= 0.5 || r2.od(1) > 0.01)
  error ("the readings: %g %g", r.od_by_well.A1, r2.od(1));
endif
`
	rep, err := benchrun.Simulate(context.Background(), code, &benchrun.Options{Start: starter(t), Kernel: benchrun.Octave})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure != "" {
		t.Fatal(rep.Failure)
	}
	var got []string
	for _, e := range rep.Entries {
		got = append(got, fmt.Sprintf("%d %s", e.Command.Line, e.Command.Name))
	}
	want := "1 load_module,2 load_labware,3 load_liquid,4 hs_close_latch,5 hs_set_temperature,6 hs_set_shake_speed,7 delay," +
		"8 hs_deactivate_shaker,9 load_module,10 reader_initialize,11 read_plate,12 load_labware,13 deck,13 read_plate"
	if strings.Join(got, ",") != want {
		t.Errorf("commands %s\nwant %s", strings.Join(got, ","), want)
	}
}

// An Octave protocol may be written as Opentrons' def run(protocol): a function run
// (protocol), called with the context-level functions as fields; its lines stay the file's.
func TestSimulateOctaveRunFunction(t *testing.T) {
	code := `function run (protocol)
  plate = protocol.load_labware ("corning_96_wellplate_360ul_flat", 1, "plate");
  res = protocol.load_labware ("nest_12_reservoir_15ml", 2, "res");
  tips = protocol.load_labware ("opentrons_96_tiprack_300ul", 3);
  p = protocol.load_instrument ("p300_single_gen2", "left", tips);
  protocol.load_liquid (res.wells.A1, 10000, protocol.define_liquid ("tartrazine"));
  for r = 1:2:8
    transfer (p, 100, res.wells.A1, plate.rows{r});
  endfor
  transfer (p, VOLUME, res.wells.A1, plate.wells.B1);
endfunction
`
	for _, tc := range []struct{ volume, failure string }{
		{"50", ""},
		{"400", "bench: line 10: transfer 400 µL from res/A1 to plate/B1, new tip once (left), at step 5 of 6, dispense 200 µL into plate/B1 (left): plate/B1 would hold 400 µL, over its capacity of 360 µL"},
	} {
		rep, err := benchrun.Simulate(context.Background(), strings.Replace(code, "VOLUME", tc.volume, 1), &benchrun.Options{Start: starter(t), Kernel: benchrun.Octave})
		if err != nil {
			t.Fatal(err)
		}
		text, _ := rep.Text()
		if !strings.HasPrefix(rep.Failure, tc.failure) || (tc.failure == "") != (rep.Failure == "") {
			t.Errorf("volume %s: failure %q, want %q…\n%s", tc.volume, rep.Failure, tc.failure, text)
		}
		if tc.failure == "" && (!strings.Contains(text, "G 100.0"+strings.Repeat(" 100.0", 11)+"\n") || !strings.Contains(text, "B  50.0     .")) {
			t.Errorf("the plate:\n%s", text)
		}
	}
}
