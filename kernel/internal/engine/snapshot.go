package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// A snapshot directory holds the manifest (a kernel.Snapshot as JSON) and the one data file it
// names. The interpreter writes the data file in the workspace under a temporary name, because
// the workspace's dot-directories (where snapshots go) are read-only inside the sandbox; the host
// checksums it, moves it into the directory under a new name, replaces the manifest (temporary
// file, then rename) and removes the previous data file. At every moment the manifest names a
// complete data file, so a crash mid-save leaves the previous snapshot. Like the run store, this
// survives a crash of the process; after a power loss the checksum reports a lost data file.
//
// The sandboxed code can write the workspace, symlinks included, so the host touches the
// snapshot only through an os.Root of the workspace: no path of it can lead the host outside.
const (
	manifestName = "snapshot.json"
	dataPrefix   = "state-"
	// reportPrefix starts the lines a SaveState or LoadState cell prints:
	// "labmate-snapshot\tsaved|skipped|restored\tNAME[\tREASON]".
	reportPrefix = "labmate-snapshot\t"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshotter is a Kernel whose dialect can save and load its variables.
type snapshotter struct{ *Kernel }

var _ kernel.Snapshotter = (*snapshotter)(nil)

// Save saves the interpreter's variables into dir; see kernel.Snapshotter.
func (s *snapshotter) Save(ctx context.Context, dir string) (*kernel.Snapshot, error) {
	k, begin := s.Kernel, time.Now()
	root, dir, err := k.snapshotDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	id := randomHex()
	staging := "labmate-snapshot-" + id + ".tmp"
	defer root.Remove(staging) // gone already once moved into dir
	report, failed, err := k.internal(ctx, k.d.SaveState(filepath.Join(k.ws, staging)))
	if err != nil {
		return nil, fmt.Errorf("%s kernel: saving the variables: %w", k.d.Name, err)
	}
	if failed != "" {
		return nil, fmt.Errorf("%s kernel: saving the variables: %s", k.d.Name, failed)
	}
	snap := &kernel.Snapshot{Kernel: k.d.Name, Time: begin, File: dataPrefix + id}
	for _, r := range report {
		switch r.verb {
		case "saved":
			snap.Saved = append(snap.Saved, r.name)
		case "skipped":
			snap.Skipped = append(snap.Skipped, kernel.Skipped{Name: r.name, Reason: r.reason})
		}
	}
	if snap.Size, snap.CRC32C, err = checksum(root, staging); err != nil {
		return nil, fmt.Errorf("%s kernel: saving the variables: %w", k.d.Name, err)
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s kernel: snapshot directory: %w", k.d.Name, err)
	}
	data := filepath.Join(dir, snap.File)
	if err := root.Rename(staging, data); err != nil {
		return nil, fmt.Errorf("%s kernel: saving the variables: %w", k.d.Name, err)
	}
	snap.Duration = time.Since(begin)
	if err := writeManifest(root, dir, snap); err != nil {
		root.Remove(data)
		return nil, fmt.Errorf("%s kernel: saving the variables: %w", k.d.Name, err)
	}
	if d, err := root.Open(dir); err == nil {
		entries, _ := d.ReadDir(-1)
		d.Close()
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), dataPrefix) && e.Name() != snap.File {
				root.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return snap, nil
}

// Restore loads the snapshot in dir into the interpreter; see kernel.Snapshotter.
func (s *snapshotter) Restore(ctx context.Context, dir string) (*kernel.Snapshot, error) {
	k, begin := s.Kernel, time.Now()
	root, dir, err := k.snapshotDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, err := root.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", kernel.ErrNoSnapshot, filepath.Join(k.ws, dir))
	}
	if err != nil {
		return nil, fmt.Errorf("%s kernel: reading the snapshot: %w", k.d.Name, err)
	}
	m := &kernel.Snapshot{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", kernel.ErrBadSnapshot, filepath.Join(k.ws, dir, manifestName), err)
	}
	switch {
	case m.Kernel != k.d.Name:
		return nil, fmt.Errorf("%w: %s holds a %q kernel's snapshot, not a %s one", kernel.ErrBadSnapshot, filepath.Join(k.ws, dir), m.Kernel, k.d.Name)
	case !strings.HasPrefix(m.File, dataPrefix) || filepath.Base(m.File) != m.File:
		return nil, fmt.Errorf("%w: %s names the data file %q", kernel.ErrBadSnapshot, filepath.Join(k.ws, dir, manifestName), m.File)
	}
	path := filepath.Join(k.ws, dir, m.File)
	size, crc, err := checksum(root, filepath.Join(dir, m.File))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", kernel.ErrBadSnapshot, err)
	case size < m.Size:
		return nil, fmt.Errorf("%w: %s is truncated: %d of %d bytes", kernel.ErrBadSnapshot, path, size, m.Size)
	case size != m.Size || crc != m.CRC32C:
		return nil, fmt.Errorf("%w: %s is corrupt: %d bytes with CRC-32C %08x, saved as %d bytes with %08x", kernel.ErrBadSnapshot, path, size, crc, m.Size, m.CRC32C)
	}
	snap := &kernel.Snapshot{Kernel: m.Kernel, Time: m.Time, File: m.File, Size: m.Size, CRC32C: m.CRC32C, Skipped: m.Skipped}
	if len(m.Saved) == 0 {
		snap.Duration = time.Since(begin)
		return snap, nil // nothing was saved, so there is nothing to load
	}
	report, failed, err := k.internal(ctx, k.d.LoadState(path))
	if err != nil {
		return nil, fmt.Errorf("%s kernel: restoring the variables: %w", k.d.Name, err)
	}
	if failed != "" {
		return nil, fmt.Errorf("%w: %s: the %s kernel could not load it: %s", kernel.ErrBadSnapshot, path, k.d.Name, failed)
	}
	for _, r := range report {
		switch r.verb {
		case "restored":
			snap.Saved = append(snap.Saved, r.name)
		case "skipped":
			snap.Skipped = append(snap.Skipped, kernel.Skipped{Name: r.name, Reason: r.reason})
		}
	}
	snap.Duration = time.Since(begin)
	return snap, nil
}

// snapshotDir opens the workspace as a root and returns dir relative to it. dir must lie
// inside the workspace: the interpreter must see it to load the snapshot, and a rename does
// not cross file systems.
func (k *Kernel) snapshotDir(dir string) (*os.Root, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s kernel: snapshot directory: %w", k.d.Name, err)
	}
	if !strings.HasPrefix(abs, k.ws+string(filepath.Separator)) {
		return nil, "", fmt.Errorf("%s kernel: snapshot directory %s is not inside the workspace %s", k.d.Name, abs, k.ws)
	}
	root, err := os.OpenRoot(k.ws)
	if err != nil {
		return nil, "", fmt.Errorf("%s kernel: workspace: %w", k.d.Name, err)
	}
	return root, abs[len(k.ws)+1:], nil
}

// reportLine is one line a SaveState or LoadState cell printed.
type reportLine struct{ verb, name, reason string }

// internal runs one of labmate's own cells and returns its report lines; failed is the cell's
// error when it did not end ok (the session lives on).
func (k *Kernel) internal(ctx context.Context, code string) (report []reportLine, failed string, err error) {
	var res *protocol.Result
	var stderr []string
	for s, err := range k.Exec(ctx, &kernel.Cell{Code: code}) {
		if err != nil {
			return nil, "", err
		}
		if s.Result != nil {
			res = s.Result
			continue
		}
		o := s.Observation
		switch {
		case o.Kind == protocol.ObsStdout && strings.HasPrefix(o.Line, reportPrefix):
			f := strings.SplitN(strings.TrimPrefix(o.Line, reportPrefix), "\t", 3)
			if len(f) >= 2 {
				r := reportLine{verb: f[0], name: f[1]}
				if len(f) == 3 {
					r.reason = f[2]
				}
				report = append(report, r)
			}
		case o.Kind == protocol.ObsStderr && o.Line != "" && len(stderr) < 5:
			stderr = append(stderr, o.Line)
		}
	}
	if res == nil {
		return nil, "", errors.New("the kernel gave no result")
	}
	if res.Status != protocol.StatusOK {
		failed = string(res.Status)
		if res.Error != "" {
			failed = res.Error
		} else if len(stderr) > 0 {
			failed += ": " + strings.Join(stderr, " | ")
		}
	}
	return report, failed, nil
}

// checksum returns the length and CRC-32C of the regular file at path in root. The file is
// the sandboxed code's to make: it is opened without blocking (a FIFO with no writer, or a
// symbolic link to one, would hold open(2) for ever, past any context) and refused unless it
// is a regular file.
func checksum(root *os.Root, path string) (int64, uint32, error) {
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("%s is not a regular file", path)
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return n, h.Sum32(), nil
}

// writeManifest replaces the manifest in root's dir with snap: a new file, then a rename.
func writeManifest(root *os.Root, dir string, snap *kernel.Snapshot) error {
	b, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, manifestName+"."+randomHex()+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err = errors.Join(err, f.Close()); err == nil {
		err = root.Rename(tmp, filepath.Join(dir, manifestName))
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
