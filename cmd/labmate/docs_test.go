package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm/llmtest"
)

func TestDocs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "docs.db")
	manuals := filepath.Join(dir, "manuals")
	os.MkdirAll(manuals, 0o755)
	os.WriteFile(filepath.Join(manuals, "balance.md"), []byte("# Balance XS205\n\n## Calibration\nPress CAL and wait for the internal weight to settle.\n\n## Cleaning\nUse a soft brush.\n"), 0o644)
	os.WriteFile(filepath.Join(manuals, "pump.html"), []byte("<html><head><title>Syringe pump</title></head><body><h1>Syringe pump</h1><h2>Flow rate</h2><p>Set the flow rate in microlitres per minute.</p></body></html>"), 0o644)
	os.WriteFile(filepath.Join(manuals, "firmware.bin"), []byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2}, 0o644)

	stdout, stderr, code := labmate(t, dir, "", "docs", "index", "--store", db, "--json", manuals)
	if code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "firmware.bin: unsupported content: binary content") || !strings.Contains(stderr, "1 files skipped") {
		t.Errorf("the binary file was not reported as skipped:\n%s", stderr)
	}
	var rep struct {
		Chunks  int `json:"chunks"`
		Sources int `json:"sources"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Sources != 2 || rep.Chunks != 3 {
		t.Errorf("index --json: %q (%v)", stdout, err)
	}

	stdout, stderr, code = labmate(t, dir, "", "docs", "search", "--store", db, "--json", "--limit", "1", "how do I calibrate the balance")
	var hits []struct {
		Source    string `json:"source"`
		Heading   string `json:"heading"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
		Text      string `json:"text"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &hits) != nil || len(hits) != 1 {
		t.Fatalf("search: exit %d %q %s", code, stdout, stderr)
	}
	if h := hits[0]; h.Source != filepath.Join(manuals, "balance.md") || h.Heading != "Balance XS205 > Calibration" || h.StartLine != 3 || h.EndLine != 4 {
		t.Errorf("hit %+v", h)
	}

	stdout, _, code = labmate(t, dir, "", "docs", "search", "--store", db, "flow rate")
	if code != 0 || !strings.HasPrefix(stdout, "1. "+filepath.Join(manuals, "pump.html")+":") || !strings.Contains(stdout, "(Syringe pump > Flow rate)") {
		t.Errorf("text search: %d %q", code, stdout)
	}

	_, stderr, code = labmate(t, dir, "", "docs", "search", "--store", filepath.Join(dir, "empty.db"), "anything")
	if code != 2 || !strings.Contains(stderr, "the index is empty: run labmate docs index") {
		t.Errorf("empty index: %d %q", code, stderr)
	}
	_, stderr, code = labmate(t, dir, "", "docs", "index", "--store", db, filepath.Join(dir, "missing"))
	if code != 2 || !strings.Contains(stderr, "missing: no such file or directory") {
		t.Errorf("missing path: %d %q", code, stderr)
	}
}

// TestDocsOctave indexes the installed Octave's help from a directory where a cell planted a
// pkg.m (the harvest's first call is pkg load all): it must not run.
func TestDocsOctave(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "docs.db")
	pwned := filepath.Join(dir, "PWNED")
	plant := fmt.Sprintf("function varargout = pkg(varargin)\nfid = fopen(%q, \"w\"); fputs(fid, \"ran\"); fclose(fid);\nend\n", pwned)
	if err := os.WriteFile(filepath.Join(dir, "pkg.m"), []byte(plant), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := labmate(t, dir, "", "docs", "index", "--store", db, "--octave")
	if code != 0 || !strings.Contains(stderr, "indexed octave: ") {
		t.Fatalf("index --octave: %d %s", code, stderr)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("docs index --octave ran the pkg.m planted in the current directory")
	}
	t.Log(strings.TrimSpace(stderr))
	stdout, _, code := labmate(t, dir, "", "docs", "search", "--store", db, "--limit", "3", "integrate a stiff ODE")
	if code != 0 || !strings.Contains(stdout, "octave:ode15s:") {
		t.Errorf("search: %d %q", code, stdout)
	}
}

func TestDocsWeb(t *testing.T) {
	dir := t.TempDir()
	// With no provider configured nothing is asked and the message says what to set.
	env := []string{"SEARXNG_URL=", "BRAVE_API_KEY=", "TAVILY_API_KEY=", "LABMATE_PAPERS=", "ARXIV_URL=", "CROSSREF_URL=", "LABMATE_FETCH="}
	_, stderr, code := labmateEnv(t, env, dir, "", "docs", "web", "stiff solvers")
	if code != 2 || !strings.Contains(stderr, "not configured: set SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY") {
		t.Errorf("unconfigured: %d %q", code, stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			fmt.Fprintf(w, `{"query": %q, "results": [{"url": "http://%s/page", "title": "BDF methods", "content": "For stiff problems.", "engine": "x"}]}`, r.URL.Query().Get("q"), r.Host)
		case "/page":
			fmt.Fprint(w, `<html><head><title>BDF</title></head><body><article><h1>BDF</h1><p>Backward differentiation formulas are implicit.</p></article></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env = append(env, "SEARXNG_URL="+srv.URL, "LABMATE_FETCH_PRIVATE=1") // httptest serves on loopback
	stdout, stderr, code := labmateEnv(t, env, dir, "", "docs", "web", "--json", "stiff solvers")
	var res struct {
		Content   string   `json:"content"`
		Untrusted bool     `json:"untrusted"`
		Sources   []string `json:"sources"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || !res.Untrusted || len(res.Sources) != 1 || !strings.Contains(res.Content, "BDF methods") {
		t.Errorf("web: %d %q %s", code, stdout, stderr)
	}
	stdout, stderr, code = labmateEnv(t, env, dir, "", "docs", "fetch", srv.URL+"/page")
	if code != 0 || !strings.Contains(stdout, "Backward differentiation formulas are implicit.") {
		t.Errorf("fetch: %d %q %s", code, stdout, stderr)
	}
	_, stderr, code = labmateEnv(t, append(env, "LABMATE_PAPERS=pubmed"), dir, "", "docs", "papers", "x")
	if code != 2 || !strings.Contains(stderr, `LABMATE_PAPERS: unknown provider "pubmed"`) {
		t.Errorf("bad papers setting: %d %q", code, stderr)
	}
}

func TestDocsEmbedder(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t) // embeddings use no scripted turn
	env := []string{"OPENAI_BASE_URL=" + srv.OpenAIBaseURL(), "OPENAI_API_KEY=k", "LABMATE_EMBEDDER=", "XDG_CONFIG_HOME=" + dir}
	manual := filepath.Join(dir, "balance.md")
	os.WriteFile(manual, []byte("# Balance XS205\n\n## Calibration\nPress CAL and wait for the internal weight to settle.\n"), 0o644)
	db := filepath.Join(dir, "docs.db")
	if _, stderr, code := labmateEnv(t, env, dir, "", "docs", "index", "--store", db, "--embedder", "openai:embed", manual); code != 0 {
		t.Fatalf("index with an embedder: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := labmateEnv(t, env, dir, "", "docs", "search", "--store", db, "--embedder", "openai:embed", "--json", "calibrate the balance")
	if code != 0 || !strings.Contains(stdout, "balance.md") {
		t.Fatalf("hybrid search: exit %d\n%s%s", code, stdout, stderr)
	}
	// The embedder is really asked: with its server gone, a hybrid search fails and says why,
	// while plain BM25 search still works.
	srv.Close()
	if _, stderr, code := labmateEnv(t, env, dir, "", "docs", "search", "--store", db, "--embedder", "openai:embed", "calibrate"); code == 0 || !strings.Contains(stderr, "127.0.0.1") {
		t.Errorf("hybrid search with the embedder down: exit %d %q", code, stderr)
	}
	if stdout, stderr, code := labmateEnv(t, env, dir, "", "docs", "search", "--store", db, "calibrate"); code != 0 || !strings.Contains(stdout, "balance.md") {
		t.Errorf("BM25 search: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestDocsTypos: values a user mistypes are refused before anything is indexed or searched,
// naming the value and how to say it.
func TestDocsTypos(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "docs.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"docs", "index", "--store", db, "--python", "numpy", "scipy"}, "docs index: scipy is not a file or folder; to index the Python module, name it with --python: --python numpy,scipy"},
		{[]string{"docs", "index", "--octave", "--python", "--store", db}, `docs index: --python "--store" is not a Python module name (give modules as --python numpy,scipy)`},
		{[]string{"docs", "index", "--store", db, "./missing/notes.md"}, "docs index: stat ./missing/notes.md: no such file or directory"},
		{[]string{"docs", "search", "--store", db, "--limit", "0", "ode"}, "docs search: --limit 0: ask for at least one hit"},
		{[]string{"docs", "search", "--store", db, "--limit", "-3", "ode"}, "docs search: --limit -3: ask for at least one hit"},
	} {
		_, errOut, code := labmate(t, dir, "", tc.args...)
		if code != 2 || strings.TrimSpace(errOut) != "labmate: "+tc.want {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused command created %s", db)
	}
}
