package bench_test

import (
	"context"
	"fmt"
	"log"

	"github.com/labmate/labmate/lab/bench"
)

// A protocol simulated on the twin: water and a dye into tubes, then what the robot did and
// where the liquid is.
func Example() {
	d := bench.NewDeck()
	for _, err := range []error{
		d.LoadLabware("nest_12_reservoir_15ml", "1", "res"),
		d.LoadLabware("opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap", "2", "tubes"),
		d.LoadLabware("opentrons_96_tiprack_300ul", "3", "tips"),
		d.LoadInstrument("p300_single_gen2", "left", "tips"),
	} {
		if err != nil {
			log.Fatal(err)
		}
	}
	protocol := []bench.Command{
		{Name: "load_liquid", Args: bench.Args{Well: "res/A1", Volume: 5000, Concentrations: map[string]float64{"tartrazine": 0.001}}},
		{Name: "load_liquid", Args: bench.Args{Well: "res/A2", Volume: 5000}},
		{Name: "distribute", Args: bench.Args{Mount: "left", Volume: 100, Source: []string{"res/A2"}, Dest: []string{"tubes/A1", "tubes/A2", "tubes/A3"}}},
		{Name: "transfer", Args: bench.Args{Mount: "left", Volumes: []float64{200, 100, 50}, Source: []string{"res/A1"},
			Dest: []string{"tubes/A1", "tubes/A2", "tubes/A3"}, NewTip: "always"}},
	}
	events, err := d.Run(context.Background(), protocol)
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range events[2:] {
		fmt.Println(ev.Name)
		for _, s := range ev.Steps {
			fmt.Println("  " + s.String())
		}
	}
	m, err := d.PlateMap("tubes", bench.ShowVolume)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(m)
	tube, err := d.Well("tubes/A3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tubes/A3: %.4f mM tartrazine\n", 1000*tube.Concentration("tartrazine"))
	// Output:
	// distribute
	//   pick_up_tip from tips/A1 (left)
	//   aspirate 220 µL from res/A2 (left)
	//   dispense 100 µL into tubes/A1 (left)
	//   dispense 100 µL into tubes/A2 (left)
	//   blow_out 20 µL into trash (left)
	//   aspirate 120 µL from res/A2 (left)
	//   dispense 100 µL into tubes/A3 (left)
	//   blow_out 20 µL into trash (left)
	//   drop_tip into trash (left)
	// transfer
	//   pick_up_tip from tips/B1 (left)
	//   aspirate 200 µL from res/A1 (left)
	//   dispense 200 µL into tubes/A1 (left)
	//   drop_tip into trash (left)
	//   pick_up_tip from tips/C1 (left)
	//   aspirate 100 µL from res/A1 (left)
	//   dispense 100 µL into tubes/A2 (left)
	//   drop_tip into trash (left)
	//   pick_up_tip from tips/D1 (left)
	//   aspirate 50 µL from res/A1 (left)
	//   dispense 50 µL into tubes/A3 (left)
	//   drop_tip into trash (left)
	// tubes: Opentrons 24 Tube Rack with Eppendorf 1.5 mL Safe-Lock Snapcap in slot 2 (volume, µL)
	//       1     2     3     4     5     6
	// A 300.0 200.0 150.0     .     .     .
	// B     .     .     .     .     .     .
	// C     .     .     .     .     .     .
	// D     .     .     .     .     .     .
	// tubes/A3: 0.3333 mM tartrazine
}
