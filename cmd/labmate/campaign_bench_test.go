package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server/mcp"
)

// A campaign a server runs (REST, and MCP through the official go-sdk client) can be played
// as protocols on the bench twin's plate, by path or uploaded: the same turns and yields as
// the lookup, and marked as run on the bench. A dataset the bench maps no reaction of is
// refused, naming the ones it maps.
func TestCampaignServerOnBench(t *testing.T) {
	dir := reactionsDir(t)
	hostile := t.TempDir() // a file under a data root that no error may quote: two products of one pair of reactants
	write(t, hostile, "suzuki_perera2018.csv", "reactant_1,reactant_2,product_smiles,catalyst,ligand,reagent,solvent,yield\n"+
		secretCell+",B,P1,C,L1,R1,S1,10\n"+secretCell+",B,"+secretCell+"-2,C,L2,R1,S1,20\n")
	url := campaignServer(t, dir, hostile)
	play := func(spec map[string]any, turns int) *runner.CampaignStatus {
		t.Helper()
		code, body := post(t, url+"/v1/campaigns", spec)
		var st runner.CampaignStatus
		if err := json.Unmarshal([]byte(body), &st); code != http.StatusCreated || err != nil {
			t.Fatalf("POST /v1/campaigns %v: %d %s", spec["bench"], code, body)
		}
		code, body = post(t, url+"/v1/campaigns/"+st.Campaign.ID+"/step?n="+strconv.Itoa(turns), "")
		if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || len(st.Steps) != turns {
			t.Fatalf("playing it: %d %s", code, body)
		}
		return &st
	}
	want := play(suzukiSpec("suzuki_perera2018.csv", "random", 6), 6)
	spec := suzukiSpec("suzuki_perera2018.csv", "random", 6)
	spec["bench"] = true
	got := play(spec, 6)
	if !got.Campaign.Bench || want.Campaign.Bench {
		t.Errorf("bench marks: %v on the bench, %v looked up", got.Campaign.Bench, want.Campaign.Bench)
	}
	for i, s := range got.Steps {
		w := want.Steps[i]
		if !s.OK || s.Conditions.Key() != w.Conditions.Key() || math.Abs(s.Value-w.Value) > 1e-9 {
			t.Errorf("REST turn %d: bench %s → %v (%s), lookup %s → %v", i+1, s.Conditions, s.Value, s.Error, w.Conditions, w.Value)
		}
	}

	csv, err := os.ReadFile(filepath.Join(dir, "suzuki_perera2018.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
	up := map[string]any{"csv_data": string(csv), "name": "suzuki_perera2018.csv", "vars": []string{"ligand", "reagent", "solvent"},
		"groups": []string{"reactant_1", "reactant_2"}, "planner": "random", "budget": 3, "seed": 1, "bench": true}
	id := call("campaign_start", up)["id"]
	raw, _ := json.Marshal(call("campaign_step", map[string]any{"id": id, "turns": 3}))
	var out mcp.CampaignOut
	if err := json.Unmarshal(raw, &out); err != nil || !out.Bench || len(out.Turns) != 3 {
		t.Fatalf("campaign_step on the bench: %v %s", err, raw)
	}
	for i, tu := range out.Turns {
		w := want.Steps[i]
		if !tu.OK || lab.Conditions(tu.Conditions).Key() != w.Conditions.Key() || math.Abs(tu.Value-w.Value) > 1e-9 {
			t.Errorf("MCP turn %d: bench %s → %v (%s), lookup %s → %v", i+1, tu.Conditions, tu.Value, tu.Error, w.Conditions, w.Value)
		}
	}

	spec = suzukiSpec(filepath.Join(hostile, "suzuki_perera2018.csv"), "random", 2)
	spec["bench"] = true
	code, body := post(t, url+"/v1/campaigns", spec)
	if code != http.StatusBadRequest || strings.Contains(body, secretCell) || !strings.Contains(body, "does not map onto the bench's reaction of suzuki_perera2018") {
		t.Errorf("a file under a root that the bench cannot map: %d %s; want a 400 that quotes nothing of it", code, body)
	}

	other := upload(table("sub,lig,yield", 4, func(i int) string { return fmt.Sprintf("A,L%d,%d", i, i) }), []string{"lig"}, "random", 2)
	other["bench"] = true
	code, body = post(t, url+"/v1/campaigns", other)
	if code != http.StatusBadRequest || !strings.Contains(body, "the bench maps no reaction of dataset upload (it maps buchwald_hartwig_ahneman2018") {
		t.Errorf("a dataset the bench does not map: %d %s", code, body)
	}
	healthy(t, url)
}
