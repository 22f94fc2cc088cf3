package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// TestExecArtifacts: labmate exec prints where each file the cell wrote is (stderr, so that
// stdout stays the cell's), and --json carries them as artifact observations.
func TestExecArtifacts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "plot.py", "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('fig.png')\nopen('t.csv', 'w').write('a\\n1\\n')\nprint('done')\n")
	out, errOut, code := labmate(t, dir, "", "exec", "plot.py")
	if code != 0 || out != "done\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{
		"labmate: artifact fig.png (image/png, ",
		"bytes): " + filepath.Join(dir, "fig.png") + "\n",
		"labmate: artifact t.csv (text/csv, 4 bytes): " + filepath.Join(dir, "t.csv") + "\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "plot.py") {
		t.Errorf("the unchanged cell file is reported as an artifact:\n%s", errOut)
	}
	out, _, code = labmate(t, dir, "", "exec", "--json", "plot.py")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	var arts []string
	for line := range strings.Lines(out) {
		var m protocol.EnhancedMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not NDJSON: %q: %v", line, err)
		}
		p, err := protocol.DecodePayload(&m)
		if err != nil {
			t.Fatal(err)
		}
		if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsArtifact {
			a := pr.Observation.Artifact
			arts = append(arts, fmt.Sprintf("%s %s %t", a.Path, a.MIMEType, len(a.SHA256) == 64))
		}
	}
	if got := strings.Join(arts, ", "); got != "fig.png image/png true, t.csv text/csv true" {
		t.Errorf("--json artifacts: %s", got)
	}
}
