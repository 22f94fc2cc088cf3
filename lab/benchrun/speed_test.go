package benchrun_test

import (
	"context"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/benchrun"
)

const twoThousand = `metadata = {"apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 3, "tips")
    p = ctx.load_instrument("p20_single_gen2", "left", tip_racks=[tips])
    p.pick_up_tip()
    for i in range(999):
        p.aspirate(1, res["A1"])
        p.dispense(1, plate.wells()[i % 96])
    p.drop_tip()
`

const empty = `metadata = {"apiLevel": "2.13"}


def run(ctx):
    pass
`

// A 2,000-command protocol costs the twin under 5 s beyond starting the kernel.
func TestTwoThousandCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	start := starter(t)
	timed := func(code string) (time.Duration, *benchrun.Report) {
		t0 := time.Now()
		rep, err := benchrun.Simulate(context.Background(), code, &benchrun.Options{Start: start})
		if err != nil || rep.Failure != "" {
			t.Fatalf("%v %+v", err, rep)
		}
		return time.Since(t0), rep
	}
	base, _ := timed(empty)
	d, rep := timed(twoThousand)
	n := len(rep.Entries)
	if n < 2000 {
		t.Fatalf("%d commands", n)
	}
	twin := d - base
	t.Logf("%d commands in %v (kernel start and an empty protocol: %v): %.0f commands/s", n, d, base, float64(n)/twin.Seconds())
	if twin > 5*time.Second {
		t.Errorf("%d commands took %v beyond the kernel's start, over 5 s", n, twin)
	}
	if v := benchrun.Protocol(rep.Deck).Wells["plate/A1"]; v != 11 {
		t.Errorf("plate/A1 %g µL, want 11 (999 dispenses of 1 µL over 96 wells: A1 gets i = 0, 96, …, 960)", v)
	}
}
