package bench_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab/bench"
)

func steps(ev *bench.Event) []string {
	var s []string
	for _, st := range ev.Steps {
		s = append(s, st.String())
	}
	return s
}

func TestPlans(t *testing.T) {
	tests := []struct {
		name string
		cmd  cmd
		want []string
	}{
		{"a volume above the tip split as Opentrons does", cmd{"transfer", bench.Args{Mount: "left", Volume: 700, Source: []string{"res/A1"}, Dest: []string{"tubes/A2"}}}, []string{
			"pick_up_tip from tips/A1 (left)",
			"aspirate 300 µL from res/A1 (left)", "dispense 300 µL into tubes/A2 (left)",
			"aspirate 200 µL from res/A1 (left)", "dispense 200 µL into tubes/A2 (left)",
			"aspirate 200 µL from res/A1 (left)", "dispense 200 µL into tubes/A2 (left)",
			"drop_tip into trash (left)",
		}},
		{"the shorter list repeated, a new tip each time", cmd{"transfer", bench.Args{Mount: "left", Volumes: []float64{20, 30, 40, 0}, NewTip: "always",
			Source: []string{"res/A1", "res/A2"}, Dest: []string{"plate/B1", "plate/C1", "plate/D1", "plate/E1"}}}, []string{
			"pick_up_tip from tips/A1 (left)", "aspirate 20 µL from res/A1 (left)", "dispense 20 µL into plate/B1 (left)", "drop_tip into trash (left)",
			"pick_up_tip from tips/B1 (left)", "aspirate 30 µL from res/A1 (left)", "dispense 30 µL into plate/C1 (left)", "drop_tip into trash (left)",
			"pick_up_tip from tips/C1 (left)", "aspirate 40 µL from res/A2 (left)", "dispense 40 µL into plate/D1 (left)", "drop_tip into trash (left)",
		}},
		{"distribute with a disposal volume", cmd{"distribute", bench.Args{Mount: "left", Volume: 50, Source: []string{"res/A1"},
			Dest: []string{"plate/B1", "plate/C1", "plate/D1", "plate/E1", "plate/F1", "plate/G1", "plate/H1", "plate/A2"}}}, []string{
			"pick_up_tip from tips/A1 (left)",
			"aspirate 270 µL from res/A1 (left)",
			"dispense 50 µL into plate/B1 (left)", "dispense 50 µL into plate/C1 (left)", "dispense 50 µL into plate/D1 (left)",
			"dispense 50 µL into plate/E1 (left)", "dispense 50 µL into plate/F1 (left)",
			"blow_out 20 µL into trash (left)",
			"aspirate 170 µL from res/A1 (left)",
			"dispense 50 µL into plate/G1 (left)", "dispense 50 µL into plate/H1 (left)", "dispense 50 µL into plate/A2 (left)",
			"blow_out 20 µL into trash (left)",
			"drop_tip into trash (left)",
		}},
		{"consolidate", cmd{"consolidate", bench.Args{Mount: "left", Volume: 100, Source: []string{"tubes/A1", "tubes/B1", "tubes/C1", "tubes/D1"}, Dest: []string{"res/A3"}}}, []string{
			"pick_up_tip from tips/A1 (left)",
			"aspirate 100 µL from tubes/A1 (left)", "aspirate 100 µL from tubes/B1 (left)", "aspirate 100 µL from tubes/C1 (left)",
			"dispense 300 µL into res/A3 (left)",
			"aspirate 100 µL from tubes/D1 (left)",
			"dispense 100 µL into res/A3 (left)",
			"drop_tip into trash (left)",
		}},
		{"mix", cmd{"mix", bench.Args{Mount: "left", Repetitions: 2, Volume: 40, Well: "plate/A1"}}, []string{
			"aspirate 40 µL from plate/A1 (left)", "dispense 40 µL into plate/A1 (left)",
			"aspirate 40 µL from plate/A1 (left)", "dispense 40 µL into plate/A1 (left)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeck(t)
			for _, w := range []string{"tubes/A1", "tubes/B1", "tubes/C1", "tubes/D1"} {
				do(t, d, "load_liquid", bench.Args{Well: w, Volume: 1000})
			}
			if tc.cmd.name == "mix" {
				do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
			}
			before := d.Totals()
			ev := do(t, d, tc.cmd.name, tc.cmd.args)
			if diff := cmp.Diff(tc.want, steps(ev)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, d.Totals(), cmp.Comparer(func(a, b float64) bool { return abs(a-b) <= 1e-12*max(abs(a), abs(b)) })); diff != "" {
				t.Errorf("liquid not conserved (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMultiChannelTransfer(t *testing.T) {
	d := testDeck(t)
	if err := d.LoadInstrument("p20_multi_gen2", "right", "tips20"); err != nil {
		t.Fatal(err)
	}
	ev := do(t, d, "transfer", bench.Args{Mount: "right", Volume: 30, Source: []string{"res/A2"}, Dest: []string{"plate/A3", "plate/A4"}})
	want := []string{
		"pick_up_tip from tips20/A1 (right, 8 channels)",
		"aspirate 120 µL from res/A2 (right, 8 channels)", "dispense 120 µL into plate/A3 (right, 8 channels)",
		"aspirate 120 µL from res/A2 (right, 8 channels)", "dispense 120 µL into plate/A3 (right, 8 channels)",
		"aspirate 120 µL from res/A2 (right, 8 channels)", "dispense 120 µL into plate/A4 (right, 8 channels)",
		"aspirate 120 µL from res/A2 (right, 8 channels)", "dispense 120 µL into plate/A4 (right, 8 channels)",
		"drop_tip into trash (right, 8 channels)",
	}
	if diff := cmp.Diff(want, steps(ev)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	wells := d.Snapshot().Labware[0].Wells
	for _, col := range []string{"3", "4"} {
		for _, row := range "ABCDEFGH" {
			w := string(row) + col
			if c := wells[w]; abs(c.Volume-30) > 1e-9 || abs(c.Species["glucose"]-15) > 1e-9 {
				t.Errorf("plate/%s holds %+v, want 30 µL and 15 µmol glucose", w, c)
			}
		}
	}
}
