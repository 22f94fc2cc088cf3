package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// writeTrials writes a result folder holding trials.
func writeTrials(t *testing.T, dir string, trials ...eval.Trial) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, tr := range trials {
		line, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return write(t, dir, eval.TrialsFile, b.String())
}

// labmate eval report puts two result folders side by side: two models, one of them in two
// modes, as one table on stdout and as report.md, report.csv and plots in --out.
func TestEvalReport(t *testing.T) {
	dir := t.TempDir()
	trial := func(model, mode, task string, n int, passed bool, tokens int64) eval.Trial {
		tr := eval.Trial{Benchmark: "scibench", Task: task, Group: "atkins", Mode: mode, Model: model, Trial: n, Passed: passed, Tokens: tokens,
			Modules: []llm.ModuleUsage{{Module: "plan", Calls: 1, Usage: llm.Usage{InputTokens: tokens / 2}}, {Module: "code", Calls: 2, Usage: llm.Usage{InputTokens: tokens / 2}}}}
		if passed {
			tr.Score = 100
		}
		return tr
	}
	writeTrials(t, filepath.Join(dir, "a"),
		trial("openai:gpt-4.1", "agent", "atkins/1.1", 0, true, 1000), trial("openai:gpt-4.1", "agent", "atkins/1.1", 1, false, 1200),
		trial("openai:gpt-4.1", "agent", "atkins/1.2", 0, true, 800), trial("openai:gpt-4.1", "agent", "atkins/1.2", 1, true, 600))
	writeTrials(t, filepath.Join(dir, "b"),
		trial("ollama:qwen3:8b", "codeact", "atkins/1.1", 0, false, 400), trial("ollama:qwen3:8b", "codeact", "atkins/1.2", 0, true, 300),
		trial("ollama:qwen3:8b", "agent+no-reflect", "atkins/1.1", 0, true, 500), trial("ollama:qwen3:8b", "agent+no-reflect", "atkins/1.2", 0, true, 700))
	out, errOut, code := labmate(t, dir, "", "eval", "report", "a", "b", "--out", "cmp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	want := [][]string{
		{"folder", "benchmark", "model", "mode", "k", "items", "trials", "errors", "score", "pass", "pass@k", "stability", "tokens"},
		{"a", "scibench", "openai:gpt-4.1", "agent", "2", "2", "4", "0", "75.0", "75.0%", "100.0%", "50.0%–100.0%", "900"},
		{"b", "scibench", "ollama:qwen3:8b", "agent+no-reflect", "1", "2", "2", "0", "100.0", "100.0%", "100.0%", "100.0%–100.0%", "600"},
		{"b", "scibench", "ollama:qwen3:8b", "codeact", "1", "2", "2", "0", "50.0", "50.0%", "50.0%", "50.0%–50.0%", "350"},
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); len(got) < len(w) || strings.Join(got[:len(w)], " ") != strings.Join(w, " ") {
			t.Errorf("line %d: %q, want it to start with %q", i, lines[i], strings.Join(w, " "))
		}
	}
	if !strings.Contains(out, "tokens per module") {
		t.Errorf("no token table:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "cmp", "report.md"))
	if err != nil || !strings.Contains(string(md), "| a | scibench | openai:gpt-4.1 | agent | 2 | plan | 1.00 | 450 | 0 | 50.0% |") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
	for _, f := range []string{"report.csv", "report-tokens.csv", "report-score.png", "report-tokens.png"} {
		if _, err := os.Stat(filepath.Join(dir, "cmp", f)); err != nil {
			t.Error(err)
		}
	}
	// A folder without trials, and a bad mode, are refused before anything runs.
	if _, errOut, code = labmate(t, dir, "", "eval", "report", "a", t.TempDir()); code != 2 || !strings.Contains(errOut, "holds no trials") {
		t.Errorf("an empty folder: exit %d, %s", code, errOut)
	}
	if _, errOut, code = labmate(t, dir, "", "eval", "engdesign", "--mode", "oracle"); code != 2 || !strings.Contains(errOut, `--mode "oracle"`) {
		t.Errorf("--mode oracle: exit %d, %s", code, errOut)
	}
}

// labmate eval campaign, small: every planner's row on both datasets, with the llm planner's
// row from --model (a scripted model choosing valid conditions), and the reference curves.
func TestEvalCampaign(t *testing.T) {
	data := reactionsDir(t)
	var turns []llmtest.Turn
	for range 30 * 2 { // 15 + 15 groups × 2 turns
		turns = append(turns, llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			var schema struct {
				Properties struct {
					Choice struct {
						Properties map[string]struct{ Enum []string }
					}
				}
			}
			if err := json.Unmarshal(c.Request.Output.Schema, &schema); err != nil {
				t.Error(err)
			}
			n := len(c.Request.Messages) / 2 // the turn: 0, 1
			choice := map[string]string{}
			for v, p := range schema.Properties.Choice.Properties {
				choice[v] = p.Enum[n%len(p.Enum)]
			}
			return llmtest.JSON(map[string]any{"observation": "trying the next levels", "choice": choice})
		}})
	}
	srv := llmtest.NewServer(t, turns...)
	env := modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	dir := t.TempDir()
	out, errOut, code := labmateEnv(t, env, dir, "", "eval", "campaign", "--dataset", data, "--seeds", "1", "--turns", "2", "--model", "openai:gpt-test", "--out", "plots", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Rows []struct {
			Dataset, Planner string
			Campaigns        int
			Invalid          float64 `json:"invalid_fraction"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Dataset+" "+r.Planner)
		if r.Planner == "llm" && (r.Campaigns != 15 || r.Invalid != 0) {
			t.Errorf("llm row %+v, want 15 campaigns without an invalid turn", r)
		}
	}
	for _, w := range []string{"suzuki_perera2018 bayes+memory", "suzuki_perera2018 llm", "suzuki_perera2018 coscientist_log_gpt-4_no_prior",
		"buchwald_hartwig_game_space llm", "buchwald_hartwig_game_space random_uniform_without_replacement_exact"} {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("no row %q in %q", w, got)
		}
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns left", srv.Remaining())
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "suzuki_perera2018.png")); err != nil {
		t.Error(err)
	}
}
