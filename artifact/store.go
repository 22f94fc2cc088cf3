// Package artifact keeps the files cells report — figures, tables, logs — by content, so
// that they outlive the workspace that made them and the server that ran the cell. A Store
// is a directory: each file is kept once under the hex SHA-256 of its bytes
// (DIR/ab/cdef…), its modification time the last time it was stored. The store is bounded:
// past its size, the oldest files that are not pinned are evicted first, each leaving a
// tombstone (DIR/ab/cdef….evicted) that says when, so that a reader is told the file was
// evicted for space rather than that it never was.
package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMax is a Store's size when Options.MaxBytes is zero.
const DefaultMax = 2 << 30

// ErrNotStored is wrapped by Open for a digest the store has never kept (or a malformed
// one); an evicted file's error is an *EvictedError, which wraps it too.
var ErrNotStored = errors.New("artifact: not stored")

// EvictedError says that a file was kept but evicted for space.
type EvictedError struct {
	SHA256 string
	At     time.Time // when it was evicted
	Size   int64     // its size
}

func (e *EvictedError) Error() string {
	return fmt.Sprintf("artifact %s (%d bytes) was evicted for space at %s: the artifact store keeps the newest files up to its size (labmate serve --artifacts-max)",
		e.SHA256, e.Size, e.At.UTC().Format(time.RFC3339))
}

func (e *EvictedError) Unwrap() error { return ErrNotStored }

// Options are a Store's optional settings; nil means the defaults.
type Options struct {
	// MaxBytes bounds the bytes kept. A file larger than that is refused. The store remembers
	// it (DIR/max), so that a store opened later without one — by a command-line process
	// beside labmate serve — keeps the same bound; 0: the bound remembered, else DefaultMax.
	MaxBytes int64
}

// maxFile is where a store remembers its bound.
const maxFile = "max"

// Store is a content-addressed, size-bounded directory of files. Its methods are safe for
// concurrent use by one process.
type Store struct {
	dir string
	max int64

	mu   sync.Mutex
	used int64 // bytes of the kept files
}

// Open opens (creating it) the store in dir.
func Open(dir string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Store{dir: dir, max: opts.MaxBytes}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("artifact: opening store: %w", err)
	}
	if s.max > 0 {
		if err := os.WriteFile(filepath.Join(dir, maxFile), fmt.Appendf(nil, "%d\n", s.max), 0o600); err != nil {
			return nil, fmt.Errorf("artifact: opening store: %w", err)
		}
	} else if b, err := os.ReadFile(filepath.Join(dir, maxFile)); err == nil {
		fmt.Sscanf(string(b), "%d", &s.max)
	}
	if s.max <= 0 {
		s.max = DefaultMax
	}
	files, err := s.files()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		s.used += f.size
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.evict(0)
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// MaxBytes is the store's bound.
func (s *Store) MaxBytes() int64 { return s.max }

// Used is the bytes the kept files take.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// ValidSum reports whether sum is a SHA-256 digest as the store names files: 64 lower-case hex digits.
func ValidSum(sum string) bool {
	if len(sum) != 64 {
		return false
	}
	for _, c := range []byte(sum) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Store) path(sum string) string { return filepath.Join(s.dir, sum[:2], sum[2:]) }

// Put keeps the bytes of r, at most limit of them (a larger file is refused, and so is one
// larger than the store), and returns their SHA-256 and size. A file kept already is not
// written again; it counts as stored now.
func (s *Store) Put(r io.Reader, limit int64) (sum string, size int64, err error) {
	limit = min(limit, s.max)
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return "", 0, fmt.Errorf("artifact: put: %w", err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, limit+1))
	if err != nil {
		return "", 0, fmt.Errorf("artifact: put: %w", err)
	}
	if size > limit {
		return "", 0, fmt.Errorf("artifact: put: more than %d bytes: not kept", limit)
	}
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("artifact: put: %w", err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	p := s.path(sum)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", 0, fmt.Errorf("artifact: put: %w", err)
	}
	now := time.Now()
	if _, err := os.Stat(p); err == nil { // kept already: newer now
		os.Chtimes(p, now, now)
		return sum, size, nil
	}
	if err := s.evict(size); err != nil {
		return "", 0, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", 0, fmt.Errorf("artifact: put: %w", err)
	}
	tmp = nil
	os.Remove(p + ".evicted")
	s.used += size
	return sum, size, nil
}

// Open opens the file kept under sum. The caller closes it. A file evicted for space is an
// *EvictedError; one never kept wraps ErrNotStored.
func (s *Store) Open(sum string) (*os.File, os.FileInfo, error) {
	if !ValidSum(sum) {
		return nil, nil, fmt.Errorf("%w: %q is not a SHA-256 digest (64 lower-case hex digits)", ErrNotStored, sum)
	}
	p := s.path(sum)
	f, err := os.Open(p)
	if err != nil {
		if b, terr := os.ReadFile(p + ".evicted"); terr == nil {
			e := &EvictedError{SHA256: sum}
			fmt.Sscanf(string(b), "%d", &e.Size)
			if info, err := os.Stat(p + ".evicted"); err == nil {
				e.At = info.ModTime()
			}
			return nil, nil, e
		}
		return nil, nil, fmt.Errorf("%w: %s", ErrNotStored, sum)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("artifact: %w", err)
	}
	return f, info, nil
}

// Pin keeps the file under sum from eviction; Unpin lets it go again.
func (s *Store) Pin(sum string) error {
	if !ValidSum(sum) {
		return fmt.Errorf("%w: %q is not a SHA-256 digest", ErrNotStored, sum)
	}
	if _, err := os.Stat(s.path(sum)); err != nil {
		return fmt.Errorf("%w: %s", ErrNotStored, sum)
	}
	return os.WriteFile(s.path(sum)+".pin", nil, 0o600)
}

// Unpin undoes Pin.
func (s *Store) Unpin(sum string) error {
	if !ValidSum(sum) {
		return fmt.Errorf("%w: %q is not a SHA-256 digest", ErrNotStored, sum)
	}
	if err := os.Remove(s.path(sum) + ".pin"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifact: unpin: %w", err)
	}
	return nil
}

// kept is one file of the store.
type kept struct {
	sum    string
	size   int64
	stored time.Time
	pinned bool
}

// files lists the kept files.
func (s *Store) files() ([]kept, error) {
	dirs, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("artifact: %w", err)
	}
	var out []kept
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.dir, d.Name()))
		if err != nil {
			return nil, fmt.Errorf("artifact: %w", err)
		}
		pins := map[string]bool{}
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".pin"); ok {
				pins[n] = true
			}
		}
		for _, e := range entries {
			sum := d.Name() + e.Name()
			if !e.Type().IsRegular() || !ValidSum(sum) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			out = append(out, kept{sum, info.Size(), info.ModTime(), pins[e.Name()]})
		}
	}
	return out, nil
}

// evict removes the oldest unpinned files until need more bytes fit. s.mu is held.
func (s *Store) evict(need int64) error {
	if s.used+need <= s.max {
		return nil
	}
	files, err := s.files()
	if err != nil {
		return err
	}
	slices.SortFunc(files, func(a, b kept) int { return a.stored.Compare(b.stored) })
	for _, f := range files {
		if s.used+need <= s.max {
			break
		}
		if f.pinned {
			continue
		}
		p := s.path(f.sum)
		if err := os.WriteFile(p+".evicted", fmt.Appendf(nil, "%d\n", f.size), 0o600); err != nil {
			return fmt.Errorf("artifact: evicting %s: %w", f.sum, err)
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("artifact: evicting %s: %w", f.sum, err)
		}
		s.used -= f.size
	}
	if s.used+need > s.max {
		return fmt.Errorf("artifact: %d more bytes do not fit in the store (%d of %d bytes used, the rest pinned)", need, s.used, s.max)
	}
	return nil
}
