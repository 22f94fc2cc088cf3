package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/server/mcp"
)

// exec is the shared exec cell (operation.Cell, the agent's run_code) and the session, and its
// result is the shared outcome: a long output keeps its head and its tail, the cut said; a
// verdict is reported once.
func TestExecOutcome(t *testing.T) {
	f := newFixture(t)
	f.lab = mcp.New(f.srv.Runner, &mcp.Options{Version: "test", MaxOutputBytes: 2000})
	cs, _ := f.connect(t, "memory")
	ctx := context.Background()

	t.Run("schema is the cell", func(t *testing.T) {
		cell, err := jsonschema.For[operation.Cell](nil)
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Sorted(maps.Keys(cell.Properties)), "session")
		slices.Sort(want)
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name != "exec" {
				continue
			}
			raw, _ := json.Marshal(tool.InputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, slices.Sorted(maps.Keys(s.Properties))); diff != "" {
				t.Errorf("exec's properties are not operation.Cell's and session (-want +got):\n%s", diff)
			}
			if !slices.Equal(s.Required, []string{"code"}) {
				t.Errorf("exec requires %v, want [code]", s.Required)
			}
		}
	})

	t.Run("long output keeps head and tail", func(t *testing.T) {
		r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python",
			"code": "for i in range(3000):\n    print('row', i)\nraise ValueError('the end')"})
		if !r.IsError {
			t.Fatalf("exec: %s", text(r))
		}
		out := structured(t, r)
		output, _ := out["output"].(string)
		for _, want := range []string{"row 0\n", "lines elided (", "row 2999\n"} {
			if !strings.Contains(output, want) || !strings.Contains(text(r), want) {
				t.Errorf("output and text lack %q:\n%s", want, text(r))
			}
		}
		if !strings.Contains(text(r), "error: ValueError: the end") {
			t.Errorf("the text lacks the error:\n%s", text(r))
		}
		if out["output_truncated"] != true || len(output) > 2200 {
			t.Errorf("output_truncated %v, %d bytes of output, want true and about 2000", out["output_truncated"], len(output))
		}
	})

	t.Run("a verdict is said once", func(t *testing.T) {
		r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "watch": []string{"x < 100"},
			"code": "import time\nfor i in range(100):\n    print('x =', 10 ** i, flush=True)\n    time.sleep(0.05)\n"})
		if !r.IsError {
			t.Fatalf("exec: %s", text(r))
		}
		out := structured(t, r)
		if out["reason"] != "interrupted" {
			t.Fatalf("exec = %v, want interrupted by perception", out)
		}
		seen := map[string]int{}
		for _, v := range out["verdicts"].([]any) {
			v := v.(map[string]any)
			seen[v["state"].(string)+" "+v["detector"].(string)+" "+v["message"].(string)]++
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("verdict %q listed %d times: %v", k, n, out["verdicts"])
			}
		}
		if n := strings.Count(text(r), "perception: Error"); n != 1 {
			t.Errorf("the Error verdict is said %d times in the text, want once:\n%s", n, text(r))
		}
	})

	t.Run("empty code is rejected by the shared check", func(t *testing.T) {
		r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": "  "})
		if !r.IsError || !strings.Contains(text(r), "code: empty") {
			t.Errorf("empty code: isError=%t %s", r.IsError, text(r))
		}
	})
}
