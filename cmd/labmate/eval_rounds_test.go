package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/memory"
)

// vaults is a benchmark of its own for the rounds: item NAME asks for the secret number of the
// vault NAME, which no model knows without memory.
type vaults struct{}

var vaultNumbers = map[string]string{"alpha": "17", "beta": "23", "gamma": "31"}

func (vaults) Name() string { return "vaults" }

func (vaults) Items(string) ([]eval.Item, error) {
	var items []eval.Item
	for _, n := range []string{"alpha", "beta", "gamma"} {
		items = append(items, eval.Item{ID: n, Goal: "What is the secret number of the vault named " + n + "?", Kernel: "python"})
	}
	return items, nil
}

func (vaults) Grade(_ context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	if strings.TrimSpace(answer) == vaultNumbers[it.ID] {
		return &eval.Grade{Score: 100, Passed: true}, nil
	}
	return &eval.Grade{}, nil
}

// vaultFact is a fact of memory as the prompt shows it.
var vaultFact = regexp.MustCompile(`The secret number of the vault named (\w+) is (\d+)`)

// vaultPolicy is the scripted model of both models: it plans one step; in the code module it
// answers the number when a memory fact in its prompt gives it, else it answers 0 and saves the
// number (it found out too late) with save_fact — model gpt-b never saves gamma's. Every call
// costs 100 prompt tokens plus 100 per vault whose fact the prompt shows, and 10 output tokens.
func vaultPolicy(c *llmtest.Call) llmtest.Turn {
	req := c.Request
	var all strings.Builder
	all.WriteString(req.System)
	for _, m := range req.Messages {
		all.WriteString("\n" + m.Content)
	}
	known := map[string]string{}
	for _, m := range vaultFact.FindAllStringSubmatch(all.String(), -1) {
		known[m[1]] = m[2]
	}
	name := strings.TrimSuffix(strings.TrimPrefix(regexp.MustCompile(`vault named \w+\?`).FindString(req.Messages[0].Content), "vault named "), "?")
	var turn llmtest.Turn
	switch {
	case strings.HasPrefix(req.System, "You are the planning module"):
		turn = agenttest.Plan("look up the number", "find the vault's secret number", "the number is known")
	case known[name] != "":
		turn = agenttest.FinalAnswer(known[name])
	case c.Model == "gpt-b" && name == "gamma":
		turn = agenttest.FinalAnswer("0")
	default:
		save := agenttest.Args(learn.SaveFactIn{Text: fmt.Sprintf("The secret number of the vault named %s is %s.", name, vaultNumbers[name])})
		turn = llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "save_fact", Arguments: json.RawMessage(save)},
			{Name: agent.ToolFinalAnswer, Arguments: json.RawMessage(agenttest.Args(agent.FinalAnswer{Answer: "0"}))}}}
	}
	turn.Usage = llm.Usage{InputTokens: int64(100 + 100*len(known)), OutputTokens: 10}
	return turn
}

// Rounds with two scripted models produce the R1–R3 table and a 2×2 transfer matrix: R1 is
// cold, R2 and R3 recall what R1 saved in the model's own namespace, a transfer round reads the
// other model's frozen namespace and writes only into its own, and a rerun makes no model call.
func TestEvalRounds(t *testing.T) {
	old := suites
	suites = append(suites, suite{"vaults", "secret numbers", "benchmarks/vaults", func(string) (eval.Benchmark, error) { return vaults{}, nil }})
	t.Cleanup(func() { suites = old })
	t.Chdir(t.TempDir())
	srv := llmtest.NewServer(t)
	for _, kv := range modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for range 100 {
		srv.Add(llmtest.Turn{Reply: vaultPolicy})
	}
	args := []string{"eval", "rounds", "--suite", "vaults", "--dataset", ".", "--model", "openai:gpt-a,openai:gpt-b",
		"--transfer", "openai:gpt-a,openai:gpt-b", "--out", "out", "--json"}
	out, errOut, code := execute(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var r eval.Rounds
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// By hand. A, R1: alpha sees no fact (2 calls of 100 prompt tokens), beta alpha's (200),
	// gamma alpha's and beta's (300), all answer 0 and save theirs: prompt 400 a trial, 420
	// tokens. R2 and R3 see all three: 800 prompt, 820 tokens, all right: +100 pp for 400 added
	// tokens, 250 pp per 1,000. B never saves gamma's: R1 as A's, R2 and R3 see two facts
	// (600, 620), alpha and beta right: +66.7 pp for 200 tokens, 333.3 pp per 1,000. B with A's
	// memory sees three (800, 820), all right: +33.3 pp against its R3 for 200 tokens, 166.7
	// per 1,000; A with B's sees two (600, 620), gamma wrong: −33.3 pp, fewer tokens, no ratio.
	type row struct {
		model, round                      string
		pass, tokens, prompt, added, gain float64
		per                               float64 // NaN: none
	}
	none := math.NaN()
	want := []row{
		{"openai:gpt-a", "R1", 0, 420, 400, 0, 0, none},
		{"openai:gpt-a", "R2", 1, 820, 800, 400, 100, 250},
		{"openai:gpt-a", "R3", 1, 820, 800, 400, 100, 250},
		{"openai:gpt-b", "R1", 0, 420, 400, 0, 0, none},
		{"openai:gpt-b", "R2", 2.0 / 3, 620, 600, 200, 200.0 / 3, 1000.0 / 3},
		{"openai:gpt-b", "R3", 2.0 / 3, 620, 600, 200, 200.0 / 3, 1000.0 / 3},
		{"openai:gpt-b", "from-openai:gpt-a", 1, 820, 800, 200, 100.0 / 3, 500.0 / 3},
		{"openai:gpt-a", "from-openai:gpt-b", 2.0 / 3, 620, 600, -200, -100.0 / 3, none},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 || math.IsNaN(a) && math.IsNaN(b) }
	if len(r.Rounds) != len(want) {
		t.Fatalf("%d rounds, want %d:\n%s", len(r.Rounds), len(want), out)
	}
	for i, w := range want {
		g := r.Rounds[i]
		per := none
		if g.PPPer1k != nil {
			per = *g.PPPer1k
		}
		if g.Model != w.model || g.Round != w.round || g.Trials != 3 || !near(g.PassRate, w.pass) || !near(g.Score, 100*w.pass) ||
			!near(g.Tokens, w.tokens) || !near(g.Prompt, w.prompt) || !near(g.Added, w.added) || !near(g.Gain, w.gain) || !near(per, w.per) {
			t.Errorf("round %d: %+v (pp/1k %v), want %+v", i, *g, per, w)
		}
	}
	m := r.Matrix
	cells := func(v [][]*float64) []float64 {
		var out []float64
		for _, row := range v {
			for _, c := range row {
				out = append(out, *c)
			}
		}
		return out
	}
	if d := r.Rounds[6].Dir; d != filepath.Join("out", "openai-gpt-b", "from-openai-gpt-a") {
		t.Errorf("B with A's memory in %s", d)
	}
	if m == nil || !slices.Equal(m.Models, []string{"openai:gpt-a", "openai:gpt-b"}) ||
		!slices.EqualFunc(cells(m.PassRate), []float64{1, 1, 2.0 / 3, 2.0 / 3}, near) ||
		!slices.EqualFunc(cells(m.Gain), []float64{0, 100.0 / 3, -100.0 / 3, 0}, near) {
		t.Errorf("matrix %+v\n%s", m, out)
	}

	// Memory: each model's facts in its namespace, written by its R1's trials; frozen; the
	// transfer rounds wrote only beside them (A with B's memory saved gamma's; B with A's nothing).
	ms, err := (&memoryFlags{store: filepath.Join("out", "memory.db")}).open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	nss, err := ms.Namespaces(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]memory.Namespace{}
	for _, ns := range nss {
		got[ns.Name] = ns
	}
	if a, b, ab := got["openai-gpt-a"], got["openai-gpt-b"], got["openai-gpt-a-from-openai-gpt-b"]; a.Facts != 3 || !a.Frozen || b.Facts != 2 || !b.Frozen || ab.Facts != 1 || ab.Frozen ||
		got["openai-gpt-b-from-openai-gpt-a"].Entries != 0 || len(nss) != 3 {
		t.Errorf("namespaces %+v", nss)
	}
	for _, model := range []string{"openai-gpt-a", "openai-gpt-b"} {
		r1, _, err := eval.ReadTrials(filepath.Join("out", model, "R1"))
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string]bool{}
		for _, tr := range r1 {
			runs[tr.RunID] = true
		}
		for res, err := range ms.Search(t.Context(), &memory.Query{Namespaces: []string{model}}) {
			if err != nil {
				t.Fatal(err)
			}
			if res.Fact == nil || !runs[res.Fact.Provenance.Session] {
				t.Errorf("%s: %+v was not written by its R1 (runs %v)", model, res.Fact, runs)
			}
		}
		for ch, err := range ms.History(t.Context(), &memory.HistoryParams{Namespace: model}) {
			if err != nil {
				t.Fatal(err)
			}
			if ch.Event != memory.EventAdd && ch.Event != memory.EventFreeze {
				t.Errorf("%s: %+v: only R1's additions and the freeze are expected", model, ch)
			}
		}
	}

	// The files, and a rerun that resumes every round: the same table, no model call.
	md, err := os.ReadFile(filepath.Join("out", "rounds.md"))
	if err != nil || !strings.Contains(string(md), "| openai:gpt-b | R2 | 3 | 66.7 | 66.7% | 620 | 600 | +200 | +66.7 | 333.3 |") ||
		!strings.Contains(string(md), "| openai:gpt-b | 66.7% (-33.3 pp) | 66.7% (own R3) |") {
		t.Errorf("rounds.md: %v\n%s", err, md)
	}
	f, err := os.Open(filepath.Join("out", "rounds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 9 || recs[8][2] != "openai:gpt-b" || recs[8][10] != "" {
		t.Errorf("rounds.csv: %v %q", err, recs)
	}
	calls := len(srv.Calls())
	text, errOut, code := execute(t, args[:len(args)-1]...)
	if code != 0 || len(srv.Calls()) != calls || !strings.Contains(errOut, "3 of 3 trials are done; 0 to run") ||
		!strings.Contains(text, "transfer matrix") {
		t.Fatalf("rerun: exit %d, %d new calls\n%s\n%s", code, len(srv.Calls())-calls, text, errOut)
	}
}
