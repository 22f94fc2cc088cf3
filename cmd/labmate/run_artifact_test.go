package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// TestRunShowArtifact: a file a labmate run's cell saved is kept in the data directory's
// artifact store, so labmate run show ID --artifact PATH gives its bytes after the workspace
// lost it; a path the run never reported is an error naming what it reported.
func TestRunShowArtifact(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "tabulate", Action: "write energy.csv", Tool: agent.ToolRunCode, Checkpoint: "saved"}}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: "open('energy.csv', 'w').write('t,E\\n0,1.0\\n5,0.2\\n')\nprint('saved')"})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "saved", "summary": "saved"}),
		call(agent.ToolFinalAnswer, `{"answer": "energy.csv"}`),
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+t.TempDir())
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--json", "Tabulate the energy")
	evs := ndjson(t, out)
	if code != 0 || len(evs) == 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	id := evs[len(evs)-1].RunID
	removed := 0 // the workspace's copy: only the store's is left
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "energy.csv" {
			removed++
			os.Remove(p)
		}
		return nil
	})
	if removed != 1 {
		t.Fatalf("%d energy.csv in the data directory's workspaces, want the cell's one", removed)
	}
	out, errOut, code = labmateEnv(t, env, dir, "", "run", "show", id, "--artifact", "energy.csv")
	if code != 0 || out != "t,E\n0,1.0\n5,0.2\n" {
		t.Errorf("run show --artifact energy.csv: exit %d, stdout %q\n%s", code, out, errOut)
	}
	out, errOut, code = labmateEnv(t, env, dir, "", "run", "show", id, "--artifact", "energy.cvs")
	if code == 0 || out != "" || !strings.Contains(errOut, "energy.cvs") || !strings.Contains(errOut, "it reported energy.csv") {
		t.Errorf("run show --artifact energy.cvs: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
