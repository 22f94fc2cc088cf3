package benchrun_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/tool"
)

const rows = `metadata = {"apiLevel": "2.13"}

def run(protocol):
    plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = protocol.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = protocol.load_labware("opentrons_96_tiprack_300ul", 3)
    p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    res["A1"].load_liquid(protocol.define_liquid("tartrazine", "", "#ffd700", {"tartrazine": 0.001}), 10000)
    p.transfer(100, res["A1"], plate.rows()[0])
`

func starter(t *testing.T) benchrun.StartFunc {
	opts := testutil.KernelOptions(t)
	return func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
		o := opts
		o.Workspace = ws
		if name == benchrun.Octave {
			return octave.Start(ctx, &o)
		}
		return python.Start(ctx, &o)
	}
}

func call(t *testing.T, tl tool.Tool, args string) *tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSimulateProtocolTool(t *testing.T) {
	ws := t.TempDir()
	ts := benchrun.Tools(&benchrun.ToolsOptions{Start: starter(t), Workspace: func(context.Context) (string, error) { return ws, nil }})
	code, _ := json.Marshal(rows)
	res := call(t, ts[0], `{"code": `+string(code)+`}`)
	s, ok := res.Data.(*benchrun.Summary)
	if res.IsError || !ok || !s.OK || s.Commands[len(s.Commands)-1].Command.Name != "transfer" {
		t.Fatalf("simulate_protocol: %+v", res)
	}
	if want := "A 100.0" + strings.Repeat(" 100.0", 11) + "\n"; !strings.Contains(s.PlateMaps["plate"], want) || !strings.Contains(res.Content, want) {
		t.Errorf("no row A of 100 µL in\n%s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, benchrun.Dir, benchrun.Journal)); !os.IsNotExist(err) {
		t.Errorf("the simulation left a journal in the workspace: %v", err)
	}
	// A transfer without a tip, which the Opentrons API refuses too.
	bad, _ := json.Marshal(strings.Replace(rows, "plate.rows()[0])", "plate.rows()[0], new_tip=\"never\")", 1))
	res = call(t, ts[0], `{"code": `+string(bad)+`}`)
	if s := res.Data.(*benchrun.Summary); s.OK || !strings.Contains(s.Failure, "line 9: ") {
		t.Errorf("a transfer with no tip: %+v", s)
	}
	if res = call(t, ts[1], `{}`); !strings.Contains(res.Content, "the bench is empty") {
		t.Errorf("bench_state after a simulation: %s", res.Content)
	}
}

// TestServedBenchPersists: labmate.bench() in a kernel works on the workspace's served bench
// across cells, the journal keeps what it did for the next bench, and bench_state shows it.
func TestServedBenchPersists(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	srv, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	k, err := starter(t)(ctx, benchrun.Python, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for i, code := range []string{`import labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
tips = protocol.load_labware("opentrons_96_tiprack_300ul", 2)
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
plate["A1"].load_liquid(protocol.define_liquid("dye"), 200)`, `p.transfer(50, plate["A1"], plate["B1"])`} {
		for st, err := range k.Exec(ctx, &kernel.Cell{Code: code}) {
			if err != nil {
				t.Fatal(err)
			}
			if st.Result != nil && st.Result.Status != "ok" {
				t.Fatalf("cell %d: %+v", i+1, st.Result)
			}
		}
	}
	if c, err := srv.Deck().Well("plate/B1"); err != nil || c.Volume != 50 {
		t.Errorf("plate/B1 on the served bench: %v µL (%v), want 50", c.Volume, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	ts := benchrun.Tools(&benchrun.ToolsOptions{Start: starter(t), Workspace: func(context.Context) (string, error) { return ws, nil }})
	res := call(t, ts[1], `{}`)
	if !strings.Contains(res.Content, "A 150.0") || !strings.Contains(res.Content, "B  50.0") {
		t.Errorf("bench_state after the session:\n%s", res.Content)
	}
}
