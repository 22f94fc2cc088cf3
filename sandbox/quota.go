package sandbox

import (
	"os"
	"syscall"
	"time"
)

// How often the quota watchdog measures a workspace: every quotaMin when a walk is cheap, up to
// quotaMax for big trees, so that walking costs at most 1/quotaCost of a core.
const (
	quotaMin   = 50 * time.Millisecond
	quotaMax   = 5 * time.Second
	quotaCost  = 20
	quotaGrace = 3 * time.Second // a command still writing this long after a breach is killed
)

// watchdog enforces a command's workspace quota: it measures the blocks the workspace has
// allocated while the command runs and reports (breach) when the workspace has grown by more
// than limit since the command was made. Its kernel is expected to interrupt the cell then; a
// command that goes on writing for quotaGrace after a breach is killed (kill).
type watchdog struct {
	root  string
	skip  map[string]bool // read-only subtrees inside root: they cannot grow
	limit int64
	base  int64
	// cpu returns the sandbox's CPU time; while it stands still nothing can have been written
	// and the walk is skipped. ok false: unknown, always walk.
	cpu    func() (int64, bool)
	breach func(used int64, killed bool)
	kill   func() // nil when the sandbox's processes cannot be found (no cgroup)
	stop   chan struct{}
	done   chan struct{}
}

// startWatchdog watches root until close. The baseline is measured first, in the watchdog's
// own goroutine, so that a big workspace does not delay the command's start; what the command
// writes in the meantime is not counted.
func startWatchdog(w *watchdog) *watchdog {
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go w.run()
	return w
}

func (w *watchdog) close() {
	close(w.stop)
	<-w.done
}

func (w *watchdog) run() {
	defer close(w.done)
	w.base = allocated(w.root, w.skip)
	interval := quotaMin
	t := time.NewTimer(interval)
	defer t.Stop()
	lastCPU, lastUsed := int64(-1), int64(0)
	var since time.Time // when the current breach began; zero: none
	var level int64     // the growth at that moment
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if c, ok := w.cpu(); ok {
			if c == lastCPU {
				t.Reset(interval)
				continue
			}
			lastCPU = c
		}
		begin := time.Now()
		used := allocated(w.root, w.skip) - w.base
		interval = min(max(quotaCost*time.Since(begin), quotaMin), quotaMax)
		switch {
		case used <= w.limit:
			since = time.Time{}
		case used > lastUsed && since.IsZero():
			since, level = time.Now(), used
			w.breach(used, false)
		case used > lastUsed && time.Since(since) >= quotaGrace && used > level && w.kill != nil:
			w.breach(used, true)
			w.kill()
			since = time.Time{}
		case used <= lastUsed:
			since = time.Time{} // over the quota but no longer writing: the kernel stopped it
		}
		lastUsed = used
		t.Reset(interval)
	}
}

// allocated is the disk space the files under root take (st_blocks, each inode once), except the
// subtrees in skip. What cannot be read is not counted.
func allocated(root string, skip map[string]bool) int64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(root, &st); err != nil {
		return 0
	}
	total := st.Blocks * 512
	seen := map[uint64]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		f, err := os.Open(dir)
		if err != nil {
			return
		}
		names, _ := f.Readdirnames(-1) // unsorted, unlike filepath.WalkDir
		f.Close()
		for _, n := range names {
			p := dir + "/" + n
			if skip[p] {
				continue
			}
			if err := syscall.Lstat(p, &st); err != nil {
				continue
			}
			isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
			if st.Nlink > 1 && !isDir {
				if seen[st.Ino] {
					continue
				}
				seen[st.Ino] = true
			}
			total += st.Blocks * 512
			if isDir {
				walk(p)
			}
		}
	}
	walk(root)
	return total
}
