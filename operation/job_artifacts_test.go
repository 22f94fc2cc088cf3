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

// TestWatchJobArtifacts: WatchJob, a follower that keeps no log, reports the job's artifacts
// only when it keeps them (a job's supervisor): with a store they are reported and kept, without
// one the workspace is not read for them.
func TestWatchJobArtifacts(t *testing.T) {
	s := localScheduler(t)
	store, err := artifact.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{true, false} {
		spec := &job.Spec{Script: "printf 'x\\n1\\n' > x.csv\n", Workspace: t.TempDir()}
		id, err := s.Submit(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		opts := &operation.JobOptions{Poll: 100 * time.Millisecond}
		if keep {
			opts.Artifacts = store
		}
		var arts []*protocol.Artifact
		var end protocol.Type
		for m, err := range operation.WatchJob(t.Context(), s, id, spec, 0, opts) {
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := m.Payload.(*protocol.Progress); ok && p.Observation != nil && p.Observation.Artifact != nil {
				arts = append(arts, p.Observation.Artifact)
			}
			end = m.Type
		}
		switch {
		case end != protocol.TypeComplete:
			t.Errorf("keep %t: the job ended with %s", keep, end)
		case keep && (len(arts) != 1 || arts[0].Path != "x.csv" || !artifact.ValidSum(arts[0].SHA256)):
			t.Errorf("with a store: artifacts %+v, want x.csv kept", arts)
		case !keep && len(arts) != 0:
			t.Errorf("without a store: artifacts %+v, want none", arts)
		}
		if keep && len(arts) == 1 {
			if f, _, err := store.Open(arts[0].SHA256); err != nil {
				t.Errorf("x.csv is not in the store: %v", err)
			} else {
				f.Close()
			}
		}
	}
}
