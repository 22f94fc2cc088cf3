package sandbox

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// How often the quota watchdog measures a workspace: every quotaMin when a walk is cheap, less
// often for bigger trees, so that walking costs this process at most 1/quotaCost of a core
// whatever the number of files; a tree that takes longer than quotaCheap to walk is measured by
// du(1) inside the sandbox's cgroup, on the sandbox's budget, every quotaMax. Between walks it
// reads, every quotaMin (quotaFast while it writes fast enough to pass its quota within a few
// reads), how much the sandbox has just written (its dirty page cache, one read of a cgroup
// file), and measures at once when that could have passed the quota.
const (
	quotaMin   = 10 * time.Millisecond
	quotaFast  = time.Millisecond // how often a sandbox that writes fast is read
	quotaMax   = 5 * time.Second
	quotaCost  = 20
	quotaGrace = time.Second           // a command still writing this long after a breach is killed
	quotaSlack = 8 << 20               // growth after writes were stopped that is not yet taken for more writing
	quotaCheap = 10 * time.Millisecond // a walk that takes longer is left to the sandbox (measure)
	// quotaKmem is how much of InodeBytes the kernel memory of one new inode is taken for
	// (ext4's inode and dentry take about 1.2 KiB): kernel memory the sandbox gained since the
	// last walk, times this, could be files.
	quotaKmem = 4
	// quotaQuiet is the growth of the sandbox's kernel memory or unwritten page cache past a
	// breach that is taken for files still being made or written.
	quotaQuiet = 64 << 10
)

// InodeBytes is what each file, directory or other inode of a workspace costs in its quota on
// top of its allocated blocks: an empty file allocates none, and 300 000 of them would otherwise
// be free (they cost the filesystem inodes, and whoever walks the tree time).
const InodeBytes = 4 << 10

// watchdog enforces a command's workspace quota: it measures the blocks the workspace has
// allocated while the command runs and, when the workspace has grown by more than limit since
// the command was made, stops the growth at once — every process of the sandbox gets a
// file-size limit of 0, so that any write to a file fails (EFBIG, "File too large") — and
// reports the breach, on which the kernel interrupts the cell. The limit is lifted again once
// the workspace is back within its quota, where labmate may raise it (it may not when it lacks
// CAP_SYS_RESOURCE: then writes fail until the interpreter restarts). A command whose
// workspace still grows after that (through a shared mapping of a file, which no file-size
// limit stops) is killed.
type watchdog struct {
	root  string
	skip  map[string]bool // read-only subtrees inside root: they cannot grow
	limit int64
	base  int64
	known bool // base was measured before the watchdog was made (WatchQuota)
	// cpu returns the sandbox's CPU time; while it stands still nothing can have been written
	// and the walk is skipped. ok false: unknown, always walk.
	cpu func() (int64, bool)
	// dirty returns the bytes the sandbox has written that are not yet on disk; ok false:
	// unknown (no memory cgroup), and only walks tell.
	dirty func() (int64, bool)
	// kmem returns the kernel memory the sandbox's processes hold (its memory cgroup's slab:
	// inodes and dentries among it), which grows with every file or directory made, empty
	// ones too, that dirty does not see: growth since the last walk that could be files past
	// the quota calls for a walk now. ok false: unknown.
	kmem func() (int64, bool)
	// measure, when not nil, measures what walk does from inside the sandbox's cgroup, so that
	// the sandbox pays for its own files: used once a walk costs the host more than quotaCheap.
	measure func() (int64, bool)
	// limitFiles sets the file-size limit of every process of the sandbox to 0 (stop) or back
	// to its policy's, and says whether it reached any; nil: the processes cannot be found.
	limitFiles func(stop bool) bool
	breach     func(used int64, killed bool)
	kill       func() // nil when the sandbox's processes cannot be found (no cgroup)
	// pause stops every process of the sandbox (SIGSTOP) until resume is called: while a
	// workspace that may be past its quota is measured, so that what cannot be stopped by a
	// file-size limit (empty files, directories) does not go on while a big tree is walked.
	// nil: not possible (no cgroup).
	pause func() (resume func())
	stop  chan struct{}
	done  chan struct{}
}

// startWatchdog watches root until close. It is called before the command starts, and the
// baseline is measured here when that is cheap (quotaCheap), so that nothing the command writes
// is taken for the baseline however late the watchdog's goroutine runs. A bigger tree is
// measured in that goroutine, by the sandbox (measure), so that it does not delay the start;
// what the command writes before that measure ends is not counted.
func startWatchdog(w *watchdog) *watchdog {
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	if w.known {
		go w.run()
		return w
	}
	w.base = -1
	if n, ok := allocatedWithin(w.root, w.skip, quotaCheap); ok || w.measure == nil {
		if !ok {
			n = allocated(w.root, w.skip)
		}
		w.base = n
	}
	go w.run()
	return w
}

func (w *watchdog) close() {
	close(w.stop)
	<-w.done
}

func (w *watchdog) run() {
	defer close(w.done)
	var hostCost time.Duration // what the last walk in this process took
	if w.base < 0 {
		// A big tree (startWatchdog could not walk it cheaply): the sandbox measures it.
		var ok bool
		if w.base, ok = w.measure(); !ok {
			w.base = allocated(w.root, w.skip)
		}
		hostCost = quotaCheap + 1
	}
	t := time.NewTicker(quotaMin)
	defer t.Stop()
	lastCPU, used := int64(-1), int64(0)
	var next time.Time  // the earliest time of the next scheduled walk
	var dirtyAt int64   // the sandbox's unwritten page cache at the last walk
	var since time.Time // when the current breach began; zero: none
	var level int64     // the growth at that moment (then just after writes were stopped)
	var stopped bool    // whether writes were stopped then
	var settled bool    // whether the level was measured again after the stop
	var lastDirty int64 // the sandbox's unwritten page cache at the last tick
	var lastUsed int64  // the growth measured by then
	held := func() {}   // resumes a sandbox held stopped from a breach until its level is settled
	if w.kmem == nil {
		w.kmem = func() (int64, bool) { return 0, false }
	}
	kmemAt, _ := w.kmem() // the sandbox's kernel memory at the last walk
	interval := quotaMin
	for {
		select {
		case <-w.stop:
			held()
			return
		case <-t.C:
		}
		if c, ok := w.cpu(); ok {
			if c == lastCPU && since.IsZero() {
				continue
			}
			lastCPU = c
		}
		// Between walks, what the sandbox has written since counts at once: a walk is due now
		// if it could have taken the workspace past its quota.
		d, known := w.dirty()
		suspect := known && used+max(d-dirtyAt, 0) > w.limit
		k, kmemKnown := w.kmem()
		if kmemKnown && used+quotaKmem*max(k-kmemAt, 0) > w.limit {
			suspect = true
		}
		// Past a breach, whether the sandbox may be making files (its kernel memory grows: no
		// file-size limit stops that) or writing since the last walk.
		makingFiles := kmemKnown && k-kmemAt > quotaQuiet
		grew := makingFiles || known && d-dirtyAt > quotaQuiet
		// A sandbox writing fast enough to use up what is left of its quota within four
		// reads is read every quotaFast, so that it cannot go far past it between two reads.
		want := quotaMin
		if grew := max(d-lastDirty, 0) + max(used-lastUsed, 0); known && used <= w.limit && 4*grew > w.limit-used {
			want = quotaFast
		}
		if want != interval {
			interval = want
			t.Reset(interval)
		}
		lastDirty, lastUsed = d, used
		if time.Now().Before(next) && !suspect && since.IsZero() {
			continue
		}
		begin := time.Now()
		kmemNow, _ := w.kmem()
		resume := func() {}
		// Paused: a measure that may find a breach, the one that settles its level, and later
		// ones while the sandbox may still be making files: nothing grows while they walk, and
		// an idle interpreter past its quota (its cell interrupted) is not stopped again and
		// again while the user cleans up.
		paused := w.pause != nil && (since.IsZero() && suspect || !since.IsZero() && (!settled || grew))
		if paused {
			resume = w.pause()
		}
		// Past a breach, growth is judged from the last paused measure, not the last one: a
		// sandbox making a few files per tick would otherwise never look busy.
		if since.IsZero() || paused {
			kmemAt = kmemNow
		}
		total, measured := int64(0), false
		if w.measure != nil && hostCost <= quotaCheap {
			// A tree that may be small: walked here, unless it takes too long.
			total, measured = allocatedWithin(w.root, w.skip, quotaCheap)
			hostCost = time.Since(begin)
			next = begin.Add(max(quotaCost*hostCost, quotaMin))
		}
		if !measured && w.measure != nil {
			// A big tree: the sandbox's own processes measure it, in its CPU and memory
			// budget, as often as its writing calls for. That takes long enough for a sandbox
			// making files to make thousands more, which the measure may not see: one that may
			// be making or writing files is held stopped while it runs.
			if !paused && w.pause != nil && (grew || !kmemKnown) {
				resume, paused = w.pause(), true
			}
			total, measured = w.measure()
			hostCost, next = quotaCheap+1, begin.Add(quotaMax)
		}
		if !measured {
			total = allocated(w.root, w.skip)
			hostCost = time.Since(begin)
			next = begin.Add(max(quotaCost*hostCost, quotaMin))
		}
		used, dirtyAt = total-w.base, d
		// The processes go on only once what the measure calls for is done: writes stopped at
		// a new breach, a sandbox growing past one killed (a killed one, resumed, stays dead).
		switch {
		case used <= w.limit:
			resume()
			held()
			if !since.IsZero() && w.limitFiles != nil {
				w.limitFiles(false)
			}
			since = time.Time{}
		case since.IsZero():
			since, level, settled = time.Now(), used, false
			stopped = w.limitFiles != nil && w.limitFiles(true)
			// Held stopped until the measure that settles the level: what no file-size limit
			// stops (new files, directories) cannot go on meanwhile, however late that is. The
			// measure's own pause is the hold when there was one (resuming it would resume all).
			switch {
			case paused:
				held = resume
			case w.pause != nil:
				held = w.pause()
			}
			w.breach(used, false)
		case !settled && stopped && used > level+2*quotaSlack && w.kill != nil:
			// Grown by more than writes under way at the stop could have written: it makes
			// what no file-size limit stops (empty files, directories, a shared mapping).
			w.breach(used, true) // before the kill, so that whoever sees the command end sees why
			w.kill()
			resume()
			held()
			since = time.Time{}
		case !settled:
			// The first measure after writes were stopped: what was written between the last
			// measure and the stop (writes already under way finish) is the level growth is
			// judged from.
			level, settled = max(level, used), true
			resume()
			held()
		default:
			if w.limitFiles != nil {
				w.limitFiles(true) // processes forked since
			}
			// Once every write fails, the workspace cannot grow but through a shared mapping
			// of a file, new files and directories (or a process that escaped the limit): a
			// command still growing it is killed at once, or after quotaGrace where writes
			// could not be stopped — but at once when it makes files, which no limit stops.
			growing := used > level+quotaSlack/8
			if growing && (stopped || makingFiles || time.Since(since) >= quotaGrace) && w.kill != nil {
				w.breach(used, true)
				w.kill()
				resume()
				since = time.Time{}
			} else {
				resume()
			}
		}
	}
}

// allocated is the disk space the files under root take (st_blocks, each inode once, and
// InodeBytes for each inode), except the subtrees in skip. It goes down through directory descriptors, never following a symlink, and
// reads each directory in batches, so that its memory stays small whatever the number of files.
// What cannot be read is not counted.
func allocated(root string, skip map[string]bool) int64 {
	n, _ := allocatedWithin(root, skip, 0)
	return n
}

// allocatedWithin is allocated, given up (ok false) once it has taken longer than limit (0: no
// limit).
func allocatedWithin(root string, skip map[string]bool, limit time.Duration) (n int64, ok bool) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, true
	}
	deadline := time.Now().Add(limit)
	late := false
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return 0, true
	}
	total := st.Blocks*512 + InodeBytes
	seen := map[uint64]bool{}
	var walk func(fd int, dir string)
	walk = func(fd int, dir string) {
		f := os.NewFile(uintptr(fd), dir)
		defer f.Close()
		for !late {
			names, err := f.Readdirnames(1024)
			late = limit > 0 && time.Now().After(deadline)
			for _, n := range names {
				if len(skip) > 0 && skip[dir+"/"+n] {
					continue
				}
				if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
				if st.Nlink > 1 && !isDir {
					if seen[st.Ino] {
						continue
					}
					seen[st.Ino] = true
				}
				total += st.Blocks*512 + InodeBytes
				if isDir {
					if sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
						walk(sub, dir+"/"+n)
					}
				}
			}
			if err != nil || len(names) == 0 {
				return
			}
		}
	}
	walk(fd, root)
	return total, !late
}
