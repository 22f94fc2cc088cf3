package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// labmate run gets the knowledge tools: the planner is told of them, search_docs reads the
// index labmate docs built and comes back as cited, untrusted material, and search_web without a
// provider says what to set.
func TestRunSearchesDocs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(t.TempDir(), "docs.db")
	manuals := filepath.Join(dir, "manuals")
	os.MkdirAll(manuals, 0o755)
	os.WriteFile(filepath.Join(manuals, "balance.md"), []byte("# Balance XS205\n\n## Calibration\nPress CAL and wait for the internal weight to settle.\n"), 0o644)
	if _, errOut, code := labmate(t, dir, "", "docs", "index", "--store", db, manuals); code != 0 {
		t.Fatalf("docs index: %d %s", code, errOut)
	}
	srv := llmtest.NewServer(t,
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			for _, name := range []string{"search_docs", "search_web", "search_papers", "fetch_url"} {
				if !strings.Contains(c.Request.System, name) {
					t.Errorf("the planner is not told of %s", name)
				}
			}
			return llmtest.JSON(agent.Plan{Goal: "calibration", Steps: []agent.Step{{Title: "read the manual", Action: "search the docs", Tool: "search_docs", Checkpoint: "the procedure is found"}}})
		}},
		call("search_web", `{"query": "XS205 calibration"}`),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if m := c.Request.Messages[len(c.Request.Messages)-1]; !strings.Contains(m.Content, "search_web: not configured: set SEARXNG_URL") {
				t.Errorf("search_web without a provider: %+v", m)
			}
			return call("search_docs", `{"query": "how do I calibrate the balance"}`)
		}},
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			m := c.Request.Messages[len(c.Request.Messages)-1]
			if m.IsError || !strings.HasPrefix(m.Content, "<untrusted") || !strings.Contains(m.Content, "balance.md:3-4 (Balance XS205 > Calibration)") ||
				!strings.Contains(m.Content, "Press CAL") {
				t.Errorf("search_docs returned %+v", m)
			}
			return call(agent.ToolFinalAnswer, `{"answer": "Press CAL and wait (balance.md:3-4)"}`)
		}},
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+t.TempDir(), "LABMATE_DOCS_DB="+db,
		"SEARXNG_URL=", "BRAVE_API_KEY=", "TAVILY_API_KEY=", "LABMATE_PAPERS=", "ARXIV_URL=", "CROSSREF_URL=", "LABMATE_FETCH=")
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "How do I calibrate the XS205 balance?")
	if code != 0 || !strings.HasPrefix(out, "Press CAL") || srv.Remaining() != 0 {
		t.Fatalf("run: exit %d, stdout %q, %d turns unused\n%s", code, out, srv.Remaining(), errOut)
	}
}
