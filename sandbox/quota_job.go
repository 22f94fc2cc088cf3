package sandbox

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// QuotaWatch is a workspace quota to enforce on a command that another process made with a
// Sandbox and that outlives it: a background job, whose supervisor enforces the quota for the
// job's whole life (WatchQuota).
type QuotaWatch struct {
	// Workspace is the workspace's path with no symbolic link in it (job/local's pinned one).
	Workspace string
	// Limit is how much the workspace may grow, in bytes, while the command runs.
	Limit int64
	// Base is the disk space the workspace took when the command started (WorkspaceBytes);
	// below 0 it is measured when the watch starts.
	Base int64
	// Cgroups are the command's (Sandbox.Cgroups): the watch then reads how much the command
	// has just written, walks only while it uses CPU, lets du in its cgroup measure a big tree,
	// and kills it when it still grows the workspace a while after the breach. Zero: it walks
	// the workspace every few milliseconds and kills nothing.
	Cgroups Cgroups
	// Breach is called once, from the watch's goroutine, when the workspace has grown past
	// Limit; err wraps kernel.ErrQuota and says by how much. The caller stops the command.
	Breach func(err error)
}

// WatchQuota enforces q until stop is called: the same watchdog as a Sandbox's own commands
// (see Limits), measuring the workspace's allocated blocks without following a symbolic link
// and leaving out the read-only top-level dot-entries (mounted read-only in the sandbox).
func WatchQuota(q *QuotaWatch) (stop func()) {
	ws := q.Workspace // resolved by the caller: a symbolic link put in its place since is not followed
	skip := map[string]bool{}
	for _, p := range dotEntries(ws) {
		skip[p] = true
	}
	var once sync.Once
	w := &watchdog{root: ws, skip: skip, limit: q.Limit, base: q.Base, known: q.Base >= 0,
		cpu: func() (int64, bool) { return 0, false }, dirty: func() (int64, bool) { return 0, false }}
	if cg := rebuildCgroup(q.Cgroups); cg != nil {
		w.cpu, w.dirty = cg.cpuTime, cg.dirty
		w.measure = func() (int64, bool) { return measureIn(cg, ws, skip) }
		w.kill = func() { killCgroup(cg) }
		w.pause, w.kmem = cg.pause, cg.kmem
	}
	w.breach = func(used int64, killed bool) {
		once.Do(func() { q.Breach(quotaError(used, q.Limit, ws, killed)) })
	}
	startWatchdog(w)
	return w.close
}

// WorkspaceBytes is the disk space the files under workspace take (each inode once, no
// symbolic link followed); ok is false when measuring took longer than limit (0: no limit).
func WorkspaceBytes(workspace string, limit time.Duration) (int64, bool) {
	return allocatedWithin(workspace, nil, limit)
}

// rebuildCgroup rebuilds the cgroup of a command another process made from its files; nil when
// there is none.
func rebuildCgroup(c Cgroups) *cgroup {
	if len(c.Dirs) == 0 {
		return nil
	}
	cg := &cgroup{version: 1, dirs: c.Dirs, by: map[string]string{}}
	if _, err := os.Stat(filepath.Join(c.Dirs[0], "cgroup.controllers")); err == nil {
		cg.version = 2
		for _, ctl := range []string{ctlMemory, ctlPids, ctlAcct} {
			cg.by[ctl] = c.Dirs[0]
		}
		return cg
	}
	for _, d := range c.Dirs {
		for ctl, file := range map[string]string{ctlMemory: "memory.stat", ctlPids: "pids.max", ctlAcct: "cpuacct.usage"} {
			if _, err := os.Stat(filepath.Join(d, file)); err == nil && cg.by[ctl] == "" {
				cg.by[ctl] = d
			}
		}
	}
	return cg
}
