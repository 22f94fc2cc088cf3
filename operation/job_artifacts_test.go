package operation_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// TestJobArtifacts: the files a job writes in its workspace — not its inputs — are reported
// as artifacts when it ends, before its terminal message, and kept by their digest in the
// store, so that they outlive the workspace.
func TestJobArtifacts(t *testing.T) {
	s := localScheduler(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(ws, "in.txt"), old, old)
	store, err := artifact.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	script := "mkdir -p out && printf 't,E\\n0,1\\n1,0.5\\n' > out/energy.csv && cat in.txt > copy.txt && echo done\n"
	r := runJob(t, s, jobRequest(&job.Spec{Script: script, Workspace: ws}, nil), &operation.JobOptions{Artifacts: store})
	if c, f := r.terminal(); c == nil {
		t.Fatalf("the job did not complete: %+v", f)
	}
	got := map[string]*protocol.Artifact{}
	last := -1
	for i, p := range r.payloads {
		if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsArtifact {
			got[pr.Observation.Artifact.Path], last = pr.Observation.Artifact, i
		}
	}
	if len(got) != 2 || got["out/energy.csv"] == nil || got["copy.txt"] == nil {
		t.Fatalf("artifacts %v, want out/energy.csv and copy.txt (not the input in.txt)", got)
	}
	if last != len(r.payloads)-2 {
		t.Errorf("the last artifact is message %d of %d, want it just before the terminal one", last, len(r.payloads))
	}
	a := got["out/energy.csv"]
	if a.MIMEType != "text/csv" || a.Size != 14 || !artifact.ValidSum(a.SHA256) {
		t.Errorf("out/energy.csv: %+v", a)
	}
	os.RemoveAll(ws)
	f, _, err := store.Open(a.SHA256)
	if err != nil {
		t.Fatalf("the store has no copy of out/energy.csv once the workspace is gone: %v", err)
	}
	defer f.Close()
	if b, _ := io.ReadAll(f); string(b) != "t,E\n0,1\n1,0.5\n" {
		t.Errorf("the kept copy of out/energy.csv is %q", b)
	}
}
