package operation_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// TestExecArtifacts: a real Python cell that saves a matplotlib figure (no backend chosen:
// headless, matplotlib takes Agg) and a CSV reports both as artifacts after its output and
// before its terminal message, with digests of the bytes on disk; a next cell that writes
// nothing reports none.
func TestExecArtifacts(t *testing.T) {
	k := start(t)
	code := `import matplotlib.pyplot as plt
import numpy as np
x = np.linspace(0, 6.3, 100)
plt.plot(x, np.sin(x))
plt.savefig("sin.png")
np.savetxt("out/sin.csv", np.c_[x, np.sin(x)], delimiter=",")
print("saved")`
	if err := os.Mkdir(filepath.Join(k.Info().Workspace, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: code})
	if last := msgs[len(msgs)-1]; last.Type != protocol.TypeComplete {
		t.Fatalf("terminal %s %+v", last.Type, last.Payload)
	}
	var arts []*protocol.Artifact
	printed := false
	for _, m := range msgs[:len(msgs)-1] {
		p, ok := m.Payload.(*protocol.Progress)
		if !ok || p.Observation == nil {
			continue
		}
		o := p.Observation
		switch {
		case o.Kind == protocol.ObsStdout && o.Line == "saved":
			printed = true
		case o.Kind == protocol.ObsArtifact:
			if !printed {
				t.Errorf("artifact %s before the cell's output", o.Artifact.Path)
			}
			arts = append(arts, o.Artifact)
		}
	}
	if len(arts) != 2 || arts[0].Path != "out/sin.csv" || arts[0].MIMEType != "text/csv" || arts[1].Path != "sin.png" || arts[1].MIMEType != "image/png" {
		t.Fatalf("artifacts %+v, want out/sin.csv and sin.png", arts)
	}
	for _, a := range arts {
		b, err := os.ReadFile(filepath.Join(k.Info().Workspace, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if a.Size != int64(len(b)) || a.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: size %d sha256 %s; the file has %d bytes, sha256 %x", a.Path, a.Size, a.SHA256, len(b), sum)
		}
		if a.Path == "sin.png" && !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("sin.png is not a PNG: % x", b[:min(len(b), 8)])
		}
	}

	for _, m := range run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(len(x))"}) {
		if p, ok := m.Payload.(*protocol.Progress); ok && p.Observation != nil && p.Observation.Kind == protocol.ObsArtifact {
			t.Errorf("a cell that writes nothing reported %+v", p.Observation.Artifact)
		}
	}
}
