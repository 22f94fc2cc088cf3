package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/bench"
)

func serve(t *testing.T, b bench.Backend) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "bench.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- bench.Serve(ctx, ln, b) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return sock
}

// A client that sends garbage, unknown fields and a line over MaxLine gets errors; the bench
// goes on serving.
func TestServeHostileLines(t *testing.T) {
	sock := serve(t, bench.NewTwin(bench.NewDeck()))
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	reply := func() bench.Reply {
		t.Helper()
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var rep bench.Reply
		if err := json.Unmarshal(line, &rep); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return rep
	}
	for _, tc := range []struct{ line, want string }{
		{"\x00\xff garbage", "not a command"},
		{`{"name": "aspirate", "args": {"volume": "lots"}}`, "not a command"},
		{`{"name": "aspirate", "rm": "-rf"}`, `unknown field "rm"`},
		{`{"name": "format_disk"}`, `unknown command "format_disk"`},
		{`{"name": "load_labware", "args": {"load_name": "corning_96_wellplate_360ul_flat", "slot": "1"}, "line": 3}`, ""},
	} {
		c.Write([]byte(tc.line + "\n"))
		rep := reply()
		switch {
		case tc.want == "" && (rep.Error != nil || rep.Labware == nil || rep.Labware.Name != "1" || len(rep.Labware.Ordering) != 12):
			t.Errorf("%s: %+v", tc.line, rep)
		case tc.want != "" && (rep.Error == nil || !strings.Contains(rep.Error.Message, tc.want)):
			t.Errorf("%s: %+v, want an error with %q", tc.line, rep, tc.want)
		}
	}
	go c.Write(append(bytes.Repeat([]byte("x"), bench.MaxLine+1), '\n'))
	if rep := reply(); rep.Error == nil || !strings.Contains(rep.Error.Message, "longer than") {
		t.Errorf("a line over MaxLine: %+v", rep)
	}
	if _, err := r.ReadBytes('\n'); err == nil {
		t.Error("the connection is still open after a line over MaxLine")
	}
	c2, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Write([]byte(`{"name": "load_labware", "args": {"load_name": "corning_96_wellplate_360ul_flat", "slot": "1"}, "line": 9}` + "\n"))
	line, err := bufio.NewReader(c2).ReadString('\n')
	if err != nil || !strings.Contains(line, "bench: line 9: load_labware corning_96_wellplate_360ul_flat in slot 1: slot 1 is occupied") {
		t.Errorf("a new connection after the hostile one: %q, %v", line, err)
	}
}

// physical is the twin presented as a real instrument, to exercise Guard.
type physical struct{ *bench.Twin }

func (physical) Physical() bool { return true }

func TestGuardAsksOnlyForPhysicalBackends(t *testing.T) {
	asked := 0
	refuse := func(context.Context, bench.Command) error { asked++; return bench.ErrNotApproved }
	cmd := bench.Command{Name: "load_labware", Args: bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "1"}, Line: 4}
	if _, err := bench.Guard(bench.NewTwin(bench.NewDeck()), refuse).Do(context.Background(), cmd); err != nil || asked != 0 {
		t.Errorf("the twin: %v, asked %d times", err, asked)
	}
	d := bench.NewDeck()
	_, err := bench.Guard(physical{bench.NewTwin(d)}, refuse).Do(context.Background(), cmd)
	if !errors.Is(err, bench.ErrNotApproved) || asked != 1 || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("a physical backend, refused: %v, asked %d times", err, asked)
	}
	if len(d.Snapshot().Labware) != 0 {
		t.Error("a refused command reached the backend")
	}
}

// A journal the Noted backend wrote replays into the same deck.
func TestJournalReplays(t *testing.T) {
	var journal bytes.Buffer
	enc := json.NewEncoder(&journal)
	d := bench.NewDeck()
	b := bench.Noted(bench.NewTwin(d), func(c bench.Command, _ *bench.Event, err error) {
		if err == nil {
			enc.Encode(c)
		}
	})
	for _, c := range []bench.Command{
		{Name: "load_labware", Args: bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "1", Label: "plate"}},
		{Name: "load_labware", Args: bench.Args{LoadName: "opentrons_96_tiprack_300ul", Slot: "2", Label: "tips"}},
		{Name: "load_instrument", Args: bench.Args{Instrument: "p300_single_gen2", Mount: "left", TipRacks: []string{"tips"}}},
		{Name: "load_liquid", Args: bench.Args{Well: "plate/A1", Volume: 200, Concentrations: map[string]float64{"dye": 0.01}}},
		{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: 50, Well: "plate/A1"}}, // refused: no tip
		{Name: "transfer", Args: bench.Args{Mount: "left", Volume: 50, Source: []string{"plate/A1"}, Dest: []string{"plate/B1"}}},
	} {
		ev, err := b.Do(context.Background(), c)
		if c.Name == "transfer" && (err != nil || ev.Volumes["plate/A1"] != 150 || ev.Volumes["plate/B1"] != 50) {
			t.Errorf("transfer: %v, volumes %v", err, ev)
		}
	}
	replayed := bench.NewDeck()
	n, err := bench.Replay(context.Background(), replayed, &journal)
	if err != nil || n != 5 {
		t.Fatalf("Replay: %d commands, %v", n, err)
	}
	want, _ := json.Marshal(d.Snapshot())
	got, _ := json.Marshal(replayed.Snapshot())
	if !bytes.Equal(got, want) {
		t.Errorf("replayed deck\n%s\nwant\n%s", got, want)
	}
}
