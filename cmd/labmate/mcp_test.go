package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpExec runs one cell through an MCP client session and returns the tool's text.
func mcpExec(t *testing.T, cs *sdk.ClientSession, code string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "exec",
		Arguments: map[string]any{"kernel": "python", "code": code}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("exec %q: %s", code, b.String())
	}
	return b.String()
}

func TestMCPStdio(t *testing.T) {
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cmd := exec.Command(bin, "mcp", "--workspaces", t.TempDir(), "--data", t.TempDir())
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "kernels", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("kernels: %v %v", err, res)
	}
	mcpExec(t, cs, "a = 6 * 7")
	if out := mcpExec(t, cs, "print(a)"); !strings.Contains(out, "\n42\n") {
		t.Errorf("the workspace did not persist across calls: %s", out)
	}
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "save_fact",
		Arguments: map[string]any{"text": "six times seven is 42"}})
	if err != nil || res.IsError {
		t.Fatalf("save_fact: %v %v", err, res)
	}
}

func TestServeMCP(t *testing.T) {
	_, url := serve(t, t.TempDir())
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	if _, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp"}, nil); err == nil {
		t.Fatal("an MCP client without the token was let in")
	}
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer(tokenOf(url))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if out := mcpExec(t, cs, "print('over http')"); !strings.Contains(out, "over http") {
		t.Errorf("exec over /mcp: %s", out)
	}

	// A Bayesian campaign on the Suzuki dataset, uploaded and played through MCP.
	suzuki, err := os.ReadFile(filepath.Join(sharedData(t), "reactions", "suzuki_perera2018.csv"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "campaign_start", Arguments: map[string]any{
		"csv_data": string(suzuki), "name": "suzuki_perera2018.csv", "objective": "yield",
		"vars": []string{"ligand", "reagent", "solvent"}, "groups": []string{"reactant_1", "reactant_2"},
		"planner": "bayes", "budget": 4, "seed": 1}})
	if err != nil || res.IsError {
		t.Fatalf("campaign_start: %v %+v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["id"]
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "campaign_step", Arguments: map[string]any{"id": id, "turns": 4}})
	if err != nil || res.IsError {
		t.Fatalf("campaign_step: %v %+v", err, res)
	}
	out := res.StructuredContent.(map[string]any)
	turns := out["turns"].([]any)
	if len(turns) != 4 || out["done"] != true || turns[3].(map[string]any)["nma"] == nil {
		t.Errorf("four Bayesian turns: %v", out)
	}
}

// bearer sends the token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// sharedData finds shared/data above the repository.
func sharedData(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(".")
	for {
		p := filepath.Join(dir, "shared", "data")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no shared/data above the repository")
		}
		dir = filepath.Dir(dir)
	}
}
