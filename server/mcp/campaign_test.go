package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/runner"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/lab/game"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// campaign_start shares the server's bounds: an upload beyond the dataset limits (the
// 100k-level one of issue 16), a NaN objective or a budget beyond the space is a tool error
// that says which limit and what value, and the server goes on playing campaigns. (The
// transports bound a message before any tool sees it: 4 MiB over streamable HTTP, 16 MiB
// over stdio. The real setup, with data roots and the planners, is tested through this tool
// in cmd/labmate.)
func TestCampaignToolsRefuse(t *testing.T) {
	cs := campaignClient(t)
	ctx := context.Background()
	var levels strings.Builder
	levels.WriteString("sub,lig,base,yield\n")
	for i := range 100_000 {
		fmt.Fprintf(&levels, "A,ligand-%d,B1,%d\n", i, i%100)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"100k levels", map[string]any{"csv_data": levels.String(), "objective": "yield", "vars": []string{"lig", "base"}, "budget": 5},
			`csv_data:1002, column "lig": 100000 levels; at most 1000 are allowed`},
		{"budget beyond the space", map[string]any{"csv_data": reactions, "objective": "yield", "vars": []string{"lig", "base"}, "groups": []string{"sub"}, "budget": 5},
			`campaign: budget 5: the space has only 4 conditions`},
		{"NaN", map[string]any{"csv_data": "lig,yield\nL1,NaN\n", "objective": "yield", "vars": []string{"lig"}, "budget": 1},
			`csv_data:2, column "yield", value "NaN": the objective is not a finite number`},
	} {
		r := call(t, ctx, cs, "", "campaign_start", c.args)
		if !r.IsError || !strings.Contains(text(r), c.want) {
			t.Errorf("%s: isError=%t %.300q; want %q", c.name, r.IsError, text(r), c.want)
		}
	}
	r := call(t, ctx, cs, "", "campaign_start", map[string]any{"csv_data": reactions, "objective": "yield", "vars": []string{"lig", "base"}, "groups": []string{"sub"}, "budget": 4})
	if r.IsError {
		t.Fatalf("a normal campaign after: %s", text(r))
	}
	r = call(t, ctx, cs, "", "campaign_step", map[string]any{"id": structured(t, r)["id"], "turns": 4})
	if out := structured(t, r); r.IsError || out["done"] != true || out["played"] != 4.0 || out["reason"] != "budget_spent" {
		t.Errorf("playing it: %s", text(r))
	}
}

// campaignClient is a go-sdk client of a lab whose server plays campaigns with the sweep.
func campaignClient(t *testing.T) *sdk.ClientSession {
	t.Helper()
	srv, err := server.New(context.Background(), server.Config{Config: runner.Config{Store: protocol.NewMemStore(), Campaigns: sweeps{}, Log: log.New(t.Output(), "", 0)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.New(srv.Runner, &mcp.Options{Version: "test"}).Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// campaign_start defaults objective and budget as labmate campaign run does (one place:
// game.DefaultObjective and game.DefaultBudget), the budget cut to a smaller space; neither is
// required by its schema.
func TestCampaignStartDefaults(t *testing.T) {
	cs := campaignClient(t)
	ctx := context.Background()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "campaign_start" {
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(s.Required, "objective") || slices.Contains(s.Required, "budget") {
			t.Errorf("campaign_start requires %v; objective and budget have defaults", s.Required)
		}
	}
	var wide strings.Builder // 30 conditions
	wide.WriteString("lig,yield\n")
	for i := range 30 {
		fmt.Fprintf(&wide, "L%d,%d\n", i, i)
	}
	for _, c := range []struct {
		name   string
		args   map[string]any
		budget float64
	}{
		{"a space larger than the default", map[string]any{"csv_data": wide.String(), "vars": []string{"lig"}}, game.DefaultBudget},
		{"a smaller space", map[string]any{"csv_data": reactions, "vars": []string{"lig", "base"}, "groups": []string{"sub"}}, 4},
		{"given", map[string]any{"csv_data": reactions, "objective": "yield", "vars": []string{"lig", "base"}, "groups": []string{"sub"}, "budget": 2}, 2},
	} {
		r := call(t, ctx, cs, "", "campaign_start", c.args)
		if r.IsError {
			t.Errorf("%s: %s", c.name, text(r))
			continue
		}
		out := structured(t, r)
		if out["objective"] != game.DefaultObjective || out["budget"] != c.budget {
			t.Errorf("%s: objective %v, budget %v; want %q and %v", c.name, out["objective"], out["budget"], game.DefaultObjective, c.budget)
		}
	}
	r := call(t, ctx, cs, "", "campaign_start", map[string]any{"csv_data": reactions, "vars": []string{"lig"}, "budget": -1})
	if !r.IsError || !strings.Contains(text(r), "budget -1") {
		t.Errorf("budget -1: isError=%t %s", r.IsError, text(r))
	}
}
