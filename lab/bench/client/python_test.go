package client_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
)

// labmate.bench() is the session's bench: what one cell loads and fills, the next one uses,
// and each command's well volumes arrive as telemetry.
func TestPythonPersistsAcrossCells(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	d := serveBench(t, opts.Workspace)
	k, err := python.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	cells := []string{`import labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
tips = protocol.load_labware("opentrons_96_tiprack_300ul", 2)
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
plate["A1"].load_liquid(protocol.define_liquid("dye"), 200)`,
		`p.transfer(50, plate["A1"], plate.columns()[1][:2])
labmate.bench() is protocol`}
	var last *kerneltest.Result
	for i, c := range cells {
		if last = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: c}); last.Res == nil || last.Res.Status != "ok" {
			t.Fatalf("cell %d: %s", i+1, last.Output())
		}
	}
	if !strings.Contains(last.Output(), "True") {
		t.Errorf("labmate.bench() is another context in the second cell:\n%s", last.Output())
	}
	k.Close()
	for well, want := range map[string]float64{"plate/A1": 100, "plate/A2": 50, "plate/B2": 50} {
		if c, err := d.Well(well); err != nil || c.Volume != want {
			t.Errorf("%s holds %v µL (%v), want %v", well, c.Volume, err, want)
		}
	}
	series := last.Series()
	if got := series["vol_plate_A1"]; len(got) == 0 || got[len(got)-1] != 100 {
		t.Errorf("vol_plate_A1 telemetry %v, want it to end at 100 (all: %v)", got, series)
	}
	onProtocolClock(t, last.Times("vol_plate_A1"))
}

// onProtocolClock checks that samples are on the protocol's clock: every one has a time, and
// the commands move it on.
func onProtocolClock(t *testing.T, ts []float64) {
	t.Helper()
	for i, x := range ts {
		if math.IsNaN(x) || i > 0 && x <= ts[i-1] {
			t.Errorf("sample times %v: want each on the protocol's clock, later than the one before", ts)
			return
		}
	}
}

// BenchmarkPythonCommands is the bench's commands per second through the Python module, the
// same commands as the Octave kernel's benchmark.
func BenchmarkPythonCommands(b *testing.B) {
	opts := testutil.KernelOptions(b)
	opts.Workspace = b.TempDir()
	serveBench(b, opts.Workspace)
	k, err := python.Start(context.Background(), &opts)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	benchCommands(b, k, `import labmate
protocol = labmate.bench()
res = protocol.load_labware("nest_12_reservoir_15ml", 3, "res")
tips = protocol.load_labware("opentrons_96_tiprack_300ul", 2)
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
res["A1"].load_liquid(protocol.define_liquid("tartrazine"), 10000)
p.pick_up_tip()`, `for i in range(250):
    p.aspirate(20, res["A1"]); p.dispense(20, res["A2"]); p.aspirate(20, res["A2"]); p.dispense(20, res["A1"])`, 1000)
}
