package joblog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/job"
)

// fixture is a job directory with stdout, stderr and a workspace following out.log.
type fixture struct {
	t        *testing.T
	dir, ws  string
	streams  []Stream
	outsider string // a file outside the workspace
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, dir: t.TempDir(), ws: t.TempDir()}
	f.outsider = filepath.Join(t.TempDir(), "secret")
	f.streams = Streams(filepath.Join(f.dir, "stdout"), filepath.Join(f.dir, "stderr"),
		&job.Spec{Workspace: f.ws, Follow: []string{"out.log"}})
	return f
}

func (f *fixture) index() *Index { return New(f.dir, f.streams, nil) }

// write appends s to path.
func (f *fixture) write(path, s string) {
	f.t.Helper()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := w.WriteString(s); err != nil {
		f.t.Fatal(err)
	}
	w.Close()
}

func collect(t *testing.T, x *Index, final bool) {
	t.Helper()
	if err := x.Collect(final); err != nil {
		t.Fatal(err)
	}
}

// lines are x's lines after seq after as "seq stream: text".
func lines(t *testing.T, x *Index, after int64) []string {
	t.Helper()
	var out []string
	for l, err := range x.Lines(after) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s: %s", l.Seq, l.Stream, l.Text))
	}
	return out
}

func TestNumberingAcrossIndexes(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "stdout")
	a, b := f.index(), f.index()
	f.write(out, "one\ntwo\n")
	collect(t, a, false)
	f.write(out, "three\n")
	f.write(filepath.Join(f.dir, "stderr"), "oops\r\n")
	collect(t, b, false)
	collect(t, a, false) // nothing new: a catches up with b
	f.write(out, "four\n")
	collect(t, a, false)
	want := []string{"1 stdout: one", "2 stdout: two", "3 stdout: three", "4 stderr: oops", "5 stdout: four"}
	for name, x := range map[string]*Index{"a": a, "b": b, "fresh": f.index()} {
		if diff := cmp.Diff(want, lines(t, x, 0)); diff != "" {
			t.Errorf("%s: lines (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(want[3:], lines(t, x, 3)); diff != "" {
			t.Errorf("%s: lines after 3 (-want +got):\n%s", name, diff)
		}
		if got := x.Last(); got != "four" {
			t.Errorf("%s: Last() = %q, want four", name, got)
		}
	}
}

func TestTornRecord(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "stdout")
	f.write(out, "one\n")
	collect(t, f.index(), false)
	f.write(filepath.Join(f.dir, "log.jsonl"), `{"seq":2,"stream":"stdout","te`) // a writer died here
	x := f.index()
	if got := lines(t, x, 0); !cmp.Equal(got, []string{"1 stdout: one"}) {
		t.Errorf("before repair: %q", got)
	}
	f.write(out, "two\n")
	collect(t, x, false)
	if diff := cmp.Diff([]string{"1 stdout: one", "2 stdout: two"}, lines(t, f.index(), 0)); diff != "" {
		t.Errorf("after repair (-want +got):\n%s", diff)
	}
}

func TestPartialLastLine(t *testing.T) {
	f := newFixture(t)
	x := f.index()
	f.write(filepath.Join(f.dir, "stdout"), "done\nhalf")
	collect(t, x, false)
	if got := lines(t, x, 0); !cmp.Equal(got, []string{"1 stdout: done"}) {
		t.Errorf("running: %q, want the complete line only", got)
	}
	collect(t, x, true)
	if got := lines(t, x, 0); !cmp.Equal(got, []string{"1 stdout: done", "2 stdout: half"}) {
		t.Errorf("ended: %q, want the unfinished line too", got)
	}
	if got := x.Last(); got != "half" {
		t.Errorf("Last() = %q, want half", got)
	}
}

func TestSymlinkedFollowRefused(t *testing.T) {
	f := newFixture(t)
	f.write(f.outsider, "password\n")
	if err := os.Symlink(f.outsider, filepath.Join(f.ws, "out.log")); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.dir, "stdout"), "hello\n")
	x := f.index()
	collect(t, x, true)
	if got := lines(t, x, 0); !cmp.Equal(got, []string{"1 stdout: hello"}) {
		t.Errorf("lines %q: a followed symlink out of the workspace was read", got)
	}
}

func TestFollowAppearsLate(t *testing.T) {
	f := newFixture(t)
	x := f.index()
	collect(t, x, false)
	f.write(filepath.Join(f.ws, "out.log"), "step 1\nstep")
	collect(t, x, false)
	f.write(filepath.Join(f.ws, "out.log"), " 2\n")
	collect(t, x, false)
	if diff := cmp.Diff([]string{"1 out.log: step 1", "2 out.log: step 2"}, lines(t, x, 0)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestFollowedFIFO(t *testing.T) {
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.ws, "out.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.index().Collect(true) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Collect hangs on a followed FIFO")
	}
}

func TestLongLineAndPass(t *testing.T) {
	f := newFixture(t)
	x := f.index()
	long := strings.Repeat("x", MaxLine+10)
	many := strings.Repeat(strings.Repeat("y", 1023)+"\n", 2*MaxPass/1024) // twice a pass
	f.write(filepath.Join(f.dir, "stdout"), long+"\n"+many)
	collect(t, x, false)
	var n int
	var texts []int
	for l, err := range x.Lines(0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n <= 2 {
			texts = append(texts, len(l.Text))
		}
	}
	if !cmp.Equal(texts, []int{MaxLine, 10}) {
		t.Errorf("a line of %d bytes became lines of %v bytes", len(long), texts)
	}
	if all := 2 + 2*MaxPass/1024; n >= all || n < MaxPass/1024 {
		t.Errorf("one pass took %d of %d lines, want about a pass (%d bytes)", n, all, MaxPass)
	}
	collect(t, x, true)
	if got, want := int64(len(lines(t, x, 0))), int64(2+2*MaxPass/1024); got != want {
		t.Errorf("after the final pass: %d lines, want %d", got, want)
	}
}

// TestOldFormat reads job directories as job/local (log) and job/slurm (log.jsonl, log.lock,
// local times) wrote them before this package, and continues their numbering.
func TestOldFormat(t *testing.T) {
	for _, tc := range []struct {
		log  string
		opts *Options
	}{
		{"local.log", &Options{Log: "log"}},
		{"slurm.log.jsonl", &Options{Log: "log.jsonl", Lock: "log.lock"}},
	} {
		t.Run(tc.log, func(t *testing.T) {
			dir := t.TempDir()
			for from, to := range map[string]string{tc.log: tc.opts.Log, "stdout": "stdout"} {
				b, err := os.ReadFile(filepath.Join("testdata", from))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			x := New(dir, Streams(filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), nil), tc.opts)
			if got := x.Last(); got != "two" {
				t.Errorf("Last() = %q, want two", got)
			}
			collect(t, x, false)
			if diff := cmp.Diff([]string{"1 stdout: one", "2 stdout: two", "3 stdout: three"}, lines(t, x, 0)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			for l := range x.Lines(0) {
				if l.Time.IsZero() {
					t.Errorf("line %d: no time", l.Seq)
				}
			}
		})
	}
}

func TestTail(t *testing.T) {
	f := newFixture(t)
	x := f.index()
	out := filepath.Join(f.dir, "stdout")
	looks := 0
	look := func(ctx context.Context) (bool, error) {
		looks++
		ended := looks == 3
		if !ended {
			f.write(out, "line\n")
		}
		return ended, x.Collect(ended)
	}
	var got []int64
	for l, err := range x.Tail(context.Background(), 1, true, look, &TailOptions{Poll: time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Seq)
	}
	if !cmp.Equal(got, []int64{2}) || looks != 3 {
		t.Errorf("followed seqs %v in %d looks, want [2] in 3", got, looks)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range x.Tail(ctx, 0, true, func(ctx context.Context) (bool, error) { return false, ctx.Err() }, nil) {
		if err != context.Canceled {
			t.Errorf("cancelled: %v", err)
		}
	}
}
