package mcp_test

import (
	"context"
	"strings"
	"testing"
)

// A cell's labmate.bench() is the session's bench, which bench_state shows; simulate_protocol
// runs a protocol on a fresh twin and leaves that bench alone.
func TestMCPBenchTools(t *testing.T) {
	f := newFixture(t)
	cs, _ := f.connect(t, "memory")
	ctx := context.Background()
	r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": `import labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
plate["C3"].load_liquid(protocol.define_liquid("dye"), 120)`})
	if r.IsError {
		t.Fatalf("exec: %s", text(r))
	}
	r = call(t, ctx, cs, "", "simulate_protocol", map[string]any{"code": `metadata = {"apiLevel": "2.13"}

def run(protocol):
    protocol.load_labware("nest_12_reservoir_15ml", 2, "res")
`})
	if r.IsError || structured(t, r)["ok"] != true || !strings.Contains(text(r), "res: NEST 12 Well Reservoir") {
		t.Fatalf("simulate_protocol: %s", text(r))
	}
	r = call(t, ctx, cs, "", "bench_state", map[string]any{})
	if out := text(r); r.IsError || !strings.Contains(out, "C     .     . 120.0") || strings.Contains(out, "res:") {
		t.Errorf("bench_state:\n%s", out)
	}
}
