package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/tools"
)

// noJobs is a scheduler a refused call never reaches.
type noJobs struct{ job.Scheduler }

// With Confine, a caller's jobs stay inside its workspace: absolute paths, paths out of it
// and links out of it are refused, before the scheduler is asked.
func TestConfine(t *testing.T) {
	ws := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	submit := tools.Tools(job.Schedulers{"local": noJobs{}}, &tools.Options{Workspace: ws, Confine: true})[0]
	for _, w := range []string{"/tmp", ws, "..", "../x", "a/../../x", "out", "out/x"} {
		args, _ := json.Marshal(map[string]string{"script": "true", "workspace": w})
		res, err := submit.Call(context.Background(), args)
		if err != nil || !res.IsError || !strings.Contains(res.Content, "workspace") {
			t.Errorf("workspace %q: %+v, %v; want a refusal naming the workspace", w, res, err)
		}
	}
}
