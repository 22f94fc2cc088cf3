package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/knowledge"
	ksqlite "github.com/labmate/labmate/knowledge/sqlite"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// progress records the lines of the progress notifications a client receives (one
// notification carries the lines of up to 100 ms), and how many came, per progress token.
type progress struct {
	mu    sync.Mutex
	msgs  map[string][]string
	count map[string]int
	seen  chan struct{} // signalled (without blocking) on every notification
}

func (p *progress) handle(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
	p.mu.Lock()
	key := fmt.Sprint(r.Params.ProgressToken)
	p.msgs[key] = append(p.msgs[key], strings.Split(r.Params.Message, "\n")...)
	if p.count == nil {
		p.count = map[string]int{}
	}
	p.count[key]++
	p.mu.Unlock()
	select {
	case p.seen <- struct{}{}:
	default:
	}
}

func (p *progress) get(token string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.msgs[token])
}

// waitFor waits until a notification of token matches re and returns its submatches.
func (p *progress) waitFor(t *testing.T, token string, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		for _, m := range p.get(token) {
			if sm := re.FindStringSubmatch(m); sm != nil {
				return sm
			}
		}
		select {
		case <-p.seen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no progress notification of %s matches %s; got %q", token, re, p.get(token))
		}
	}
}

type fixture struct {
	srv   *server.Server
	store protocol.Store
	mem   memory.Store
	lab   *mcp.Lab
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	opts := testutil.KernelOptions(t)
	store := protocol.NewMemStore()
	srv, err := server.New(context.Background(), server.Config{
		Config: runner.Config{Store: store, Campaigns: sweeps{}, Workspaces: t.TempDir(), Prewarm: []string{"python"}, Log: log.New(t.Output(), "", 0), Kernels: pythonKernels{opts}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		testutil.ReplayStore(t, store) // every stream the MCP tools made obeys the state machine
	})
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	docs, err := ksqlite.Open(filepath.Join(t.TempDir(), "docs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docs.Close() })
	if err := docs.Add(context.Background(), &knowledge.Doc{Source: "octave:ode45", Title: "ode45", Format: "help",
		Text: "ode45 solves a set of non-stiff ordinary differential equations with the Dormand-Prince method.\nUse ode15s for stiff problems."}); err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, store: store, mem: mem, lab: mcp.New(srv.Runner, &mcp.Options{Version: "test", Memory: mem, Docs: docs})}
}

// connect returns a client session over the named transport: "memory" (in-process pipes)
// or "http" (streamable HTTP over loopback, mounted at /mcp of the protocol server).
func (f *fixture) connect(t testing.TB, transport string) (*sdk.ClientSession, *progress) {
	t.Helper()
	p := &progress{msgs: map[string][]string{}, seen: make(chan struct{}, 1)}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"},
		&sdk.ClientOptions{ProgressNotificationHandler: p.handle})
	var ct sdk.Transport
	switch transport {
	case "memory":
		st, c := sdk.NewInMemoryTransports()
		ss, err := f.lab.Server().Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		ct = c
	case "http":
		f.srv.Handle("/mcp", f.lab.Handler())
		hs := httptest.NewServer(f.srv)
		t.Cleanup(hs.Close)
		ct = &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}
	}
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, p
}

func call(t *testing.T, ctx context.Context, cs *sdk.ClientSession, token, name string, args any) *sdk.CallToolResult {
	t.Helper()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, r *sdk.CallToolResult) map[string]any {
	t.Helper()
	m, ok := r.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structured content %T, want an object; content: %s", r.StructuredContent, text(r))
	}
	return m
}

func TestMCP(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			cs, p := f.connect(t, transport)
			ctx := context.Background()

			t.Run("tools", func(t *testing.T) {
				var names []string
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tool.Name)
					if tool.InputSchema == nil {
						t.Errorf("%s: no input schema", tool.Name)
					}
				}
				for _, want := range []string{"exec", "interrupt", "kernels", "search_memory", "search_skills", "save_fact", "save_skill", "update_skill", "skill_get",
					"campaign_start", "campaign_step", "campaign_status", "docs_search"} {
					if !slices.Contains(names, want) {
						t.Errorf("tools %v: %s is missing", names, want)
					}
				}
			})

			t.Run("kernels", func(t *testing.T) {
				r := call(t, ctx, cs, "", "kernels", map[string]any{})
				if r.IsError {
					t.Fatalf("kernels: %s", text(r))
				}
				ks := structured(t, r)["kernels"].([]any)
				k := ks[0].(map[string]any)
				if k["name"] != "python" || !strings.HasPrefix(fmt.Sprint(k["version"]), "3.") {
					t.Errorf("kernels = %v, want python 3.x", ks)
				}
			})

			t.Run("exec streams progress", func(t *testing.T) {
				r := call(t, ctx, cs, "run1", "exec", map[string]any{"kernel": "python",
					"code": "x = 41\nimport time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(0.05)\n"})
				if r.IsError {
					t.Fatalf("exec: %s", text(r))
				}
				out := structured(t, r)
				if out["status"] != "completed" || out["output"] != "line 0\nline 1\nline 2\n" {
					t.Errorf("exec = %v", out)
				}
				got := p.get("run1")
				if !slices.Contains(got, "line 1") || !strings.Contains(got[0], "acknowledged") {
					t.Errorf("progress notifications %q: want the ack, then each line", got)
				}
				if !strings.Contains(text(r), "line 2") {
					t.Errorf("text content lacks the output: %s", text(r))
				}
			})

			t.Run("cell error is a tool error", func(t *testing.T) {
				r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": "raise ValueError('boom')"})
				if !r.IsError || !strings.Contains(text(r), "ValueError") {
					t.Errorf("exec raising: isError=%t, %s", r.IsError, text(r))
				}
			})

			t.Run("bad arguments are tool errors", func(t *testing.T) {
				for _, args := range []map[string]any{
					{"kernel": "python"},                      // no code
					{"kernel": 3, "code": "print(1)"},         // wrong type
					{"kernel": "fortran", "code": "print(1)"}, // unknown kernel
					{"kernel": "python", "code": "print(1)", "hotfix": "sometimes"},
					{"kernel": "python", "code": "print(1)", "watch": []string{"x <<< 3"}},
					{"kernel": "python", "code": "print(1)", "profile": "fortran"},
					{"kernel": "python", "code": "print(1)", "perception": map[string]string{"no_such_setting": "3"}},
				} {
					r := call(t, ctx, cs, "", "exec", args)
					if !r.IsError || text(r) == "" {
						t.Errorf("exec %v: isError=%t %q, want a tool error saying why", args, r.IsError, text(r))
					}
				}
				r := call(t, ctx, cs, "", "interrupt", map[string]any{"operation_id": "no-such-op"})
				if !r.IsError || !strings.Contains(text(r), "no-such-op") {
					t.Errorf("interrupt of an unknown operation: isError=%t %q", r.IsError, text(r))
				}
			})

			t.Run("perception reads a followed file", func(t *testing.T) {
				// Nothing is printed: the loss goes to a log file the call names, and turns NaN.
				r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "follow": []string{"train.log"},
					"code": "import time\nwith open('train.log', 'w') as f:\n    for i in range(200):\n" +
						"        f.write('epoch %d | loss %s\\n' % (i, 1.0 / (i + 1) if i < 5 else 'nan'))\n        f.flush()\n        time.sleep(0.05)\n"})
				if !r.IsError || !strings.Contains(text(r), "nonfinite") {
					t.Errorf("a NaN loss in the followed log: isError=%t %s; want it stopped by perception", r.IsError, text(r))
				}
			})

			t.Run("cancel interrupts and keeps the workspace", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				errc := make(chan error, 1)
				go func() {
					params := &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"kernel": "python",
						"code": "import time\ny = 7\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)\n"}}
					params.SetProgressToken("long")
					_, err := cs.CallTool(cctx, params)
					errc <- err
				}()
				op := p.waitFor(t, "long", regexp.MustCompile(`operation (\S+) of session (\S+) acknowledged`))
				p.waitFor(t, "long", regexp.MustCompile(`^tick 2$`))
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled call returned %v", err)
				}
				waitTerminal(t, f.store, op[2], op[1], protocol.ReasonInterrupted)
				r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": "print(x + 1, y)"})
				if r.IsError || structured(t, r)["output"] != "42 7\n" {
					t.Errorf("after the interrupt: %s", text(r))
				}
			})

			t.Run("interrupt tool", func(t *testing.T) {
				done := make(chan *sdk.CallToolResult, 1)
				go func() {
					params := &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"kernel": "python", "session": "shared-" + transport,
						"code": "import time\nfor i in range(600):\n    print('tock', i, flush=True)\n    time.sleep(0.05)\n"}}
					params.SetProgressToken("other")
					r, err := cs.CallTool(ctx, params)
					if err != nil {
						t.Error(err)
					}
					done <- r
				}()
				op := p.waitFor(t, "other", regexp.MustCompile(`operation (\S+) of session (\S+) acknowledged`))
				p.waitFor(t, "other", regexp.MustCompile(`^tock 1$`))
				r := call(t, ctx, cs, "", "interrupt", map[string]any{"operation_id": op[1], "session": op[2], "why": "test"})
				if r.IsError {
					t.Fatalf("interrupt: %s", text(r))
				}
				res := <-done
				if res == nil || !res.IsError || structured(t, res)["reason"] != "interrupted" {
					t.Fatalf("interrupted exec: %v", res)
				}
			})

			t.Run("memory", func(t *testing.T) {
				r := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": "print('overshoot 31%')"})
				if r.IsError {
					t.Fatal(text(r))
				}
				op := structured(t, r)["operation_id"]
				r = call(t, ctx, cs, "", "save_fact", map[string]any{"text": "Kp above 4 overshoots the maglev plant by 30%",
					"kind": "boundary", "tags": []string{"maglev"}, "evidence": []string{"overshoot 31%"}})
				if r.IsError {
					t.Fatalf("save_fact: %s", text(r))
				}
				fact := structured(t, r)["fact"].(map[string]any)
				if fmt.Sprint(fact["operations"]) != fmt.Sprintf("[%v]", op) || fact["namespace"] != "user" {
					t.Errorf("fact %v: want it in namespace user, linked to operation %v", fact, op)
				}
				// The same fact in other words is merged; another number is kept beside it.
				r = call(t, ctx, cs, "", "save_fact", map[string]any{"text": "On the maglev plant, Kp above 4 overshoots by 30 percent"})
				if r.IsError || structured(t, r)["merged"] != true {
					t.Errorf("save_fact of the same fact reworded: %s", text(r))
				}
				r = call(t, ctx, cs, "", "save_fact", map[string]any{"text": "Kp above 4 overshoots the maglev plant by 13%"})
				if r.IsError || structured(t, r)["merged"] == true || structured(t, r)["resolution"] != "side by side" {
					t.Errorf("save_fact of another number: %s", text(r))
				}
				r = call(t, ctx, cs, "", "search_memory", map[string]any{"query": "maglev overshoot", "kinds": []string{"boundary"}})
				facts := structured(t, r)["facts"].([]any)
				if r.IsError || len(facts) != 1 || facts[0].(map[string]any)["id"] != fact["id"] {
					t.Errorf("search_memory: %s", text(r))
				}
				r = call(t, ctx, cs, "", "save_skill", map[string]any{"name": "tune-pid", "description": "Tune a PID loop by stepping Kp down",
					"body": "1. step response\n2. lower Kp until overshoot < 5%\n", "tags": []string{"control"}})
				if r.IsError || structured(t, r)["created"] != true {
					t.Fatalf("save_skill: %s", text(r))
				}
				// A name that exists is refused, never overwritten; update_skill revises it.
				r = call(t, ctx, cs, "", "save_skill", map[string]any{"name": "tune-pid", "description": "Something else", "body": "other"})
				if !r.IsError || !strings.Contains(text(r), "update_skill") {
					t.Errorf("save_skill over an existing skill: %s", text(r))
				}
				r = call(t, ctx, cs, "", "update_skill", map[string]any{"name": "tune-pid", "body": "1. step response\n2. lower Kp until overshoot < 5%\n3. check the settling time\n",
					"reason": "the settling time matters too", "outcome": "success"})
				if sk, _ := structured(t, r)["skill"].(map[string]any); r.IsError || sk["version"] != 2.0 || sk["successes"] != 1.0 || fmt.Sprint(sk["operations"]) != fmt.Sprintf("[%v]", op) {
					t.Errorf("update_skill: %s %v", text(r), structured(t, r))
				}
				r = call(t, ctx, cs, "", "search_skills", map[string]any{"query": "PID overshoot"})
				skills := structured(t, r)["skills"].([]any)
				if r.IsError || len(skills) != 1 || skills[0].(map[string]any)["name"] != "tune-pid" {
					t.Errorf("search_skills: %s", text(r))
				}
				r = call(t, ctx, cs, "", "skill_get", map[string]any{"name": "tune-pid"})
				if r.IsError || !strings.Contains(structured(t, r)["body"].(string), "lower Kp") || !strings.Contains(text(r), "lower Kp") {
					t.Errorf("skill_get: %s", text(r))
				}

				// Resources: each skill's SKILL.md, and the memory export.
				var uris []string
				for res, err := range cs.Resources(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					uris = append(uris, res.URI)
				}
				const skillURI = "labmate://skills/user/skills/tune-pid"
				if !slices.Contains(uris, skillURI) || !slices.Contains(uris, "labmate://memory/export") {
					t.Errorf("resources %v: want %s and the export", uris, skillURI)
				}
				rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: skillURI})
				if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "name: tune-pid") || !strings.Contains(rr.Contents[0].Text, "lower Kp") {
					t.Errorf("reading %s: %v %+v", skillURI, err, rr)
				}
				if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "labmate://skills/user/skills/no-such"}); err == nil {
					t.Error("reading an unknown skill succeeded")
				}
				rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "labmate://memory/export"})
				if err != nil {
					t.Fatal(err)
				}
				var files []string
				var all strings.Builder
				for _, c := range rr.Contents {
					files = append(files, strings.TrimPrefix(c.URI, "labmate://memory/export/"))
					all.WriteString(c.Text)
				}
				if !slices.Contains(files, "skills/tune-pid/SKILL.md") || !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "facts/") }) ||
					!strings.Contains(all.String(), "overshoots the maglev plant") {
					t.Errorf("the export holds %v", files)
				}

				if err := f.mem.Freeze(ctx, &memory.FreezeParams{Namespace: "frozen", Frozen: true, Actor: "test"}); err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					tool string
					args map[string]any
					want string
				}{
					{"save_fact", map[string]any{"text": "x", "kind": "rumour"}, "rumour"},
					{"save_fact", map[string]any{"text": "  "}, "empty text"},
					{"save_fact", map[string]any{"text": "x", "namespace": "frozen"}, "frozen"},
					{"save_fact", map[string]any{"text": "x", "namespace": "Bad NS"}, "namespace"},
					{"save_fact", map[string]any{"text": "x", "tried": []string{"dt"}}, "name = value"},
					{"search_memory", map[string]any{"query": "x", "kinds": []string{"rumour"}}, "not a kind"},
					{"search_memory", map[string]any{"query": 3}, "query"},
					{"save_skill", map[string]any{"name": "Bad Name", "description": "d", "body": "b"}, "Bad Name"},
					{"update_skill", map[string]any{"name": "tune-pid", "reason": ""}, "reason"},
					{"update_skill", map[string]any{"name": "tune-pid", "reason": "r", "outcome": "maybe"}, "outcome"},
					{"update_skill", map[string]any{"name": "no-such-skill", "reason": "r", "outcome": "success"}, "not found"},
					{"skill_get", map[string]any{"name": "no-such-skill"}, "not found"},
					{"skill_get", map[string]any{}, "name"},
				} {
					r := call(t, ctx, cs, "", c.tool, c.args)
					if !r.IsError || !strings.Contains(text(r), c.want) {
						t.Errorf("%s %v: isError=%t %q; want a tool error mentioning %q", c.tool, c.args, r.IsError, text(r), c.want)
					}
				}
			})

			t.Run("docs", func(t *testing.T) {
				r := call(t, ctx, cs, "", "docs_search", map[string]any{"query": "non-stiff differential equations"})
				hits := structured(t, r)["hits"].([]any)
				if r.IsError || len(hits) != 1 || !strings.HasPrefix(hits[0].(map[string]any)["cite"].(string), "octave:ode45:") ||
					!strings.Contains(text(r), "Dormand-Prince") {
					t.Errorf("docs_search: %s", text(r))
				}
				if r := call(t, ctx, cs, "", "docs_search", map[string]any{"query": " "}); !r.IsError || !strings.Contains(text(r), "empty") {
					t.Errorf("docs_search with an empty query: %s", text(r))
				}
			})

			t.Run("campaign", func(t *testing.T) {
				r := call(t, ctx, cs, "", "campaign_start", map[string]any{"csv_data": reactions, "objective": "yield",
					"vars": []string{"lig", "base"}, "groups": []string{"sub"}, "group": "B", "budget": 3})
				if r.IsError {
					t.Fatalf("campaign_start: %s", text(r))
				}
				id := structured(t, r)["id"]
				r = call(t, ctx, cs, "", "campaign_step", map[string]any{"id": id, "turns": 2})
				turns := structured(t, r)["turns"].([]any)
				// B's space is L1,B1=5 L1,B2=50 L2,B1=0 (mean 55/3, max 50): the sweep's second turn finds the best.
				if r.IsError || len(turns) != 2 || turns[1].(map[string]any)["nma"] != 1.0 {
					t.Fatalf("campaign_step: %s", text(r))
				}
				r = call(t, ctx, cs, "", "campaign_step", map[string]any{"id": id, "turns": 5})
				out := structured(t, r)
				if r.IsError || len(out["turns"].([]any)) != 1 || out["done"] != true || out["played"] != 3.0 {
					t.Errorf("the last turn: %s", text(r))
				}
				r = call(t, ctx, cs, "", "campaign_status", map[string]any{"id": id})
				out = structured(t, r)
				if r.IsError || len(out["turns"].([]any)) != 3 || out["best"].(map[string]any)["value"] != 50.0 {
					t.Errorf("campaign_status: %s", text(r))
				}
				for _, c := range []struct {
					tool string
					args map[string]any
					want string
				}{
					{"campaign_start", map[string]any{"csv_data": reactions, "objective": "yield", "vars": []string{"lig"}, "budget": -1}, "budget"},
					{"campaign_start", map[string]any{"csv_data": reactions, "objective": "nope", "vars": []string{"lig"}, "budget": 2}, "nope"},
					{"campaign_start", map[string]any{"csv_data": reactions, "objective": "yield", "vars": []string{"lig", "base"}, "groups": []string{"sub"}, "group": "Z", "budget": 2}, "Z"},
					{"campaign_step", map[string]any{"id": "no-such"}, "no-such"},
					{"campaign_status", map[string]any{"id": "no-such"}, "no-such"},
				} {
					r := call(t, ctx, cs, "", c.tool, c.args)
					if !r.IsError || !strings.Contains(text(r), c.want) {
						t.Errorf("%s %v: isError=%t %q; want a tool error mentioning %q", c.tool, c.args, r.IsError, text(r), c.want)
					}
				}
			})
		})
	}
}

// reactions is a small fully mapped dataset: two substrates, B missing one well.
const reactions = `sub,lig,base,yield
A,L1,B1,10
A,L1,B2,20
A,L2,B1,30
A,L2,B2,40
B,L1,B1,5
B,L1,B2,50
B,L2,B1,0
`

// sweeps play a dataset group with a planner that tries its conditions in order.
type sweeps struct{}

func (sweeps) Setup(_ context.Context, spec *runner.CampaignSpec) (*runner.CampaignSetup, error) {
	tb, err := dataset.Read(strings.NewReader(spec.CSVData), "csv_data", &dataset.Options{Objective: spec.Objective, Vars: spec.Vars, Groups: spec.Groups})
	if err != nil {
		return nil, err
	}
	g := tb.Groups[0]
	if spec.Group != "" {
		if g, err = tb.Group(spec.Group); err != nil {
			return nil, err
		}
	}
	return &runner.CampaignSetup{Instrument: g, Planner: &sweep{space: g.Space()}, Scale: g.Scale,
		Campaign: &lab.Campaign{Space: tb.Name, Objective: tb.Objective, Group: g.Key, Planner: "sweep"}}, nil
}

// sweep proposes the feasible conditions of a space in order.
type sweep struct{ space *lab.Space }

func (p *sweep) Next(_ context.Context, steps []lab.Step) (*lab.Proposal, error) {
	if len(steps) >= p.space.Size() {
		return nil, lab.ErrExhausted
	}
	if p.space.Feasible != nil {
		return &lab.Proposal{Conditions: p.space.Conditions(p.space.Feasible[len(steps)])}, nil
	}
	idx, k := make([]int, len(p.space.Vars)), len(steps) // the k-th point of the full product
	for i := len(idx) - 1; i >= 0; i-- {
		n := len(p.space.Vars[i].Levels)
		idx[i], k = k%n, k/n
	}
	return &lab.Proposal{Conditions: p.space.Conditions(idx)}, nil
}

// waitTerminal waits until the operation's terminal message is in the log and checks its reason.
func waitTerminal(t *testing.T, store protocol.Store, session, op string, reason protocol.Reason) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for m, err := range store.Operation(context.Background(), session, op) {
			if err != nil {
				t.Fatal(err)
			}
			if m.Type == protocol.TypeFailed {
				var f protocol.Failed
				m.Decode(&f)
				if f.Reason != reason || f.Result == nil || !f.Result.WorkspaceOK {
					t.Fatalf("operation ended %+v, want %s with the workspace kept", f, reason)
				}
				return
			}
			if m.Type == protocol.TypeComplete {
				t.Fatalf("operation completed, want it %s", reason)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("operation %s did not end", op)
}

// pythonKernels starts sandboxed Python kernels with opts, each in its workspace, and lists
// Python with its version.
type pythonKernels struct{ opts kernel.Options }

func (k pythonKernels) Start(ctx context.Context, name, workspace string) (kernel.Kernel, error) {
	if name != "python" {
		return nil, fmt.Errorf("unknown kernel %q", name)
	}
	o := k.opts
	o.Workspace = workspace
	return python.Start(ctx, &o)
}

func (pythonKernels) List(ctx context.Context) []runner.KernelInfo {
	v, err := python.Version(ctx)
	ki := runner.KernelInfo{Name: "python", Version: v}
	if err != nil {
		ki.Error = err.Error()
	}
	return []runner.KernelInfo{ki}
}
