package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/bench"
)

// BenchmarkDo is the cost of one command: aspirate/dispense pairs moving 10 µL (per channel)
// back and forth between two wells, or two columns for 8 channels.
func BenchmarkDo(b *testing.B) {
	for _, bc := range []struct {
		name, pipette, rack, from, to string
	}{
		{"single", "p300_single_gen2", "opentrons_96_tiprack_300ul", "plate/A1", "plate/B1"},
		{"8-channel", "p20_multi_gen2", "opentrons_96_tiprack_20ul", "plate/A1", "plate/A2"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := bench.NewDeck()
			for _, l := range [][2]string{{"corning_96_wellplate_360ul_flat", "1"}, {bc.rack, "2"}} {
				if err := d.LoadLabware(l[0], l[1], map[string]string{"1": "plate", "2": "tips"}[l[1]]); err != nil {
					b.Fatal(err)
				}
			}
			if err := d.LoadInstrument(bc.pipette, "left", "tips"); err != nil {
				b.Fatal(err)
			}
			for _, col := range []string{"1", "2"} {
				for _, row := range "ABCDEFGH" {
					do(b, d, "load_liquid", bench.Args{Well: fmt.Sprintf("plate/%c%s", row, col), Volume: 200, Concentrations: map[string]float64{"NaCl": 0.1, "dye": 0.001}})
				}
			}
			do(b, d, "pick_up_tip", bench.Args{Mount: "left"})
			v := 20.0
			if bc.pipette == "p20_multi_gen2" {
				v = 10
			}
			cmds := []bench.Command{
				{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: v, Well: bc.from}},
				{Name: "dispense", Args: bench.Args{Mount: "left", Volume: v, Well: bc.to}},
				{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: v, Well: bc.to}},
				{Name: "dispense", Args: bench.Args{Mount: "left", Volume: v, Well: bc.from}},
			}
			b.ReportAllocs()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				if _, err := d.Do(cmds[i%len(cmds)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cmds/s")
		})
	}
}

// protocolDeck is a deck set up for protocol1000: two plates, a reservoir, two tip racks, a
// p300 single-channel on the left and a p20 8-channel on the right.
func protocolDeck(tb testing.TB) *bench.Deck {
	tb.Helper()
	d := bench.NewDeck()
	for _, l := range [][3]string{
		{"corning_96_wellplate_360ul_flat", "1", "plate"},
		{"corning_96_wellplate_360ul_flat", "2", "plate2"},
		{"nest_12_reservoir_15ml", "3", "res"},
		{"opentrons_96_tiprack_300ul", "4", "tips"},
		{"opentrons_96_tiprack_300ul", "5", "tips2"},
		{"opentrons_96_tiprack_20ul", "6", "tips20"},
	} {
		if err := d.LoadLabware(l[0], l[1], l[2]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := d.LoadInstrument("p300_single_gen2", "left", "tips", "tips2"); err != nil {
		tb.Fatal(err)
	}
	if err := d.LoadInstrument("p20_multi_gen2", "right", "tips20"); err != nil {
		tb.Fatal(err)
	}
	return d
}

// protocol1000 is a 1,000-command protocol: reagents into the reservoir, a serial dilution
// down each column of plate2 with the 8-channel, then per well of plate a tip, a reagent, a
// split into both plates, a mix, a blow-out and a new tip, and a few distributes.
func protocol1000() []bench.Command {
	var p []bench.Command
	add := func(name string, a bench.Args) { p = append(p, bench.Command{Name: name, Args: a, Line: len(p) + 1}) }
	for i, s := range []string{"NaCl", "glucose", "tartrazine", "allura_red"} {
		add("load_liquid", bench.Args{Well: fmt.Sprintf("res/A%d", i+1), Volume: 14000, Concentrations: map[string]float64{s: 0.01 * float64(i+1)}})
	}
	add("load_liquid", bench.Args{Well: "res/A5", Volume: 14000})
	add("transfer", bench.Args{Mount: "right", Volume: 100, Source: []string{"res/A5"}, Dest: []string{"plate2/A2", "plate2/A3", "plate2/A4", "plate2/A5", "plate2/A6"}})
	add("transfer", bench.Args{Mount: "right", Volume: 200, Source: []string{"res/A3"}, Dest: []string{"plate2/A1"}})
	add("pick_up_tip", bench.Args{Mount: "right"})
	for c := 1; c < 6; c++ {
		from, to := fmt.Sprintf("plate2/A%d", c), fmt.Sprintf("plate2/A%d", c+1)
		add("aspirate", bench.Args{Mount: "right", Volume: 20, Well: from})
		add("dispense", bench.Args{Mount: "right", Volume: 20, Well: to})
		add("mix", bench.Args{Mount: "right", Repetitions: 3, Volume: 15, Well: to})
		add("blow_out", bench.Args{Mount: "right", Well: to})
	}
	add("drop_tip", bench.Args{Mount: "right"})
	for i := 0; len(p) < 990; i++ {
		well := fmt.Sprintf("%c%d", "ABCDEFGH"[i%8], 1+(i/8)%12)
		add("pick_up_tip", bench.Args{Mount: "left"})
		add("aspirate", bench.Args{Mount: "left", Volume: 100, Well: fmt.Sprintf("res/A%d", 1+i%4)})
		add("dispense", bench.Args{Mount: "left", Volume: 50, Well: "plate/" + well})
		add("dispense", bench.Args{Mount: "left", Volume: 50, Well: "plate2/" + fmt.Sprintf("%c%d", "ABCDEFGH"[i%8], 7+(i/8)%6)})
		add("mix", bench.Args{Mount: "left", Repetitions: 2, Volume: 30, Well: "plate/" + well})
		add("blow_out", bench.Args{Mount: "left", Well: "plate/" + well})
		add("drop_tip", bench.Args{Mount: "left"})
	}
	for len(p) < 1000 {
		add("distribute", bench.Args{Mount: "right", Volume: 5, Source: []string{"res/A5"}, Dest: []string{"plate2/A7", "plate2/A8", "plate2/A9"}})
	}
	return p
}

func TestProtocol1000(t *testing.T) {
	d := protocolDeck(t)
	p := protocol1000()
	evs, err := d.Run(context.Background(), p)
	if err != nil {
		t.Fatalf("after %d commands: %v", len(evs), err)
	}
	if len(p) != 1000 || len(evs) != 1000 {
		t.Fatalf("%d commands, %d events", len(p), len(evs))
	}
	balanced(t, d, p[len(p)-1])
}

// BenchmarkProtocol is the time to simulate protocol1000 on a fresh clone of a set-up deck.
func BenchmarkProtocol(b *testing.B) {
	base := protocolDeck(b)
	p := protocol1000()
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := base.Clone().Run(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(p))/time.Since(start).Seconds(), "cmds/s")
}
