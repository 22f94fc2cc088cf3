package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// secretCell is content of a file under a data root that no error may quote.
const secretCell = "hunter2-secret"

// campaignServer is the real server (server.New) with the real campaign setup over the data
// roots (campaignFlags, as labmate serve wires it) and the MCP endpoint mounted as labmate serve
// mounts it, over loopback.
func campaignServer(t *testing.T, roots ...string) string {
	t.Helper()
	cf := campaignFlags{dataRoots: roots}
	setup, err := cf.setup()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{Config: runner.Config{Store: protocol.NewMemStore(), Campaigns: setup, Log: log.New(t.Output(), "", 0)}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("/mcp", mcp.New(srv.Runner, &mcp.Options{Version: "test"}).Handler())
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// post sends v (or a string as is) as JSON and returns the status and the body: the error's
// message when it is one.
func post(t *testing.T, url string, v any) (int, string) {
	t.Helper()
	body, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(b)
}

// healthy checks that the server still answers.
func healthy(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("the server stopped answering: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}

// suzukiSpec is a campaign on the Suzuki dataset by path.
func suzukiSpec(path, planner string, budget int) map[string]any {
	return map[string]any{"csv": path, "objective": "yield", "vars": []string{"ligand", "reagent", "solvent"},
		"groups": []string{"reactant_1", "reactant_2"}, "planner": planner, "budget": budget, "seed": 1}
}

// playSuzuki starts a Bayesian Suzuki campaign by path and plays it to the end.
func playSuzuki(t *testing.T, url, path string) {
	t.Helper()
	code, body := post(t, url+"/v1/campaigns", suzukiSpec(path, "bayes", 3))
	if code != http.StatusCreated {
		t.Fatalf("a normal campaign: %d %s", code, body)
	}
	var st runner.CampaignStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	code, body = post(t, url+"/v1/campaigns/"+st.Campaign.ID+"/step?n=3", "")
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || len(st.Steps) != 3 || !st.Done || st.Best == nil {
		t.Fatalf("playing it: %d %s", code, body)
	}
}

// table is a CSV with a header and rows made by row(i).
func table(header string, n int, row func(i int) string) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := range n {
		b.WriteString(row(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// upload is a campaign spec with the CSV inline.
func upload(csv string, vars []string, planner string, budget int) map[string]any {
	return map[string]any{"csv_data": csv, "name": "upload.csv", "objective": "yield", "vars": vars, "groups": []string{"sub"},
		"planner": planner, "budget": budget}
}

// The uploads of issue 16 that once ended the server (the 100k-level one with an out-of-memory
// n² distance matrix) are refused fast, naming the limit and the value, with bounded memory;
// the server answers /healthz after each, and plays a normal campaign at the end.
func TestCampaignServerRefusesHugeUploads(t *testing.T) {
	reactions := reactionsDir(t)
	url := campaignServer(t, reactions)
	lig := []string{"lig"}
	hundredK := table("sub,lig,yield", 100_000, func(i int) string { return fmt.Sprintf("A,ligand-%d,%d", i, i%100) })
	for _, c := range []struct {
		name string
		spec map[string]any
		code int
		want string
	}{
		{"100k levels", upload(hundredK, lig, "bayes", 20), 400,
			`upload.csv:1002, column "lig": 100000 levels; at most 1000 are allowed`},
		{"1M rows", upload(table("sub,lig,yield", 1_000_000, func(i int) string { return fmt.Sprintf("S%d,L%d,1", i/1000, i%1000) }), lig, "random", 5), 400,
			`upload.csv:100002: 1000000 rows; at most 100000 are allowed`},
		{"10k columns", upload(table("sub,lig,yield"+strings.Repeat(",c", 9997), 2, func(i int) string { return fmt.Sprintf("A,L%d,1", i) + strings.Repeat(",x", 9997) }), lig, "random", 1), 400,
			`upload.csv:1: 10000 columns; at most 256 are allowed`},
		{"a 60 MB line", upload("sub,lig,yield\nA,"+strings.Repeat("x", 60<<20)+",1\n", lig, "random", 1), 413,
			`campaign: the request has more than 33619968 bytes; a CSV may have at most 16777216`},
		{"17 MiB", upload(table("sub,lig,yield,pad", 1088, func(i int) string { return fmt.Sprintf("A,L%d,1,%s", i%900, strings.Repeat("p", 16<<10)) }), lig, "random", 1), 400,
			`campaign: csv_data has 17`},
		{"5000 groups", upload(table("sub,lig,yield", 5000, func(i int) string { return fmt.Sprintf("S%d,L1,1", i) }), lig, "random", 1), 400,
			`upload.csv:1002, column "sub": 5000 groups; at most 1000 are allowed`},
		{"NaN", upload("sub,lig,yield\nA,L1,1\nA,L2,NaN\n", lig, "random", 1), 400,
			`upload.csv:3, column "yield", value "NaN": the objective is not a finite number`},
		{"Inf", upload("sub,lig,yield\nA,L1,+Inf\n", lig, "random", 1), 400,
			`upload.csv:2, column "yield", value "+Inf": the objective is not a finite number`},
		{"budget beyond the space", suzukiSpec("suzuki_perera2018.csv", "random", 500), 400,
			`campaign: budget 500: the group's space has only 384 conditions`},
		{"budget beyond bayes", suzukiSpec("suzuki_perera2018.csv", "bayes", 300), 400,
			`campaign: budget 300: the bayes planner models at most 200 measurements`},
		{"budget beyond any", suzukiSpec("suzuki_perera2018.csv", "random", 1_000_000), 400,
			`budget 1000000: want 1 to 1000 turns`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			t0 := time.Now()
			code, body := post(t, url+"/v1/campaigns", c.spec)
			took := time.Since(t0)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d in %v, %.0f MB allocated (client and server)", code, took.Round(time.Millisecond), float64(alloc)/(1<<20))
			if code != c.code || !strings.Contains(body, c.want) {
				t.Errorf("%d %.300s; want %d saying %q", code, body, c.code, c.want)
			}
			if took > 20*time.Second {
				t.Errorf("refused after %v", took)
			}
			healthy(t, url)
		})
	}
	// The 100k-level upload once more, measured alone: a few times its size allocated, not 10¹⁰ entries.
	body, _ := json.Marshal(upload(hundredK, lig, "bayes", 20))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if code, msg := post(t, url+"/v1/campaigns", string(body)); code != 400 {
		t.Fatalf("%d %s", code, msg)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the %d-byte upload allocated %d MB", len(body), alloc>>20)
	}
	playSuzuki(t, url, filepath.Join(reactions, "suzuki_perera2018.csv"))
}

// An upload just within each limit is played; just beyond it is refused.
func TestCampaignServerUploadLimits(t *testing.T) {
	url := campaignServer(t)
	for _, c := range []struct {
		name      string
		csv       func(n int) string
		vars      []string
		limit     int
		wantOver  string
		planner   string
		budgetMax int
	}{
		{"levels", func(n int) string {
			return table("sub,lig,yield", n, func(i int) string { return fmt.Sprintf("A,L%d,%d", i, i%100) })
		}, []string{"lig"}, 1000, `column "lig": 1001 levels; at most 1000 are allowed`, "bayes", 5},
		{"levels in all", func(n int) string {
			return table("sub,a,b,c,yield", 1000, func(i int) string { return fmt.Sprintf("A,a%d,b%d,c0,1", i, i%(n-1001)) })
		}, []string{"a", "b", "c"}, 2000, `column "a,b,c": 2001 levels over all the variables; at most 2000 are allowed`, "bayes", 5},
		{"columns", func(n int) string {
			return table("sub,lig,yield"+strings.Repeat(",c", n-3), 4, func(i int) string { return fmt.Sprintf("A,L%d,%d", i, i) + strings.Repeat(",x", n-3) })
		}, []string{"lig"}, 256, `257 columns; at most 256 are allowed`, "bayes", 3},
		{"groups", func(n int) string {
			return table("sub,lig,yield", n, func(i int) string { return fmt.Sprintf("S%d,L%d,%d", i, i%2, i%9) })
		}, []string{"lig"}, 1000, `column "sub": 1001 groups; at most 1000 are allowed`, "bayes", 1},
		{"rows", func(n int) string {
			return table("sub,lig,base,yield", n, func(i int) string { return fmt.Sprintf("S%d,L%d,B%d,%d", i/1000, i%1000/10, i%10, i%7) })
		}, []string{"lig", "base"}, 100_000, `100001 rows; at most 100000 are allowed`, "random", 5},
		{"bytes", func(n int) string { // 1000 rows padded to n bytes
			row := (n - len("sub,lig,yield,pad\n")) / 1000
			extra := n - len("sub,lig,yield,pad\n") - 1000*row
			return table("sub,lig,yield,pad", 1000, func(i int) string {
				pad := row - len(fmt.Sprintf("A,L%d,1,", i)) - 1
				if i == 0 {
					pad += extra
				}
				return fmt.Sprintf("A,L%d,1,%s", i, strings.Repeat("p", pad))
			})
		}, []string{"lig"}, 16 << 20, `csv_data has 16777217 bytes; at most 16777216 are allowed`, "random", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			under := c.csv(c.limit)
			if c.name == "bytes" && len(under) != c.limit {
				t.Fatalf("the CSV has %d bytes, want %d", len(under), c.limit)
			}
			code, body := post(t, url+"/v1/campaigns", upload(under, c.vars, c.planner, c.budgetMax))
			if code != http.StatusCreated {
				t.Fatalf("at the limit: %d %.300s", code, body)
			}
			var st runner.CampaignStatus
			json.Unmarshal([]byte(body), &st)
			code, body = post(t, url+"/v1/campaigns/"+st.Campaign.ID+"/step?n=10", "")
			if json.Unmarshal([]byte(body), &st); code != http.StatusOK || len(st.Steps) != c.budgetMax || !st.Done {
				t.Fatalf("playing at the limit: %d %.300s", code, body)
			}
			code, body = post(t, url+"/v1/campaigns", upload(c.csv(c.limit+1), c.vars, c.planner, c.budgetMax))
			if code != http.StatusBadRequest || !strings.Contains(body, c.wantOver) {
				t.Errorf("over the limit: %d %.300s; want %q", code, body, c.wantOver)
			}
		})
	}
}
