package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm/llmtest"
)

func TestMemoryCLI(t *testing.T) {
	dir := t.TempDir()
	env := []string{"LABMATE_MEMORY=" + filepath.Join(dir, "state", "memory.db")}
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return labmateEnv(t, env, dir, stdin, args...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := run("", args...)
		if code != 0 {
			t.Fatalf("labmate %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}

	var added struct {
		Action string `json:"action"`
		Fact   struct {
			ID, Text, Kind, Namespace string
			Tags                      []string
		} `json:"fact"`
	}
	if err := json.Unmarshal([]byte(must("memory", "add", "--json", "--kind", "warning", "--tag", "octave", "ode45 diverges on stiff problems; use ode15s")), &added); err != nil {
		t.Fatal(err)
	}
	if added.Action != "ADD" || added.Fact.ID == "" || added.Fact.Kind != "warning" || added.Fact.Namespace != "user" {
		t.Fatalf("add --json: %+v", added)
	}
	id := added.Fact.ID
	if out := must("memory", "add", "ODE45 diverges on stiff problems, use ode15s!"); !strings.HasPrefix(out, "merged into "+id) {
		t.Errorf("duplicate add: %q", out)
	}
	must("memory", "add", "-n", "lab", "--kind", "reference", "glycerol viscosity is 1.41 Pa s at 20 C")

	out := must("memory", "search", "stiff", "solver")
	if !strings.HasPrefix(out, "RANK  SCORE") || !strings.Contains(out, id) || strings.Contains(out, "glycerol") {
		t.Errorf("search table:\n%s", out)
	}
	var res []struct {
		Fact  struct{ ID string }
		Score float64
		Rank  int
	}
	if err := json.Unmarshal([]byte(must("memory", "search", "--json", "-n", "lab", "viscosity")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Rank != 1 || res[0].Score <= 0 {
		t.Errorf("search --json: %+v", res)
	}
	if out, errOut, code := run("", "memory", "search", "--kind", "rumour", "x"); code == 0 || !strings.Contains(errOut, `--kind "rumour"`) || out != "" {
		t.Errorf("bad --kind: exit %d %q", code, errOut)
	}
	if out := must("memory", "list"); strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "KIND") {
		t.Errorf("list:\n%s", out)
	}
	if out := must("memory", "show", id); !strings.Contains(out, "kind: warning") || !strings.HasSuffix(out, "use ode15s\n") {
		t.Errorf("show:\n%s", out)
	}
	if out := must("memory", "history", id); !strings.Contains(out, "ADD") || !strings.Contains(out, "MERGE") {
		t.Errorf("history:\n%s", out)
	}
	if _, errOut, code := run("", "memory", "show", "nope"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("show of an unknown id: %d %s", code, errOut)
	}

	// Skills: sync a folder, a bad file names file, line and rule.
	skills := filepath.Join(dir, "skills")
	os.MkdirAll(filepath.Join(skills, "fit-curve"), 0o755)
	os.WriteFile(filepath.Join(skills, "fit-curve", "SKILL.md"), []byte("---\nname: fit-curve\ndescription: Fit a curve with lsqcurvefit.\n---\n1. fit\n2. check residuals\n"), 0o644)
	os.MkdirAll(filepath.Join(skills, "bad_name"), 0o755)
	os.WriteFile(filepath.Join(skills, "bad_name", "SKILL.md"), []byte("---\nname: Bad_Name\ndescription: d\n---\n"), 0o644)
	_, errOut, code := run("", "memory", "sync", skills)
	if want := filepath.Join(skills, "bad_name", "SKILL.md") + `:2: name "Bad_Name": only lowercase letters, digits and hyphens`; code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("sync with a bad skill: exit %d %q\nwant %s", code, errOut, want)
	}
	os.RemoveAll(filepath.Join(skills, "bad_name"))
	if out := must("memory", "sync", skills); !strings.Contains(out, "fit-curve") {
		t.Errorf("sync:\n%s", out)
	}
	if out := must("memory", "search", "--kind", "skill", "residuals"); !strings.Contains(out, "fit-curve") {
		t.Errorf("skill search:\n%s", out)
	}

	// Freeze.
	must("memory", "freeze", "lab")
	if _, errOut, code := run("", "memory", "add", "-n", "lab", "new"); code == 0 || !strings.Contains(errOut, "frozen") {
		t.Errorf("add to a frozen namespace: exit %d %q", code, errOut)
	}
	var nss []struct {
		Name   string
		Frozen bool
	}
	json.Unmarshal([]byte(must("memory", "list", "--namespaces", "--json")), &nss)
	if len(nss) != 3 || nss[0].Name != "lab" || !nss[0].Frozen {
		t.Errorf("namespaces: %+v", nss)
	}

	// Export → import into another store → export: byte-identical.
	exp1, exp2 := filepath.Join(dir, "exp1"), filepath.Join(dir, "exp2")
	must("memory", "export", exp1)
	other := filepath.Join(dir, "other.db")
	if out := must("memory", "--store", other, "import", exp1); !strings.Contains(out, "imported 2 facts and 1 skills") {
		t.Errorf("import: %s", out)
	}
	must("memory", "--store", other, "export", exp2)
	files := 0
	filepath.WalkDir(exp1, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(exp1, path)
		a, _ := os.ReadFile(path)
		b, err := os.ReadFile(filepath.Join(exp2, rel))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs after export → import → export", rel)
		}
		files++
		return nil
	})
	if files != 3 {
		t.Errorf("%d exported files", files)
	}
	// A second import of a broken folder writes nothing and names the file.
	var one string
	entries, _ := os.ReadDir(filepath.Join(exp1, "facts"))
	one = filepath.Join(exp1, "facts", entries[0].Name())
	os.WriteFile(one, []byte("---\nid: x\n---\ntext\n"), 0o644)
	third := filepath.Join(dir, "third.db")
	if _, errOut, code := run("", "memory", "--store", third, "import", exp1); code == 0 || !strings.Contains(errOut, one+":") {
		t.Errorf("import of a broken folder: exit %d %q", code, errOut)
	}
	if out := must("memory", "--store", third, "list", "--json", "--status", "all"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a failed import wrote: %s", out)
	}
}

func TestMemoryInferAndEmbed(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t,
		llmtest.JSON(map[string]any{"facts": []map[string]any{
			{"text": "maglev PID with Kp=5 oscillates at 3.1 Hz", "kind": "boundary", "tags": []string{"maglev"}, "evidence": "oscillation at 3.1 Hz"},
		}}),
		llmtest.JSON(map[string]any{"operations": []map[string]any{
			{"event": "ADD", "id": nil, "fact": 0, "text": "", "reason": "new"},
			{"event": "DELETE", "id": 7, "fact": nil, "text": "", "reason": "invented id"},
		}}),
	)
	env := []string{"LABMATE_MEMORY=" + filepath.Join(dir, "m.db"), "OPENAI_BASE_URL=" + srv.OpenAIBaseURL(), "OPENAI_API_KEY=test-key",
		"LABMATE_MODEL=", "LABMATE_EMBEDDER=", "XDG_CONFIG_HOME=" + dir}
	trace := write(t, dir, "trace.txt", "agent: Kp=5\ntool: overshoot 38%, oscillation at 3.1 Hz\n")
	out, errOut, code := labmateEnv(t, env, dir, "", "memory", "add", "--trace", trace, "--model", "openai:fake", "--embedder", "openai:embed", "-n", "lab")
	if code != 0 {
		t.Fatalf("add --trace: exit %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, "ADD") || !strings.Contains(out, "REFUSED") || !strings.Contains(out, "id 7 was not shown") {
		t.Errorf("add --trace:\n%s", out)
	}
	// Hybrid search: the embedder is called and the hit carries a cosine score.
	out, errOut, code = labmateEnv(t, env, dir, "", "memory", "search", "--json", "--embedder", "openai:embed", "maglev oscillation")
	if code != 0 {
		t.Fatalf("search: exit %d: %s%s", code, out, errOut)
	}
	var res []struct {
		Fact   struct{ Text string }
		Cosine float64
		BM25   float64
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Cosine <= 0 || res[0].BM25 <= 0 || !strings.Contains(res[0].Fact.Text, "Kp=5") {
		t.Errorf("hybrid search: %s", out)
	}
	// No model configured: one clear line.
	_, errOut, code = labmateEnv(t, env, dir, "", "memory", "add", "--trace", trace)
	if code == 0 || !strings.Contains(errOut, "no model configured") {
		t.Errorf("add --trace without a model: exit %d %q", code, errOut)
	}
}

// TestMemoryDefaultStoreIsServes: with XDG_DATA_HOME set, labmate memory's default store is
// DATA/memory.db, the one labmate serve and labmate mcp use. It was
// ~/.local/share/labmate/memory.db whatever XDG_DATA_HOME said: the facts labmate memory and
// labmate run wrote were not those the server and its dashboard showed.
func TestMemoryDefaultStoreIsServes(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + xdg, "LABMATE_MEMORY="}
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "memory", "add", "the Si lattice constant is 5.431 Å")
	if code != 0 {
		t.Fatalf("memory add: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(xdg, "labmate", "memory.db")); err != nil {
		t.Errorf("the fact is not in DATA/memory.db, the store labmate serve uses: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "labmate", "memory.db")); err == nil {
		t.Errorf("the fact went to ~/.local/share/labmate/memory.db although XDG_DATA_HOME is %s", xdg)
	}
}
