package benchrun_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/labmate/labmate/lab/benchrun"
)

// wellsOf is the same volume in each of the wells "labware/A1"… given by their names.
func wellsOf(into map[string]float64, lw string, v float64, names ...string) map[string]float64 {
	if into == nil {
		into = map[string]float64{}
	}
	for _, n := range names {
		into[lw+"/"+n] = v
	}
	return into
}

// columnOrder is the first n wells of a plate with rows rows, in Opentrons' order (down each
// column, then the next).
func columnOrder(rows, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%c%d", 'A'+i%rows, i/rows+1))
	}
	return out
}

// libraryStyle is a protocol of testdata/protocols (written for labmate in the Protocol
// Library's style: fields.json, labware/) and its hand calculation: the volume of every well
// holding liquid at the end, the tips used per rack, the liquid assumed loaded by hand, and a
// lower bound of the protocol time.
type libraryStyle struct {
	name       string
	wells      map[string]float64
	tips       map[string]int
	userLoaded float64
	minSeconds float64
}

func libraryStyleProtocols() []libraryStyle {
	pcr24 := columnOrder(8, 24)
	elisa := map[string]float64{}
	for _, w := range columnOrder(8, 48) {
		elisa["plate/"+w] = 150 // 100 coat − 100 + 2 × (150 − 150) wash + 100 substrate + 50 stop
	}
	stamp := map[string]float64{}
	for _, w := range columnOrder(8, 96) {
		stamp["dst/"+w] = 50
	}
	grad := map[string]float64{}
	for i, w := range columnOrder(8, 10) {
		grad["plate/"+w] = 20 + 20*float64(i) // (20, 200) over ten wells
	}
	return []libraryStyle{
		// 24 × 15 µL master mix by distribute (P20: 1 µL disposal, 19 µL a load: one well an
		// aspirate of 16 µL, 24 × 16 = 384 µL), then 24 × 5 µL samples with a tip each: 25 tips.
		{"pcr_setup", wellsOf(nil, "pcr", 20, pcr24...), map[string]int{"tips": 25}, 384 + 24*5, 0},
		// Diluent 100 µL into A2–A12 (20 µL disposal, 280 µL a load: 5 × 220 + 1 × 120 = 1220 µL),
		// 200 µL sample into A1, then 100 µL down the row: A1–A11 100, A12 200; 1 + 1 + 11 tips.
		{"serial_dilution", wellsOf(wellsOf(nil, "plate", 100, "A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10", "A11"), "plate", 200, "A12"),
			map[string]int{"tips": 13}, 1220 + 200, 0},
		// Water 40/30/45 µL (one P300 tip), samples 10/20/5 µL (three P20 tips): 50 µL each.
		{"normalization", wellsOf(nil, "dst", 50, "A1", "B1", "C1"), map[string]int{"t20": 3, "t300": 1}, 115 + 35, 0},
		// Columns 1–6: see elisa; 8 transfers of one column of tips; 4800 + 14400 + 4800 + 2400 µL
		// from the reservoir; 75 min of delays.
		{"elisa", elisa, map[string]int{"tips": 64}, 4800 + 14400 + 4800 + 2400, 75 * 60},
		// 24 tubes × 100 µL, P300 GEN1 (30 µL disposal, 270 µL a load: 12 × 230 µL); cooling
		// from 25 to 4 °C at 0.2 °C/s takes 105 s.
		{"temp_aliquot", wellsOf(nil, "tubes", 100, columnOrder(4, 24)...), map[string]int{"tips": 1}, 12 * 230, 105},
		// 2 columns × (10 µL mix + 10 µL sample); lid 3 × 20 s, lid to 105 °C 100 s, block to 95 °C
		// 17.5 s + 180 s, 30 cycles 3031.75 s, 72 °C for 300 s, to 4 °C 34 s: 3723.25 s.
		{"thermocycler_pcr", wellsOf(nil, "pcr", 20, columnOrder(8, 16)...), map[string]int{"tips": 24}, 160 + 160, 3723.25},
		// Three picks from tip B1 on.
		{"cherrypicking", wellsOf(wellsOf(wellsOf(nil, "dst", 50, "H12"), "dst", 75.5, "A1"), "dst", 25, "B2"), map[string]int{"tips": 3}, 150.5, 0},
		// Per sample: 90 beads, 190 removed (100 µL of sample assumed), 200 ethanol in and out,
		// 30 elution buffer, 25 out: 5 µL left; 4 × 6 tips.
		{"bead_cleanup", wellsOf(wellsOf(nil, "plate", 5, "A1", "B1", "C1", "D1"), "out", 25, "A1", "B1", "C1", "D1"),
			map[string]int{"tips": 24}, 4 * (90 + 100 + 200 + 30), 8 * 60},
		// 12 columns × 8 × 50 µL, a new column of tips each.
		{"stamping", stamp, map[string]int{"tips": 96}, 96 * 50, 0},
		// 100 × 5 µL; the 97th pick finds no tip, the rack is replaced and 4 more are used.
		{"out_of_tips", wellsOf(nil, "plate", 5, columnOrder(16, 100)...), map[string]int{"tips": 4}, 500, 0},
		// 100 µL and a 20 µL air gap, dispensed as 120 µL: 100 µL in each of column 1.
		{"air_gap_manual", wellsOf(nil, "plate", 100, columnOrder(8, 8)...), map[string]int{"tips": 8}, 800, 0},
		// 12 × 15 µL into one tube with one 200 µL filter tip.
		{"pooling", wellsOf(nil, "tubes", 180, "A1"), map[string]int{"tips": 1}, 180, 0},
		// 6 × 500 µL, no disposal volume: 3 aspirates of 1000 µL, one tip.
		{"distribute_p1000", wellsOf(nil, "tubes", 500, "A1", "A2", "A3", "A4", "A5", "B1"), map[string]int{"tips": 1}, 3000, 0},
		// 8 × 150 µL (20 µL disposal, 280 µL a load: 8 aspirates of 170 µL); 10 min shaking.
		{"heater_shaker", wellsOf(nil, "plate", 150, columnOrder(8, 8)...), map[string]int{"tips": 1}, 8 * 170, 600},
		{"gradient", grad, map[string]int{"tips": 1}, 1100, 0},
		// Row A of the 8 channels reaches A, C…O of column 1 of a 384-well plate; row B: B, D…P.
		{"plate_384", wellsOf(nil, "plate", 10, columnOrder(16, 16)...), map[string]int{"tips": 8}, 160, 0},
		// 6 × 1000 µL into the folder's rack; 2 × 2500 µL into the protocol's own vials.
		{"custom_labware", wellsOf(wellsOf(nil, "rack", 1000, "A1", "B1", "A2", "B2", "A3", "B3"), "vials", 2500, "A1", "B1"),
			map[string]int{"tips": 2}, 11000, 0},
		// 4 × 50 µL, then 20 µL from beside A1's centre into A2.
		{"geometry", map[string]float64{"plate/A1": 30, "plate/A2": 70, "plate/A3": 50, "plate/A4": 50}, map[string]int{"tips": 1}, 200, 0},
		// One tip, returned and dropped back into its place, used three times.
		{"tip_return", wellsOf(nil, "plate", 100, "A1", "A2", "A3"), map[string]int{"tips": 1}, 300, 0},
		{"tip_return_api21", wellsOf(nil, "plate", 100, "A1", "A2", "A3"), map[string]int{"tips": 1}, 300, 0},
		// P10 8-channel: 3 columns × 10 µL; P50: 40 µL with mixes (the source's mix_before draws
		// 30 µL first, then 10 µL more): 240 + 40 µL assumed.
		{"gen1_mix", wellsOf(wellsOf(nil, "plate", 10, columnOrder(8, 24)...), "plate", 40, "A4"), map[string]int{"t10": 24, "t300": 1}, 280, 0},
		{"housekeeping", wellsOf(nil, "plate", 100, "A1"), map[string]int{"tips": 1}, 100, 95},
		// 3 columns × 10 µL into column 1 by 8 channels: one transfer (8 tips) per column.
		// 3 samples (fields.json over add_parameters' 2) × 50 µL from a declared 10 mL.
		{"lab_idioms", wellsOf(wellsOf(nil, "plate", 50, "A1", "B1", "C1"), "res", 9850, "A1"), map[string]int{"tips": 1}, 0, 0},
		// 3 single-nozzle × 10 µL, 4 nozzles × 10 µL into E2–H2, 8 × 5 µL into column 3.
		{"partial_tips", wellsOf(wellsOf(nil, "plate", 10, "A1", "B1", "C1", "E2", "F2", "G2", "H2"), "plate", 5, columnOrder(8, 24)[16:]...),
			map[string]int{"tips": 15}, 110, 0},
		{"multi_columns", wellsOf(nil, "dst", 30, columnOrder(8, 8)...), map[string]int{"tips": 24}, 240, 0},
	}
}

// TestLibraryStyleProtocols runs the 25 protocols of testdata/protocols as the Protocol
// Library's are run (fields.json defaults, labware/ beside them) and checks each against its
// hand calculation. The Library's own files are not redistributed (its repository has no
// licence); TestProtocolLibrary runs them from a checkout.
func TestLibraryStyleProtocols(t *testing.T) {
	start := starter(t)
	for _, tc := range libraryStyleProtocols() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join("testdata", "protocols", tc.name, tc.name+".ot2.apiv2.py")
			code, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			params, defs, skipped, err := benchrun.Beside(file)
			if err != nil || len(skipped) > 0 {
				t.Fatalf("beside %s: %v %v", file, err, skipped)
			}
			rep, err := benchrun.Simulate(context.Background(), string(code), &benchrun.Options{Start: start, Params: params, Labware: defs})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failure != "" {
				t.Fatalf("failed: %s", rep.Failure)
			}
			p := benchrun.Protocol(rep.Deck)
			if p == nil {
				t.Fatal("no protocol summary")
			}
			for w, v := range p.Wells {
				if math.Abs(v-tc.wells[w]) > 1e-6 {
					t.Errorf("%s holds %g µL, want %g", w, v, tc.wells[w])
				}
			}
			for w, v := range tc.wells {
				if _, ok := p.Wells[w]; !ok {
					t.Errorf("%s is empty, want %g µL", w, v)
				}
			}
			if !maps.Equal(p.TipsUsed, tc.tips) {
				t.Errorf("tips used %v, want %v", p.TipsUsed, tc.tips)
			}
			var user float64
			for _, v := range p.UserLoaded {
				user += v
			}
			if math.Abs(user-tc.userLoaded) > 1e-6 {
				t.Errorf("user-loaded %g µL (%v), want %g", user, p.UserLoaded, tc.userLoaded)
			}
			if p.Seconds < tc.minSeconds {
				t.Errorf("protocol time %g s, want at least %g", p.Seconds, tc.minSeconds)
			}
			if tc.name == "cherrypicking" {
				for _, lw := range rep.Deck.Snapshot().Labware {
					if lw.Name == "tips" && (!slices.Contains(lw.Fresh, "A1") || slices.Contains(lw.Fresh, "B1")) {
						t.Errorf("starting_tip B1: fresh tips %v", lw.Fresh[:3])
					}
				}
			}
		})
	}
}
