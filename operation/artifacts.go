package operation

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/labmate/labmate/protocol"
)

// Artifacts: the files a cell creates or changes in its workspace — a figure it printed, a
// table it saved — are reported as ObsArtifact observations after the cell ends, before the
// terminal message. Exec snapshots the workspace (each regular file's size and modification
// time) before the cell and compares after it: a file that is new or whose size or time
// differs is an artifact, with its MIME type (from its extension), size and SHA-256.
//
// The cell is hostile, so the scan is bounded: dot-entries (.git, .cache) and __pycache__
// are skipped and not descended into, at most maxScanned entries are looked at (in lexical
// order, so both scans look at the same ones), at most maxArtifacts are reported per cell
// (in lexical order), and only files up to maxHashed bytes are hashed, maxHashedTotal in
// all; larger ones are reported without a digest. Files are read through an os.Root on the
// workspace: a symlink is never followed out of it (nor reported), a FIFO never blocks. A
// file whose name a client would refuse (protocol.Artifact.Validate: a backslash, control
// characters, invalid UTF-8) is not reported.
//
// A job's artifacts are the files of its workspace modified since it started, reported when
// it ends (before its terminal message), with the same bounds.
//
// With a Keeper (Options.Artifacts, JobOptions.Artifacts), each reported file up to maxHashed bytes is also copied
// into it as it is hashed — read once, through the same os.Root — so that it outlives the
// workspace (package artifact keeps it by its digest).

const (
	maxScanned     = 10000
	maxArtifacts   = 32
	maxHashed      = 32 << 20
	maxHashedTotal = 256 << 20
)

// Keeper keeps a copy of an artifact's bytes, at most limit of them, and returns their
// SHA-256 (hex) and size: *artifact.Store.
type Keeper interface {
	Put(r io.Reader, limit int64) (sha256 string, size int64, err error)
}

// stamp is what the snapshot keeps of a file.
type stamp struct {
	size, mtime int64
}

// snapshot is the state of a workspace before a cell.
type snapshot struct {
	root   *os.Root
	before map[string]stamp
	keep   Keeper // nil: artifacts are described, not kept
}

// takeSnapshot records the workspace's files; nil when there is no workspace to open.
func takeSnapshot(workspace string, keep Keeper) *snapshot {
	if workspace == "" {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil
	}
	s := &snapshot{root: root, keep: keep}
	s.before = s.scan()
	return s
}

func (s *snapshot) close() {
	if s != nil {
		s.root.Close()
	}
}

// scan stamps the workspace's regular files by slash-separated relative path.
func (s *snapshot) scan() map[string]stamp {
	files := map[string]stamp{}
	seen := 0
	fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case p == ".":
			return err // an unreadable workspace: nothing to compare
		case err != nil:
			return nil // an entry that vanished or cannot be read
		}
		if seen++; seen > maxScanned {
			return fs.SkipAll
		}
		if name := d.Name(); strings.HasPrefix(name, ".") || name == "__pycache__" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; symlinks, FIFOs and devices are not files of the cell's
		}
		if info, err := d.Info(); err == nil {
			files[p] = stamp{info.Size(), info.ModTime().UnixNano()}
		}
		return nil
	})
	return files
}

// artifacts scans the workspace again and describes what is new or changed since the
// snapshot, in lexical order.
func (s *snapshot) artifacts() []*protocol.Artifact {
	if s == nil {
		return nil
	}
	after := s.scan()
	var changed []string
	for p, st := range after {
		if old, ok := s.before[p]; !ok || old != st {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	var out []*protocol.Artifact
	budget := int64(maxHashedTotal)
	for _, p := range changed {
		if len(out) == maxArtifacts {
			break
		}
		if a := s.describe(p, &budget); a != nil && a.Validate() == nil {
			out = append(out, a)
		}
	}
	return out
}

// describe stats and hashes one file, spending budget on the bytes it hashes; nil when it is
// no longer a regular file.
func (s *snapshot) describe(p string, budget *int64) *protocol.Artifact {
	f, info, err := OpenWorkspaceFile(s.root, p)
	if err != nil {
		return nil
	}
	defer f.Close()
	a := &protocol.Artifact{Path: p, MIMEType: protocol.ArtifactType(p), Size: info.Size()}
	if a.Validate() != nil { // a name a client would refuse: neither read nor kept
		return nil
	}
	if a.Size > maxHashed || a.Size > *budget {
		return a
	}
	if s.keep != nil {
		sum, n, err := s.keep.Put(f, maxHashed)
		*budget -= n
		if err == nil && n == a.Size { // a file still being written keeps no digest
			a.SHA256 = sum
		}
		return a
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxHashed+1))
	*budget -= n
	if err == nil && n == a.Size { // a file still being written keeps no digest
		a.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return a
}

// OpenWorkspaceFile opens name, a regular file under root (a workspace), for reading: not
// through a symlink out of root (os.Root), and without blocking on a FIFO, which it refuses
// like a device or a directory.
func OpenWorkspaceFile(root *os.Root, name string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%v)", name, info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// artifactMessage is the progress message that reports a.
func artifactMessage(a *protocol.Artifact) *Message {
	return &Message{protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{
		Kind: protocol.ObsArtifact, Time: time.Now(), Artifact: a}}}
}

// mtimeSlack is how much older than a job's start a file it wrote may look: the kernel
// stamps files from a coarse clock, a tick behind the one the scheduler read.
const mtimeSlack = 20 * time.Millisecond

// jobArtifacts describes the files of a job's workspace that the job created or changed —
// those modified since it started; the older ones are its inputs — bounded and kept (with a
// Keeper) as a cell's are. Nil when the workspace cannot be opened (a scheduler's workspace
// this host does not see).
func jobArtifacts(workspace string, started time.Time, keep Keeper) []*protocol.Artifact {
	if workspace == "" || started.IsZero() {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil
	}
	defer root.Close()
	s := &snapshot{root: root, keep: keep, before: map[string]stamp{}}
	since := started.Add(-mtimeSlack).UnixNano()
	for p, st := range s.scan() {
		if st.mtime < since {
			s.before[p] = st
		}
	}
	return s.artifacts()
}
