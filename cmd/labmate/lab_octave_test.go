package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// octaveRowsProtocol is rowsProtocol in Octave: a script of the bench functions.
const octaveRowsProtocol = `## colour every other row
plate = load_labware ("corning_96_wellplate_360ul_flat", 1, "plate");
reservoir = load_labware ("nest_12_reservoir_15ml", 2, "res");
tips = load_labware ("opentrons_96_tiprack_300ul", 3);
p300 = load_instrument ("p300_single_gen2", "left", tips);
load_liquid (reservoir.wells.A1, 10000, define_liquid ("tartrazine", "yellow dye", "#ffd700", {"tartrazine", 0.001}));
for r = 1:2:numel (plate.rows)
  transfer (p300, 100, reservoir.wells.A1, plate.rows{r});
endfor
`

// lab simulate runs an Octave protocol (.m) as it runs a Python one: the same commands with
// the script's lines and the same plate maps, on a fresh twin.
func TestLabSimulateOctave(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "colour.m", octaveRowsProtocol)
	out, errOut, code := labmate(t, dir, "", "lab", "simulate", "colour.m")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	full := "100.0" + strings.Repeat(" 100.0", 11)
	empty := strings.TrimSpace(strings.Repeat("     .", 12))
	for _, want := range []string{"A " + full, "B     " + empty, "C " + full, "H     " + empty, "A 5200.0" + strings.Repeat("      .", 11),
		"   9  line 8: transfer 100 µL from res/A1 to 12 wells (plate/G1…plate/G12), new tip once (left)"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".labmate")); !os.IsNotExist(err) {
		t.Errorf("simulate left %s/.labmate behind (%v)", dir, err)
	}
	// From stdin, named by --language; a language that is not one is refused by name.
	if in, _, code := labmate(t, dir, octaveRowsProtocol, "lab", "simulate", "--language", "octave", "-"); code != 0 || !strings.Contains(in, "C "+full+"\n") {
		t.Errorf("lab simulate --language octave - : exit %d\n%s", code, in)
	}
	if _, errOut, code := labmate(t, dir, "", "lab", "simulate", "--kernel", "julia", "colour.m"); code != 2 || !strings.Contains(errOut, `--kernel "julia": choose python or octave`) {
		t.Errorf("--kernel julia: exit %d: %s", code, errOut)
	}
}

// A wrong Octave protocol fails simulation with exit status 1, naming the line Octave
// reports: the twin's refusal, Octave's own error, an Opentrons name the twin lacks.
func TestLabSimulateWrongOctave(t *testing.T) {
	setup := octaveRowsProtocol[:strings.Index(octaveRowsProtocol, "for r")] + "pick_up_tip (p300);\n" // lines 1–7
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"over-volume", "aspirate (p300, 200, reservoir.wells.A1);\n\naspirate (p300, 200, reservoir.wells.A1);\n",
			"error: bench: line 10: aspirate 200 µL from res/A1 (left): the tip (3/A1) holds 200 µL; 200 µL more exceeds its capacity of 300 µL\n", 1},
		{"octave error", "x = plate.rows{9};\n", "error: line 8: plate(9): out of bound 8", 1},
		{"unsupported", "air_gap (p300, 10);\n", "error: line 8: air_gap is not supported by labmate's bench twin", 1},
		{"contamination", "load_liquid (reservoir.wells.A2, 1000, \"blue\");\naspirate (p300, 100, reservoir.wells.A1);\ndispense (p300, 100, plate.wells.A1);\naspirate (p300, 50, reservoir.wells.A2);\n",
			"warning (line 11): contamination: the left tip from 3/A1 has touched tartrazine", 0},
		{"wrong rows", "drop_tip (p300);\nm = load_instrument (\"p300_multi_gen2\", \"right\", tips);\ntransfer (m, 50, reservoir.wells.A1, plate.rows{2});\n",
			"error: bench: line 10: transfer 50 µL from res/A1 to 12 wells (plate/B1…plate/B12), new tip once (right), at step 3 of 26, dispense 50 µL into plate/B1 (right): p300_multi_gen2 has 8 channels: address a column by its row A well, not plate/B1\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "p.m", setup+tc.body)
			out, errOut, code := labmate(t, dir, "", "lab", "simulate", "p.m")
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d and %q in\n%s\n%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// lab run of an Octave protocol works on the workspace's bench and keeps it: a Python
// protocol run next continues it, and lab show prints both.
func TestLabRunOctaveThenPython(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "colour.m", octaveRowsProtocol)
	if out, errOut, code := labmate(t, dir, "", "lab", "run", "colour.m"); code != 0 {
		t.Fatalf("run rows.m: exit %d\n%s\n%s", code, out, errOut)
	}
	write(t, dir, "more.py", `metadata = {"apiLevel": "2.13"}

def run(protocol):
    plate, res = protocol.loaded_labwares[1], protocol.loaded_labwares[2]
    p = protocol.load_instrument("p300_single_gen2", "right", tip_racks=[protocol.loaded_labwares[3]])
    p.transfer(50, res["A1"], plate["B1"])
`)
	if out, errOut, code := labmate(t, dir, "", "lab", "run", "more.py"); code != 0 {
		t.Fatalf("run more.py: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := labmate(t, dir, "", "lab", "show")
	if code != 0 || !strings.Contains(out, "A 100.0"+strings.Repeat(" 100.0", 11)+"\n") || !strings.Contains(out, "B  50.0     .") {
		t.Fatalf("show: exit %d\n%s\n%s", code, out, errOut)
	}
}

// The Octave functions' telemetry is what --watch bounds: perception stops the protocol.
func TestLabSimulateOctaveWatch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "colour.m", octaveRowsProtocol)
	out, errOut, code := labmate(t, dir, "", "lab", "simulate", "--watch", "vol_plate_A5 <= 50", "colour.m")
	if code != 1 || !strings.Contains(out, `error: perception stopped it: watch "vol_plate_A5 <= 50" violated: vol_plate_A5 = 100`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
