package operation

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/protocol"
)

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hexSum(data string) string {
	s := sha256.Sum256([]byte(data))
	return hex.EncodeToString(s[:])
}

// TestSnapshotArtifacts: what a hostile cell leaves in its workspace — new and rewritten
// files among unchanged ones, dot-entries, a symlink out of the workspace, a FIFO, a
// directory replaced by a symlink — yields exactly the new and changed regular files. With a
// Keeper (an artifact.Store), exactly those files are kept, by their digests.
func TestSnapshotArtifacts(t *testing.T) {
	t.Run("described", func(t *testing.T) { testSnapshotArtifacts(t, nil) })
	t.Run("kept", func(t *testing.T) {
		st, err := artifact.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := testSnapshotArtifacts(t, st)
		if st.Used() != 12+9+4 {
			t.Errorf("the store holds %d bytes, want the 25 of the three artifacts", st.Used())
		}
		for _, a := range got {
			f, _, err := st.Open(a.SHA256)
			if err != nil {
				t.Errorf("%s: %v", a.Path, err)
				continue
			}
			f.Close()
		}
	})
}

func testSnapshotArtifacts(t *testing.T, keep Keeper) []*protocol.Artifact {
	ws := t.TempDir()
	write(t, ws, "keep.txt", "unchanged")
	write(t, ws, "data.csv", "a,b\n1,2\n")
	write(t, ws, "sub/old.dat", "1 2 3")
	write(t, ws, "same-size.txt", "aaaa")
	os.Chtimes(filepath.Join(ws, "same-size.txt"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	s := takeSnapshot(ws, keep)
	defer s.close()

	write(t, ws, "data.csv", "a,b\n1,2\n3,4\n")    // grew
	write(t, ws, "same-size.txt", "bbbb")          // rewritten, same size
	write(t, ws, "figs/sin.png", "\x89PNG fake")   // new, in a new directory
	write(t, ws, ".hidden/x.png", "dot directory") // skipped
	write(t, ws, ".secret.csv", "dot file")        // skipped
	write(t, ws, "__pycache__/m.pyc", "bytecode")  // skipped
	write(t, ws, "x\nlabmate: ok.png", "newline")  // not printable: skipped
	write(t, ws, "\x1b[31mred.png", "escape")
	write(t, ws, `back\slash.png`, "backslash")
	write(t, ws, "\xff.csv", "not UTF-8")
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "passwd.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "etc")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin", filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}

	got := s.artifacts()
	want := []*protocol.Artifact{
		{Path: "data.csv", MIMEType: "text/csv", Size: 12, SHA256: hexSum("a,b\n1,2\n3,4\n")},
		{Path: "figs/sin.png", MIMEType: "image/png", Size: 9, SHA256: hexSum("\x89PNG fake")},
		{Path: "same-size.txt", MIMEType: "text/plain", Size: 4, SHA256: hexSum("bbbb")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("artifacts mismatch (-want +got):\n%s", diff)
	}
	for _, a := range got {
		if err := a.Validate(); err != nil {
			t.Error(err)
		}
	}
	return got
}

// TestSnapshotBounds: a cell that writes many files gets maxArtifacts reported, a file above
// maxHashed is reported without a digest, and the scan stops after maxScanned entries.
func TestSnapshotBounds(t *testing.T) {
	ws := t.TempDir()
	s := takeSnapshot(ws, nil)
	defer s.close()
	for i := range maxArtifacts + 8 {
		write(t, ws, fmt.Sprintf("f%03d.csv", i), "x")
	}
	big := filepath.Join(ws, "big.npy")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxHashed+1); err != nil {
		t.Fatal(err)
	}
	got := s.artifacts()
	if len(got) != maxArtifacts {
		t.Fatalf("%d artifacts, want the first %d", len(got), maxArtifacts)
	}
	if got[0].Path != "big.npy" || got[0].SHA256 != "" || got[0].Size != maxHashed+1 {
		t.Errorf("a file above the hash cap: %+v, want its size and no digest", got[0])
	}
	if got[1].Path != "f000.csv" || got[1].SHA256 != hexSum("x") || got[maxArtifacts-1].Path != fmt.Sprintf("f%03d.csv", maxArtifacts-2) {
		t.Errorf("artifacts %s … %s, want big.npy then f000.csv … in lexical order", got[1].Path, got[maxArtifacts-1].Path)
	}

	many := t.TempDir()
	for i := range maxScanned + 10 {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("a%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s2 := takeSnapshot(many, nil)
	defer s2.close()
	if n := len(s2.before); n != maxScanned {
		t.Errorf("a workspace of %d files: %d scanned, want the cap %d", maxScanned+10, n, maxScanned)
	}
	if takeSnapshot(filepath.Join(many, "missing"), nil) != nil {
		t.Error("a snapshot of a missing workspace")
	}
}

// TestSnapshotHashBudget: a cell that writes many large files gets digests for the first
// maxHashedTotal bytes of them, sizes only for the rest.
func TestSnapshotHashBudget(t *testing.T) {
	ws := t.TempDir()
	s := takeSnapshot(ws, nil)
	defer s.close()
	n := maxHashedTotal/maxHashed + 1
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("chunk%02d.npy", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, maxHashed); err != nil { // sparse: zeros
			t.Fatal(err)
		}
	}
	zeros := hexSum(string(make([]byte, maxHashed)))
	got := s.artifacts()
	if len(got) != n {
		t.Fatalf("%d artifacts, want %d", len(got), n)
	}
	for i, a := range got {
		if want := i < n-1; (a.SHA256 == zeros) != want || !want && a.SHA256 != "" {
			t.Errorf("%s: sha256 %q; hashed within the budget: %v", a.Path, a.SHA256, want)
		}
	}
}
