package benchrun_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
)

// A kept bench whose deck runs the Suzuki reactions journals its equipment: Open replays the
// journal on a deck that reacts as the served one did, noise included.
func TestOpenReplaysEquipment(t *testing.T) {
	p, err := eval.Find("data/reactions/suzuki_perera2018.csv")
	if err != nil {
		t.Fatal(err)
	}
	rx, err := bench.LoadReaction(p, &bench.Suzuki)
	if err != nil {
		t.Fatal(err)
	}
	d := bench.NewDeck()
	if err := d.Equip(&bench.Equipment{Reactions: []*bench.Reaction{rx}, HeaterShaker: &bench.HeaterShakerOptions{YieldNoise: 2, Seed: 3}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ws := t.TempDir()
	srv, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true, Deck: d})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", filepath.Join(ws, benchrun.Dir, benchrun.Socket))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	conc := map[string]float64{"6-Bromoquinoline": 0.02, "2a, Boronic Acid": 0.03, "Pd(OAc)2": 0.002, "SPhos": 0.004, "K3PO4": 0.06, "MeCN": 19.1}
	for _, cmd := range []bench.Command{
		{Name: "load_module", Args: bench.Args{Module: bench.HeaterShakerModule, Slot: "4"}},
		{Name: "load_labware", Args: bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "4", Label: "rx"}},
		{Name: "load_liquid", Args: bench.Args{Well: "rx/A1", Volume: 100, Concentrations: conc}},
		{Name: "hs_set_temperature", Args: bench.Args{Slot: "4", Celsius: 90}},
		{Name: "delay", Args: bench.Args{Minutes: 60}},
	} {
		b, _ := json.Marshal(cmd)
		if _, err := c.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var rep bench.Reply
		if err := json.Unmarshal(line, &rep); err != nil || rep.Error != nil {
			t.Fatalf("%s: %s %v", cmd, line, err)
		}
	}
	c.Close()
	served := srv.Deck()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := served.Well("rx/A1")
	if err != nil || len(want.Species) != len(conc)+1 { // the product formed

		t.Fatalf("the served well did not react: %+v %v", want, err)
	}
	replayed, err := benchrun.Open(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	got, err := replayed.Well("rx/A1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the replayed well differs (-served +replayed):\n%s", diff)
	}
}
