package artifact_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/artifact"
)

func put(t testing.TB, s *artifact.Store, b []byte) string {
	t.Helper()
	sum, n, err := s.Put(bytes.NewReader(b), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(b); sum != hex.EncodeToString(want[:]) || n != int64(len(b)) {
		t.Fatalf("Put: %s %d bytes; want %x %d", sum, n, want, len(b))
	}
	return sum
}

func read(t *testing.T, s *artifact.Store, sum string) ([]byte, error) {
	t.Helper()
	f, _, err := s.Open(sum)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// TestStore keeps files by content, once each, across a reopening; evicts the oldest
// unpinned ones past its size, leaving a note that says when; refuses what cannot fit.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	s, err := artifact.Open(dir, &artifact.Options{MaxBytes: 3000})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, d := bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 1000), bytes.Repeat([]byte("c"), 1000), bytes.Repeat([]byte("d"), 1000)
	sa := put(t, s, a)
	if p := filepath.Join(dir, sa[:2], sa[2:]); func() bool { _, err := os.Stat(p); return err != nil }() {
		t.Fatalf("no file at %s", p)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, sa[:2], sa[2:]), old, old)
	sb := put(t, s, b)
	os.Chtimes(filepath.Join(dir, sb[:2], sb[2:]), old.Add(time.Minute), old.Add(time.Minute))
	if put(t, s, a) != sa || s.Used() != 2000 { // the same bytes are kept once, and are now the newest
		t.Fatalf("a again: used %d bytes, want 2000", s.Used())
	}
	sc := put(t, s, c)
	if err := s.Pin(sc); err != nil {
		t.Fatal(err)
	}
	// Reopened, the store knows its files.
	if s, err = artifact.Open(dir, &artifact.Options{MaxBytes: 3000}); err != nil || s.Used() != 3000 {
		t.Fatalf("reopened: %v, %d bytes used", err, s.Used())
	}
	sd := put(t, s, d) // b is the oldest now
	_, err = read(t, s, sb)
	var ev *artifact.EvictedError
	if !errors.As(err, &ev) || !errors.Is(err, artifact.ErrNotStored) || ev.Size != 1000 || time.Since(ev.At) > time.Minute ||
		!strings.Contains(err.Error(), "evicted for space at") {
		t.Fatalf("reading the evicted b: %v", err)
	}
	for _, sum := range []string{sa, sc, sd} {
		if got, err := read(t, s, sum); err != nil || len(got) != 1000 {
			t.Errorf("%s: %d bytes, %v", sum, len(got), err)
		}
	}
	// Kept again, b is back.
	if put(t, s, b); s.Used() != 3000 {
		t.Errorf("used %d", s.Used())
	}
	if got, err := read(t, s, sb); err != nil || !bytes.Equal(got, b) {
		t.Errorf("b kept again: %v", err)
	}
	// c is pinned: the others went before it.
	if _, err := read(t, s, sc); err != nil {
		t.Errorf("the pinned c: %v", err)
	}
	if _, _, err := s.Put(bytes.NewReader(make([]byte, 3001)), 1<<30); err == nil {
		t.Error("a file larger than the store was kept")
	}
	if _, _, err := s.Put(bytes.NewReader(make([]byte, 11)), 10); err == nil {
		t.Error("a file over Put's limit was kept")
	}
	for _, bad := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("0", 64)} {
		if _, _, err := s.Open(bad); !errors.Is(err, artifact.ErrNotStored) {
			t.Errorf("Open(%q): %v", bad, err)
		}
	}
}

// BenchmarkArtifactPut and BenchmarkArtifactOpen measure the store's write and read
// throughput on 1 MiB files (a figure, a table).
func BenchmarkArtifactPut(b *testing.B) {
	s, err := artifact.Open(b.TempDir(), &artifact.Options{MaxBytes: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		rand.Read(buf[:64]) // a new file each time
		if _, _, err := s.Put(bytes.NewReader(buf), 1<<30); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArtifactOpen(b *testing.B) {
	s, err := artifact.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	sum := put(b, s, buf)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		f, _, err := s.Open(sum)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// TestStoreRemembersMax: a store opened without a bound keeps the one it was last given, so
// that a command-line process beside labmate serve does not evict by another.
func TestStoreRemembersMax(t *testing.T) {
	dir := t.TempDir()
	if s, err := artifact.Open(dir, nil); err != nil || s.MaxBytes() != artifact.DefaultMax {
		t.Fatalf("a new store: %v, %v", s, err)
	}
	if _, err := artifact.Open(dir, &artifact.Options{MaxBytes: 5000}); err != nil {
		t.Fatal(err)
	}
	s, err := artifact.Open(dir, nil)
	if err != nil || s.MaxBytes() != 5000 {
		t.Fatalf("reopened without a bound: %v, %v; want the 5000 bytes it was given", s.MaxBytes(), err)
	}
}
