package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// TestJobArtifactsDurable: a file a job wrote is reported as an artifact of its session and
// kept in the server's artifact store, so REST serves it after the job's workspace is gone
// and the server restarted.
func TestJobArtifactsDurable(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	arts, err := artifact.Open(filepath.Join(dir, "artifacts"), nil)
	if err != nil {
		t.Fatal(err)
	}
	withStore := func(c *server.Config) { c.Artifacts = arts }
	l := openJobLab(t, dir, withStore)
	id := l.submit(t, `{"name": "table", "script": "printf 'n,E\\n1,-7.5\\n2,-7.9\\n' > table.csv; echo done"}`)
	msgs := l.follow(t, id, time.Minute)
	if _, ok := terminal(t, msgs).(*protocol.Complete); !ok {
		t.Fatalf("the job ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	reported := false
	for _, m := range msgs {
		var p protocol.Progress
		if m.Type == protocol.TypeProgress && m.Decode(&p) == nil && p.Observation != nil && p.Observation.Artifact != nil {
			reported = reported || p.Observation.Artifact.Path == "table.csv" && artifact.ValidSum(p.Observation.Artifact.SHA256)
		}
	}
	if !reported {
		t.Fatal("the job's table.csv was not reported as an artifact with its digest")
	}
	code, out := l.do(t, "GET", "/v1/jobs/"+id, "")
	var st struct{ Spec struct{ Workspace string } }
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != http.StatusOK || st.Spec.Workspace == "" {
		t.Fatalf("GET /v1/jobs/%s: %d %s", id, code, out)
	}
	l.close()
	if err := os.RemoveAll(st.Spec.Workspace); err != nil {
		t.Fatal(err)
	}
	l = openJobLab(t, dir, withStore)
	code, out = l.do(t, "GET", "/v1/sessions/"+id+"/artifacts/table.csv", "")
	if code != http.StatusOK || out != "n,E\n1,-7.5\n2,-7.9\n" {
		t.Errorf("the job's table.csv after its workspace went and a restart: %d %q", code, out)
	}
}
