package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// dataRoot is a data root holding a small dataset, a file whose bad cell is secret, and links
// leading out; outside it a secret file.
func dataRoot(t *testing.T) (root, outside string) {
	t.Helper()
	tmp := t.TempDir()
	root, outside = filepath.Join(tmp, "data"), filepath.Join(tmp, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, root, "ok.csv", "sub,lig,yield\nA,L1,10\nA,L2,20\nA,L3,30\n")
	write(t, root, "bad.csv", "sub,lig,yield\nA,L1,10\nA,L2,"+secretCell+"\n")
	write(t, outside, "secret.csv", "sub,lig,yield\n"+secretCell+",L1,1\n")
	for name, target := range map[string]string{"passwd.csv": "/etc/passwd", "out.csv": "../outside/secret.csv"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// A csv path is accepted only under a data root: /etc/passwd, a link out of the root and `..`
// are refused alike, and no error quotes a file read by path.
func TestCampaignServerPaths(t *testing.T) {
	root, outside := dataRoot(t)
	url := campaignServer(t, root)
	spec := func(path string) map[string]any {
		return map[string]any{"csv": path, "objective": "yield", "vars": []string{"lig"}, "groups": []string{"sub"}, "planner": "random", "budget": 2}
	}
	for _, c := range []struct {
		path string
		want string // "" for a campaign
	}{
		{"/etc/passwd", `campaign: csv path "/etc/passwd" is not under a data root (--data-root)`},
		{filepath.Join(root, "passwd.csv"), `is not under a data root (--data-root)`},
		{filepath.Join(root, "out.csv"), `is not under a data root (--data-root)`},
		{filepath.Join(root, "..", "outside", "secret.csv"), `is not under a data root (--data-root)`},
		{"../outside/secret.csv", `campaign: csv path "../outside/secret.csv" is not under a data root (--data-root)`},
		{filepath.Join(outside, "secret.csv"), `is not under a data root (--data-root)`},
		{filepath.Join(root, "bad.csv"), `bad.csv:3, column "yield": the objective is not a finite number`},
		{filepath.Join(root, "nope.csv"), `no such file under the data roots`},
		{filepath.Join(root, "ok.csv"), ""},
		{"ok.csv", ""},
	} {
		code, body := post(t, url+"/v1/campaigns", spec(c.path))
		switch {
		case c.want == "" && code != http.StatusCreated:
			t.Errorf("%s: %d %s", c.path, code, body)
		case c.want != "" && (code != http.StatusBadRequest || !strings.Contains(body, c.want) || strings.Contains(body, "this server has none")):
			t.Errorf("%s: %d %s; want %s", c.path, code, body, c.want)
		case strings.Contains(body, secretCell) || strings.Contains(body, "root:"):
			t.Errorf("%s: the answer quotes a file: %s", c.path, body)
		}
	}
	// The other columns of a file read by path are not listed either.
	code, body := post(t, url+"/v1/campaigns", map[string]any{"csv": "ok.csv", "objective": "conversion", "vars": []string{"lig"}, "budget": 1})
	if code != 400 || !strings.Contains(body, `no objective column "conversion" in the header (it has 3 columns)`) {
		t.Errorf("a missing column: %d %s", code, body)
	}
	healthy(t, url)

	// Without data roots every path is refused, saying so; uploads still work.
	bare := campaignServer(t)
	code, body = post(t, bare+"/v1/campaigns", spec(filepath.Join(root, "ok.csv")))
	if code != 400 || !strings.Contains(body, "is not under a data root (--data-root); this server has none: upload the CSV (csv_data) instead") {
		t.Errorf("no roots: %d %s", code, body)
	}
	if code, body := post(t, bare+"/v1/campaigns", upload("sub,lig,yield\nA,L1,1\nA,L2,2\n", []string{"lig"}, "random", 2)); code != http.StatusCreated {
		t.Errorf("an upload without roots: %d %s", code, body)
	}
	// A data root must exist.
	if _, err := (&campaignFlags{dataRoots: []string{filepath.Join(root, "missing")}}).setup(); err == nil || !strings.Contains(err.Error(), "--data-root") {
		t.Errorf("a missing data root: %v", err)
	}
}

// The MCP campaign_start tool shares the setup: the same bad inputs get the same refusals as
// tool errors, through the official go-sdk client over streamable HTTP, and the server goes on.
func TestCampaignMCPRefuses(t *testing.T) {
	root, _ := dataRoot(t)
	reactions := reactionsDir(t)
	url := campaignServer(t, root, reactions)
	connect := func() *sdk.ClientSession {
		client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect()
	start := func(args map[string]any) (*sdk.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "campaign_start", Arguments: args})
		if err != nil {
			t.Fatalf("campaign_start: %v", err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return res, text.String()
	}
	path := func(p string) map[string]any {
		return map[string]any{"csv": p, "objective": "yield", "vars": []string{"lig"}, "groups": []string{"sub"}, "planner": "random", "budget": 1}
	}
	hundredK := table("sub,lig,yield", 100_000, func(i int) string { return fmt.Sprintf("A,ligand-%d,%d", i, i%100) })
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"/etc/passwd", path("/etc/passwd"), `campaign: csv path "/etc/passwd" is not under a data root (--data-root)`},
		{"a link out", path(filepath.Join(root, "passwd.csv")), `is not under a data root (--data-root)`},
		{"..", path(filepath.Join(root, "..", "outside", "secret.csv")), `is not under a data root (--data-root)`},
		{"a secret cell", path(filepath.Join(root, "bad.csv")), `bad.csv:3, column "yield": the objective is not a finite number`},
		{"100k levels", upload(hundredK, []string{"lig"}, "bayes", 20), `upload.csv:1002, column "lig": 100000 levels; at most 1000 are allowed`},
		{"budget beyond bayes", suzukiSpec("suzuki_perera2018.csv", "bayes", 201), `the bayes planner models at most 200 measurements`},
	} {
		res, text := start(c.args)
		if !res.IsError || !strings.Contains(text, c.want) || strings.Contains(text, secretCell) || strings.Contains(text, "root:") {
			t.Errorf("%s: isError=%t %.300q; want a tool error saying %q", c.name, res.IsError, text, c.want)
		}
		healthy(t, url)
	}
	// Over streamable HTTP, the go-sdk handler refuses a request body beyond 4 MiB before any
	// tool sees it (over stdio the server's own bound, 16 MiB, applies); the client gives the
	// session up, and a new one is served.
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "campaign_start",
		Arguments: upload(strings.Repeat("x", 17<<20), []string{"lig"}, "random", 1)}); err == nil || !strings.Contains(err.Error(), "Too Large") {
		t.Errorf("a 17 MiB upload: %v", err)
	}
	healthy(t, url)
	cs = connect()
	res, text := start(suzukiSpec("suzuki_perera2018.csv", "bayes", 2))
	if res.IsError {
		t.Fatalf("a normal campaign after: %s", text)
	}
	id := res.StructuredContent.(map[string]any)["id"]
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "campaign_step", Arguments: map[string]any{"id": id, "turns": 2}})
	if err != nil || res.IsError || res.StructuredContent.(map[string]any)["done"] != true {
		t.Fatalf("campaign_step: %v %+v", err, res)
	}
}
