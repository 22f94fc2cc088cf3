package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// readmeModel answers whatever labmate asks, as a willing model would: a one-step plan, code
// that runs in Octave and Python alike, an accepting review, the final answer, a campaign's
// next experiment, a trace's facts.
func readmeModel(c *llmtest.Call) llmtest.Turn {
	r := c.Request
	if r.Output != nil {
		switch r.Output.Name {
		case "plan":
			return llmtest.JSON(agent.Plan{Goal: "the task's answer", Steps: []agent.Step{
				{Title: "compute", Action: "compute the answer", Tool: agent.ToolRunCode, Checkpoint: "x = 42 is printed"}}})
		case "reflection":
			return llmtest.JSON(map[string]string{"decision": "accept", "reasons": "x = 42 was printed", "summary": "x = 42"})
		case "judgement":
			return llmtest.JSON(map[string]string{"state": "Normal", "reason": "the output is as expected"})
		case "experiment":
			return llmtest.JSON(map[string]any{"observation": "try the next combination", "choice": experiment(r.Output.Schema, c.N)})
		case "extract_facts":
			return llmtest.JSON(map[string]any{"facts": []map[string]any{{"text": "for 1/(s^2+s), a PD controller with damping ratio 0.8 overshoots 1.5%",
				"kind": "observation", "tags": []string{"pid"}, "evidence": "overshoot 1.5% for every pass"}}})
		case "memory_operations":
			return llmtest.JSON(map[string]any{"operations": []map[string]any{{"event": "ADD", "id": nil, "fact": 0, "text": "", "reason": "new"}}})
		}
	}
	tools := map[string]bool{}
	for _, s := range r.Tools {
		tools[s.Name] = true
	}
	last := r.Messages[len(r.Messages)-1]
	switch {
	case tools[agent.ToolRunCode] && last.Role != llm.RoleTool:
		return llmtest.CallTool(agent.ToolRunCode, `{"code": "x = 6 * 7"}`)
	case tools[agent.ToolFinalAnswer]:
		return llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "x = 42"}`)
	}
	return llmtest.Text("x = 42, so the answer is \\boxed{42}")
}

// experiment picks, for call n, a level of each variable of a campaign's experiment schema.
func experiment(schema json.RawMessage, n int) map[string]string {
	var s struct {
		Properties struct {
			Choice struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"choice"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	var names []string
	for k := range s.Properties.Choice.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	choice := map[string]string{}
	for i, k := range names {
		levels := s.Properties.Choice.Properties[k].Enum
		if len(levels) > 0 {
			choice[k] = levels[(n*(2*i+1)+i)%len(levels)]
		}
	}
	return choice
}

// webServer stands in for SearxNG, arXiv, Crossref and the page the README fetches.
func webServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"query": %q, "results": [{"url": "http://%s/bdf", "title": "BDF methods", "content": "Backward differentiation formulas suit stiff problems.", "engine": "x"}]}`, r.URL.Query().Get("q"), r.Host)
		case "/api/query":
			w.Header().Set("Content-Type", "application/atom+xml")
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2304.05332v1</id>`+
				`<title>Emergent autonomous scientific research capabilities of large language models</title><summary>An agent that designs, plans and performs experiments.</summary>`+
				`<published>2023-04-11T00:00:00Z</published><author><name>Daniil A. Boiko</name></author><link href="http://arxiv.org/abs/2304.05332v1" rel="alternate" type="text/html"/></entry></feed>`)
		case "/works":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status": "ok", "message-type": "work-list", "message": {"items": [{"DOI": "10.1038/s41586-023-06792-0", "URL": "https://doi.org/10.1038/s41586-023-06792-0",`+
				` "title": ["Autonomous chemical research with large language models"], "container-title": ["Nature"], "author": [{"given": "Daniil A.", "family": "Boiko"}], "published": {"date-parts": [[2023, 12, 20]]}}]}}`)
		case "/paper.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			io.WriteString(w, tinyPDF)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// tinyPDF is a one-page PDF whose text is "Autonomous chemical research", with the
// cross-reference table pdftotext reads.
var tinyPDF = func() string {
	text := "BT /F1 12 Tf 10 50 Td (Autonomous chemical research) Tj ET"
	objects := []string{
		"<</Type/Catalog/Pages 2 0 R>>",
		"<</Type/Pages/Kids[3 0 R]/Count 1>>",
		"<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>",
		fmt.Sprintf("<</Length %d>>\nstream\n%s\nendstream", len(text), text),
		"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	var at []int
	for i, o := range objects {
		at = append(at, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, n := range at {
		fmt.Fprintf(&b, "%010d 00000 n \n", n)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.String()
}()

// campaignPlanner is what of the README's first campaign command the later ones, which
// abbreviate its flags as "...", do not repeat.
var campaignPlanner = regexp.MustCompile(`\s--(planner|plot) \S+`)

// readmeRules are the exceptions to "runs as shown and exits 0", each with its reason.
func readmeRules(t *testing.T, st *readmeState) []readmeRule {
	modelSrv := llmtest.NewServer(t)
	modelSrv.SetModels("gpt-4.1", "qwen3:8b", "nomic-embed-text")
	policy := llmtest.Turn{Reply: readmeModel}
	for range 20000 {
		modelSrv.Add(policy)
	}
	web := webServer(t)
	// Every model the README names is the scripted one: OpenAI's and Ollama's base URLs are
	// its address.
	st.env["OPENAI_BASE_URL"] = modelSrv.OpenAIBaseURL()
	st.env["OPENAI_API_KEY"] = "test-key"
	st.env["OLLAMA_HOST"] = modelSrv.URL()
	st.env["MY_OPENAI_KEY"] = "test-key"
	// The configuration file is the README's (its model and embedder are Ollama's, whose
	// OLLAMA_HOST beats the file's base_url).
	readme := string(must2[[]byte](t)(os.ReadFile("../../README.md")))
	_, yaml, _ := strings.Cut(readme, "\n```yaml\nmodel:")
	yaml, _, _ = strings.Cut("model:"+yaml, "```")
	must(t, os.MkdirAll(filepath.Join(st.env["XDG_CONFIG_HOME"], "labmate"), 0o755))
	write(t, filepath.Join(st.env["XDG_CONFIG_HOME"], "labmate"), "config.yaml", yaml)
	st.env["ARXIV_URL"], st.env["CROSSREF_URL"] = web.URL, web.URL
	must(t, exec.Command("mkdir", "-p", filepath.Join(st.env["HOME"], "manuals")).Run())
	write(t, filepath.Join(st.env["HOME"], "manuals"), "balance.md", "# Balance XS205\n\n## Calibration\nPress CAL and wait for the internal weight to settle.\n")
	must(t, exec.Command("cp", "-r", filepath.Join(st.root, "examples", "skills"), filepath.Join(st.env["HOME"], "skills")).Run())
	noNumpy := ""
	if exec.Command("python3", "-c", "import numpy, scipy").Run() != nil {
		noNumpy = "numpy and scipy are not installed here (scripts/deps installs them)"
	}
	// ID is the fact the first memory command added.
	id := func(st *readmeState, cmd string) string {
		return regexp.MustCompile(`\bID\b`).ReplaceAllString(cmd, st.vars["ID"])
	}
	capture := func(name, re string) func(*readmeState, string) {
		return func(st *readmeState, out string) {
			if m := regexp.MustCompile(re).FindStringSubmatch(out); m != nil {
				st.vars[name] = m[1]
			} else {
				st.t.Errorf("no %s in the output (%s):\n%s", name, re, out)
			}
		}
	}
	rules := []readmeRule{
		{match: `^make (run|test)\b`, skip: "make run starts a server until Ctrl-C, and make test runs every test, this one included"},
		{match: `^make bench`, skip: "the benchmarks (make bench, make bench-campaign) take minutes to hours; they run what their own tests check"},
		{match: `^go test `, skip: "a test run of its own (the corpus, the agent's scenarios), not a labmate command"},

		// The server the README starts in another terminal (make run) is one of the test's own,
		// serving the data directory exec reads the token from.
		{match: `exec --server http://127.0.0.1:7878 `, rewrite: func(st *readmeState, cmd string) string {
			_, url := serve(st.t, filepath.Join(st.env["XDG_DATA_HOME"], "labmate"))
			return strings.Replace(cmd, "http://127.0.0.1:7878", url, 1)
		}, want: []string{"final amplitude"}},
		{match: `exec examples/sim.m`, want: []string{"final population"}},
		// SESSION is the session labmate exec examples/plot.py said keeps its artifacts; the
		// copy it gives back is the file the cell saved.
		{match: `exec examples/plot.py`, want: []string{"E(5) = 0.026"}, after: capture("SESSION", `artifacts kept in session (\S+):`)},
		{match: `session list`, want: []string{"plot.py"}},
		{match: `session show SESSION --artifact energy.png > energy-copy.png`, rewrite: func(st *readmeState, cmd string) string {
			return strings.Replace(cmd, "SESSION", st.vars["SESSION"], 1)
		}, after: func(st *readmeState, _ string) {
			copied, _ := os.ReadFile(filepath.Join(st.root, "energy-copy.png"))
			saved, _ := os.ReadFile(filepath.Join(st.root, "energy.png"))
			if len(saved) == 0 || string(copied) != string(saved) {
				st.t.Errorf("session show --artifact energy.png: %d bytes, the cell saved %d", len(copied), len(saved))
			}
		}},
		{match: `exec --watch .* examples/pid.m`, want: []string{"pass 5: Kp = 16"}},
		{match: `^echo 'print\(6\*7\)'`, want: []string{"42"}},
		{match: `^bin/labmate version`, want: []string{"labmate "}},

		{match: `docs index --python`, skip: noNumpy},
		{match: `docs index --octave`, needs: []string{"octave-cli"}},
		{match: `docs index ~/manuals`, want: []string{"indexed " + filepath.Join(st.env["HOME"], "manuals") + ": 1 documents"}},
		// SearxNG on the README's address is the test's stand-in; it serves on loopback.
		{match: `^SEARXNG_URL=`, rewrite: func(st *readmeState, cmd string) string {
			return strings.Replace(cmd, "http://127.0.0.1:8888", web.URL, 1)
		}, want: []string{"BDF methods"}},
		{match: `docs papers`, want: []string{"Autonomous chemical research with large language models", "Emergent autonomous"}},
		// The page is the stand-in's PDF (no network here), which loopback serves.
		{match: `docs fetch https://example.org/paper.pdf`, needs: []string{"pdftotext"}, rewrite: func(st *readmeState, cmd string) string {
			return strings.Replace(strings.Replace(cmd, "https://example.org", web.URL, 1), "LABMATE_FETCH=1", "LABMATE_FETCH=1 LABMATE_FETCH_PRIVATE=1", 1)
		}, want: []string{"Autonomous chemical research"}},

		{match: `memory add --kind warning`, after: capture("ID", `added (\S+)`)},
		{match: `memory (show|history) ID`, rewrite: id},
		{match: `memory search stiff solver`, want: []string{"ode15s"}},

		{match: `model check ollama:qwen3:8b`, want: []string{"qwen3:8b"}},

		{match: `run --json "…" > events.ndjson`, after: func(st *readmeState, _ string) {
			b, _ := os.ReadFile(filepath.Join(st.root, "events.ndjson"))
			if m := regexp.MustCompile(`"run_id":"([^"]+)"`).FindSubmatch(b); m != nil {
				st.vars["RUN"] = string(m[1])
			} else {
				st.t.Errorf("events.ndjson has no run_id: %s", b)
			}
		}},
		// A finished run cannot be resumed: --resume of one says so and exits 2 (the README
		// shows it on a run that was killed; TestRunKilledAndResumed does that).
		{match: `run --resume 3f2c…`, rewrite: runID, code: 2, want: []string{"the run already ended"}},
		{match: `run (list|show)`, rewrite: func(st *readmeState, cmd string) string {
			return strings.NewReplacer("[", "", "]", "").Replace(runID(st, cmd))
		}},

		// "..." in a campaign command stands for the flags of the first one but its planner.
		{match: `campaign run --data`, rewrite: func(st *readmeState, cmd string) string {
			st.vars["CAMPAIGN"] = campaignPlanner.ReplaceAllString(strings.TrimPrefix(cmd, "bin/labmate campaign run "), "")
			return cmd
		}},
		// ... with two seeds of each group: the memory prior's Gaussian process on ten takes
		// minutes on two shared cores.
		{match: `campaign run \.\.\.`, rewrite: func(st *readmeState, cmd string) string {
			return strings.Replace(cmd, "...", strings.Replace(st.vars["CAMPAIGN"], "--seeds 10", "--seeds 2", 1), 1)
		}},

		// The example protocol fills every other row of the plate: C, never B.
		{match: `lab simulate examples/bench/every_other_row.py`, want: []string{"C brilliant blue FCF"}, after: func(st *readmeState, out string) {
			if strings.Contains(out, "B brilliant blue FCF") {
				st.t.Errorf("lab simulate filled row B:\n%s", out)
			}
		}},
		{match: `lab show --workspace lab1`, want: []string{"G brilliant blue FCF"}},
		// The same protocol in Octave: the same rows, each command at its line of the file.
		{match: `lab simulate examples/bench/every_other_row.m`, want: []string{"G brilliant blue FCF", "line 12: transfer 100 µL from reservoir/A1"}, after: func(st *readmeState, out string) {
			if strings.Contains(out, "B brilliant blue FCF") {
				st.t.Errorf("lab simulate of the Octave protocol filled row B:\n%s", out)
			}
		}},

		// A Protocol Library-style protocol: get_values from the fields.json beside it (24
		// samples: 1 + 24 tips), or from --param (8 samples: 1 + 8 tips).
		{match: `lab simulate examples/bench/pcr_setup/pcr_setup.ot2.apiv2.py$`, want: []string{"tips used: tips 25", "protocol time:", "mm/A1 384"}},
		{match: `lab simulate examples/bench/pcr_setup/pcr_setup.ot2.apiv2.py --param num_samples=8 --json`, want: []string{`"tips": 9`, `"pcr/H1": 20`}},

		// The benchmarks in their quick form (the full runs take minutes to hours of model
		// calls; make bench-campaign runs the game in full): one seed of three turns, one task.
		{match: `eval campaign`, rewrite: func(st *readmeState, cmd string) string {
			return quick(cmd, "--seeds 1 --turns 3")
		}},
		{match: `eval engdesign`, rewrite: func(st *readmeState, cmd string) string {
			if strings.Contains(cmd, "--limit") {
				return regexp.MustCompile(`--limit \d+`).ReplaceAllString(cmd, "--limit 1")
			}
			return quick(cmd, "--limit 1")
		}},
		{match: `eval workflows`, needs: []string{"pw.x", "lmp"}, rewrite: func(st *readmeState, cmd string) string {
			if strings.Contains(cmd, "--skills") {
				return cmd
			}
			return quick(cmd, "--skills cu-vacancy-formation") // a second's LAMMPS run; make test runs --quick in eval/workflows
		}},
		{match: `eval materials`, needs: []string{"pw.x", "lmp"}, rewrite: func(st *readmeState, cmd string) string {
			if strings.Contains(cmd, "--elements") {
				return cmd
			}
			return quick(cmd, "--elements Cu") // in both the QE and the LAMMPS tables
		}},
	}
	return rules
}

// quick adds flags to a command before its comment.
func quick(cmd, flags string) string {
	c, comment, ok := strings.Cut(cmd, " #")
	if ok {
		comment = " #" + comment
	}
	return strings.TrimSpace(c) + " " + flags + comment
}

func runID(st *readmeState, cmd string) string {
	return strings.ReplaceAll(cmd, "3f2c…", st.vars["RUN"])
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// must2 returns a function that returns v after checking err.
func must2[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		must(t, err)
		return v
	}
}
