package operation

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/protocol"
)

func TestFollowTargets(t *testing.T) {
	for _, c := range []struct {
		kernel, code string
		want         []string
	}{
		{"shell", "pw.x < si.in > si.out", []string{"si.out"}},
		{"shell", "mpirun -np 2 pw.x -inp scf.in >scf.out 2>scf.err", []string{"scf.out", "scf.err"}},
		{"shell", "python3 sim.py >> run.log 2>&1", []string{"run.log"}},
		{"shell", "lmp -in in.cu | tee md.log", []string{"md.log"}},
		{"shell", "lmp -in in.cu -screen none", []string{"log.lammps"}},
		{"shell", "lmp -in in.cu -screen none -log cu.log", []string{"cu.log"}},
		{"shell", "lmp -in in.cu -sc none -log none", nil},
		{"shell", "lmp -in in.cu", nil},
		{"shell", "cat > in.cu <<EOF\nrun 100 > x\nEOF\necho hi > notes.txt\nlmp -in in.cu > md.out", []string{"md.out"}},
		{"shell", "make 2>&1 > /dev/null; ./a.out > /tmp/x > ../y > $OUT", nil},
		{"shell", "# pw.x > old.out\n", nil},
		{"python", "import os\nos.system('pw.x < in > out')", nil},
	} {
		if got := FollowTargets(c.kernel, c.code); !cmp.Equal(c.want, got) {
			t.Errorf("FollowTargets(%q, %q) = %q, want %q", c.kernel, c.code, got, c.want)
		}
	}
}

func TestFollower(t *testing.T) {
	ws := t.TempDir()
	write := func(name, s string, flag int) {
		f, err := os.OpenFile(filepath.Join(ws, name), flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write("run.log", "stale line from an earlier run\n", os.O_TRUNC)
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "escape.log")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFollower(ws, []string{"run.log", "later.log", "escape.log", "fifo.log"})
	defer f.close()
	var got []string
	observe := func(o *protocol.Observation) {
		if o.Kind != protocol.ObsFile {
			t.Errorf("kind %s", o.Kind)
		}
		got = append(got, o.Path+": "+o.Line)
	}
	poll := func(final bool) []string {
		got = nil
		done := make(chan struct{})
		go func() { f.poll(time.Now(), final, observe); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("poll blocked (a FIFO?)")
		}
		return got
	}
	if p := poll(false); p != nil {
		t.Errorf("first poll: %q, want nothing (the stale line is skipped)", p)
	}
	write("run.log", "step 1\nstep 2\npart", os.O_APPEND)
	write("later.log", "created during the run\n", 0)
	if diff := cmp.Diff([]string{"run.log: step 1", "run.log: step 2", "later.log: created during the run"}, poll(false)); diff != "" {
		t.Errorf("appended lines (-want +got):\n%s", diff)
	}
	write("run.log", "ial", os.O_APPEND) // growth without a complete line: activity
	if diff := cmp.Diff([]string{"run.log: "}, poll(false)); diff != "" {
		t.Errorf("partial line (-want +got):\n%s", diff)
	}
	write("run.log", "fresh\n", os.O_TRUNC) // truncated and rewritten: from the start
	if diff := cmp.Diff([]string{"run.log: fresh"}, poll(false)); diff != "" {
		t.Errorf("truncated file (-want +got):\n%s", diff)
	}
	write("run.log", "last words", os.O_APPEND)
	if diff := cmp.Diff([]string{"run.log: last words"}, poll(true)); diff != "" {
		t.Errorf("final poll (-want +got):\n%s", diff)
	}
	// The symlink out of the workspace and the FIFO gave nothing and blocked nothing.
}

func TestCheckFollow(t *testing.T) {
	for _, bad := range [][]string{{"/etc/passwd"}, {"../x"}, {""}, make([]string, 17)} {
		_, err := Check(&protocol.Request{Kind: "exec", Kernel: "shell", Code: "true", Follow: bad})
		if err == nil {
			t.Errorf("follow %q accepted", bad)
		}
	}
	p, err := Check(&protocol.Request{Kind: "exec", Kernel: "shell", Code: "pw.x < in > scf.out", Follow: []string{"extra.log"}})
	if err != nil || !cmp.Equal(p.Follow, []string{"extra.log", "scf.out"}) || p.Watch.Profile != "qe" {
		t.Errorf("plan %+v, %v", p, err)
	}
}
