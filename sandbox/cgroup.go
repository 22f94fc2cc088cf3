package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
)

// The cgroup controllers the sandbox uses. cpuacct exists in cgroup v1 only; v2 counts CPU time
// in every cgroup's cpu.stat.
const (
	ctlMemory = "memory"
	ctlPids   = "pids"
	ctlCPU    = "cpu"
	ctlAcct   = "cpuacct"
)

// Directory names below the parent cgroup labmate finds or prepares.
const (
	cgroupDir = "labmate"      // holds one cgroup per command, named <pid>-<n> after the process that made it
	mainDir   = "labmate-main" // cgroup v2: where labmate moves the processes of its delegated cgroup
)

// cfsPeriod is the CPU bandwidth period in µs: CPUs × period is the quota of each period.
const cfsPeriod = 100000

// cgroupTree is where a Sandbox makes the cgroup of each command: in cgroup v1 one parent
// directory per hierarchy, in v2 one.
type cgroupTree struct {
	version  int // 1 or 2; 0: no cgroup at all
	parents  []cgParent
	has      map[string]bool     // the controllers whose limits (or counters) are in force
	problems map[string][]string // why a wanted controller is missing; "": all of them
}

// cgParent is one hierarchy's parent cgroup of labmate's commands.
type cgParent struct {
	dir         string   // the "labmate" directory
	controllers []string // the controllers of this hierarchy labmate uses
}

// cgroup is the cgroup (v1: one per hierarchy) of one command.
type cgroup struct {
	version int
	dirs    []string          // the leaf directories
	by      map[string]string // controller → the leaf that holds its files
}

// cgroupSeq numbers the cgroups this process creates.
var cgroupSeq atomic.Uint64

// why says why controller c is not in force.
func (t *cgroupTree) why(c string) string {
	if t == nil {
		return "no cgroup was looked for"
	}
	all := append(slices.Clone(t.problems[c]), t.problems[""]...)
	if len(all) == 0 {
		return "no cgroup usable here"
	}
	return strings.Join(all, "; ")
}

// how names the mechanism that enforces controller c, e.g. "cgroup v1 memory".
func (t *cgroupTree) how(c string) string {
	if t == nil || !t.has[c] {
		return ""
	}
	return fmt.Sprintf("cgroup v%d %s", t.version, c)
}

// findCgroups returns the cgroups labmate can use here for the controllers in want: cgroup v2
// when the unified hierarchy offers memory and pids to this process (delegated, or a
// container's own root), else cgroup v1 for each wanted controller with a writable hierarchy.
// It never fails: what is missing is in problems.
func findCgroups(want []string) *cgroupTree {
	mounts, err := cgroupMounts()
	if err != nil {
		return &cgroupTree{has: map[string]bool{}, problems: map[string][]string{"": {"reading the cgroup mounts: " + err.Error()}}}
	}
	own, err := ownCgroups()
	if err != nil {
		return &cgroupTree{has: map[string]bool{}, problems: map[string][]string{"": {"reading /proc/self/cgroup: " + err.Error()}}}
	}
	var v2problem string
	if m, ok := mounts.v2(); ok {
		if path, ok := own[""]; ok {
			rel, ok := strings.CutPrefix(path, m.root)
			if !ok {
				rel = ""
			}
			v2want := slices.DeleteFunc(slices.Clone(want), func(c string) bool { return c == ctlAcct })
			t, err := v2Tree(m.point, filepath.Join(m.point, rel), path == "/", v2want)
			if err == nil && t.has[ctlMemory] && t.has[ctlPids] {
				return t
			}
			if err != nil {
				v2problem = "cgroup v2: " + err.Error()
			}
		}
	}
	t := &cgroupTree{version: 1, has: map[string]bool{}, problems: map[string][]string{}}
	done := map[string]bool{} // mount points already prepared
	for _, c := range want {
		m, ok := mounts.v1(c)
		if !ok {
			if c != ctlAcct {
				t.problems[c] = append(t.problems[c], fmt.Sprintf("no cgroup v1 hierarchy has the %s controller", c))
			}
			continue
		}
		if done[m.point] {
			continue
		}
		done[m.point] = true
		var ctls []string
		for _, w := range want {
			if slices.Contains(m.controllers, w) {
				ctls = append(ctls, w)
			}
		}
		path, ok := ownPath(own, ctls[0])
		if !ok {
			for _, c := range ctls {
				t.problems[c] = append(t.problems[c], fmt.Sprintf("this process is in no cgroup of the %s hierarchy", ctls[0]))
			}
			continue
		}
		rel, ok := strings.CutPrefix(path, m.root)
		if !ok {
			rel = ""
		}
		dir := filepath.Join(m.point, rel, cgroupDir)
		if err := prepareParent(dir, 1, ctls); err != nil {
			for _, c := range ctls {
				t.problems[c] = append(t.problems[c], fmt.Sprintf("cgroup v1 %s: %v", c, err))
			}
			continue
		}
		t.parents = append(t.parents, cgParent{dir, ctls})
		for _, c := range ctls {
			t.has[c] = true
		}
	}
	if len(t.parents) == 0 {
		t.version = 0
	}
	if v2problem != "" && !(t.has[ctlMemory] && t.has[ctlPids]) {
		t.problems[""] = append(t.problems[""], v2problem)
	}
	return t
}

// v2Tree finds or prepares labmate's parent cgroup in the unified hierarchy mounted at mount,
// where dir is this process's own cgroup (nsRoot: the root of its cgroup namespace).
// Controllers can be enabled for children only in a cgroup without processes of its own ("no
// internal processes"), so labmate first looks for a parent an earlier labmate prepared in dir
// or above it, and else moves the processes of dir into dir/labmate-main — only if dir is its
// own to reorganise: the root of a container's cgroup namespace, a cgroup systemd delegated
// (Delegate=yes sets the user.delegate or trusted.delegate attribute), or a cgroup where
// labmate is alone.
func v2Tree(mount, dir string, nsRoot bool, want []string) (*cgroupTree, error) {
	avail, err := readFields(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	t := &cgroupTree{version: 2, has: map[string]bool{}, problems: map[string][]string{}}
	var ctls []string
	for _, c := range want {
		if slices.Contains(avail, c) {
			ctls = append(ctls, c)
		} else {
			t.problems[c] = append(t.problems[c], fmt.Sprintf("cgroup v2: the %s controller is not available in %s (cgroup.controllers: %q)", c, dir, strings.Join(avail, " ")))
		}
	}
	if !slices.Contains(ctls, ctlMemory) || !slices.Contains(ctls, ctlPids) {
		return t, fmt.Errorf("memory and pids are not delegated to %s (cgroup.controllers: %q); run labmate in a delegated cgroup, e.g. `systemd-run --user --scope -p Delegate=yes labmate …`", dir, strings.Join(avail, " "))
	}
	// A parent prepared before, here or above (labmate started by labmate lives in labmate-main).
	for a := dir; ; a = filepath.Dir(a) {
		p := filepath.Join(a, cgroupDir)
		if on, err := readFields(filepath.Join(p, "cgroup.subtree_control")); err == nil && containsAll(on, ctls) && syscall.Access(p, 2) == nil {
			if err := prepareParent(p, 2, ctls); err == nil {
				t.parents = []cgParent{{p, ctls}}
				t.markHas(ctls)
				return t, nil
			}
		}
		if a == mount || !strings.HasPrefix(a, mount+"/") {
			break
		}
	}
	if err := syscall.Access(filepath.Join(dir, "cgroup.subtree_control"), 2); err != nil {
		return t, fmt.Errorf("%s is not writable (%v); run labmate in a delegated cgroup, e.g. `systemd-run --user --scope -p Delegate=yes labmate …`", dir, err)
	}
	enable := "+" + strings.Join(ctls, " +")
	for try := 0; ; try++ {
		err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(enable), 0)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EBUSY) || try == 3 {
			return t, fmt.Errorf("enabling %s for the children of %s: %w", strings.Join(ctls, ", "), dir, err)
		}
		// Processes in dir: move them to a leaf of their own, if dir is ours to reorganise.
		procs := cgroupProcs(dir)
		alone := len(procs) == 1 && procs[0] == os.Getpid()
		if !nsRoot && !alone && !delegated(dir) {
			return t, fmt.Errorf("%s holds other processes (%d) and is not delegated, so no controller can be enabled below it; run labmate in a cgroup of its own, e.g. `systemd-run --user --scope -p Delegate=yes labmate …`", dir, len(procs))
		}
		leaf := filepath.Join(dir, mainDir)
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return t, fmt.Errorf("creating %s: %w", leaf, err)
		}
		for _, pid := range procs {
			// A process may exit meanwhile; the retry sees what is left.
			_ = os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
		}
	}
	p := filepath.Join(dir, cgroupDir)
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return t, fmt.Errorf("creating %s: %w", p, err)
	}
	if err := os.WriteFile(filepath.Join(p, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return t, fmt.Errorf("enabling %s in %s: %w", strings.Join(ctls, ", "), p, err)
	}
	if err := prepareParent(p, 2, ctls); err != nil {
		return t, err
	}
	t.parents = []cgParent{{p, ctls}}
	t.markHas(ctls)
	return t, nil
}

func (t *cgroupTree) markHas(ctls []string) {
	for _, c := range ctls {
		t.has[c] = true
	}
	t.has[ctlAcct] = true // cpu.stat is in every v2 cgroup
}

// delegated reports whether systemd delegated dir (Delegate=yes).
func delegated(dir string) bool {
	var b [8]byte
	for _, name := range []string{"trusted.delegate", "user.delegate"} {
		if n, err := syscall.Getxattr(dir, name, b[:]); err == nil && string(b[:n]) == "1" {
			return true
		}
	}
	return false
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// staleAfter is how old what a dead labmate process left (an empty cgroup, an /etc copy) must be
// before another removes it: a durable job that process launched may not have joined its
// cgroup or started its sandbox yet when the process ends.
const staleAfter = 2 * time.Minute

// stale says whether e was last changed more than staleAfter ago.
func stale(e fs.DirEntry) bool {
	fi, err := e.Info()
	return err == nil && time.Since(fi.ModTime()) > staleAfter
}

// prepareParent creates dir if need be, proves that a child with every limit of ctls can be
// made and removed in it, and removes the empty children of dead labmate processes.
func prepareParent(dir string, version int, ctls []string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	p := &cgroupTree{version: version, parents: []cgParent{{dir, ctls}}}
	probe, err := p.create(Policy{MemoryBytes: 64 << 20, MaxProcs: 1, CPUs: 1})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot make and limit a cgroup in %s: %w", dir, err)
	}
	if err := syscall.Access(filepath.Join(probe.dirs[0], "cgroup.procs"), 2); err != nil {
		probe.remove()
		return fmt.Errorf("%s/cgroup.procs is not writable: %w", probe.dirs[0], err)
	}
	if err := probe.remove(); err != nil {
		return fmt.Errorf("removing the probe cgroup: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		owner, _, _ := strings.Cut(e.Name(), "-")
		if pid, err := strconv.Atoi(owner); e.IsDir() && err == nil && pid != os.Getpid() && stale(e) {
			if _, ok := procfs.ReadStat(pid); !ok {
				_ = os.Remove(filepath.Join(dir, e.Name())) // fails harmlessly if not empty
			}
		}
	}
	return nil
}

// create makes the cgroup of one command with p's limits (p resolved: zero fields are defaults).
func (t *cgroupTree) create(p Policy) (*cgroup, error) {
	c := &cgroup{version: t.version, by: map[string]string{}}
	name := fmt.Sprintf("%d-%d", os.Getpid(), cgroupSeq.Add(1))
	for _, par := range t.parents {
		dir := filepath.Join(par.dir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			c.remove()
			return nil, fmt.Errorf("sandbox: creating cgroup: %w", err)
		}
		c.dirs = append(c.dirs, dir)
		for _, ctl := range par.controllers {
			c.by[ctl] = dir
			if err := limit(t.version, dir, ctl, p); err != nil {
				c.remove()
				return nil, fmt.Errorf("sandbox: limiting cgroup %s: %w", dir, err)
			}
		}
	}
	if t.version == 2 && len(c.dirs) > 0 {
		c.by[ctlAcct] = c.dirs[0]
	}
	return c, nil
}

// limit writes the limit of controller ctl into cgroup dir.
func limit(version int, dir, ctl string, p Policy) error {
	type setting struct{ file, value string }
	var s []setting
	optional := map[string]bool{}
	switch {
	case ctl == ctlMemory && p.MemoryBytes > 0 && version == 1:
		m := strconv.FormatInt(p.MemoryBytes, 10)
		// memsw bounds memory and swap together; it must not be below the memory limit.
		s = []setting{{"memory.limit_in_bytes", m}, {"memory.memsw.limit_in_bytes", m}}
		optional["memory.memsw.limit_in_bytes"] = true // absent without swap accounting
	case ctl == ctlMemory && p.MemoryBytes > 0:
		s = []setting{{"memory.max", strconv.FormatInt(p.MemoryBytes, 10)}, {"memory.swap.max", "0"}}
		optional["memory.swap.max"] = true
	case ctl == ctlPids && p.MaxProcs > 0:
		s = []setting{{"pids.max", strconv.Itoa(p.MaxProcs)}}
	// A cgroup competes for the CPU as one task of the default weight: give the sandbox the
	// weight of as many tasks as it may use cores, so that under contention it is not slower
	// than the same processes outside a cgroup would be.
	case ctl == ctlCPU && p.CPUs > 0 && version == 1:
		s = []setting{{"cpu.cfs_period_us", strconv.Itoa(cfsPeriod)}, {"cpu.cfs_quota_us", strconv.Itoa(max(1000, int(p.CPUs*cfsPeriod)))},
			{"cpu.shares", strconv.Itoa(1024 * int(math.Ceil(p.CPUs)))}}
	case ctl == ctlCPU && p.CPUs > 0:
		s = []setting{{"cpu.max", fmt.Sprintf("%d %d", max(1000, int(p.CPUs*cfsPeriod)), cfsPeriod)},
			{"cpu.weight", strconv.Itoa(min(10000, 100*int(math.Ceil(p.CPUs))))}}
	}
	for _, x := range s {
		f := filepath.Join(dir, x.file)
		if optional[x.file] {
			if _, err := os.Stat(f); err != nil {
				continue
			}
		}
		if err := os.WriteFile(f, []byte(x.value), 0); err != nil {
			return err
		}
	}
	return nil
}

// procsFiles are the cgroup.procs files a process writes "0" to in order to join c.
func (c *cgroup) procsFiles() []string {
	var out []string
	for _, d := range c.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// freeze forbids new processes in c, so that a fork bomb cannot outrun the killing.
// pause stops every process of the cgroup with SIGSTOP, going over the list again while new ones
// appear, and returns what resumes them (SIGCONT to every process then in the cgroup: one that
// has left it has ended, its pid maybe reused).
func (c *cgroup) pause() (resume func()) {
	done := map[int]bool{}
	for range 8 {
		fresh := false
		for _, pid := range c.procs() {
			if !done[pid] {
				done[pid], fresh = true, true
				_ = syscall.Kill(pid, syscall.SIGSTOP)
			}
		}
		if !fresh {
			break
		}
	}
	return func() {
		for _, pid := range c.procs() {
			if done[pid] {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}
	}
}

func (c *cgroup) freeze() {
	if d := c.by[ctlPids]; d != "" {
		_ = os.WriteFile(filepath.Join(d, "pids.max"), []byte("0"), 0)
	}
	if c.version == 2 && len(c.dirs) > 0 {
		_ = os.WriteFile(filepath.Join(c.dirs[0], "cgroup.kill"), []byte("1"), 0) // kernel ≥ 5.14
	}
}

// procs lists the processes in c but labmate itself, which is there while the launcher
// thread forks a command in cgroup v1: never paused, frozen or killed as one of c's.
func (c *cgroup) procs() []int {
	if len(c.dirs) == 0 {
		return nil
	}
	return slices.DeleteFunc(cgroupProcs(c.dirs[0]), func(pid int) bool { return pid == os.Getpid() })
}

// remove removes c's directories; those already gone are fine.
func (c *cgroup) remove() error {
	var errs []error
	for _, d := range c.dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// oomKills is how many processes the kernel's OOM killer ended in c; ok is false when c has
// no memory controller or the kernel does not count them.
func (c *cgroup) oomKills() (n int64, ok bool) {
	d := c.by[ctlMemory]
	if d == "" {
		return 0, false
	}
	file := "memory.events"
	if c.version == 1 {
		file = "memory.oom_control"
	}
	return readKey(filepath.Join(d, file), "oom_kill")
}

// cpuTime is the CPU time c's processes have used, in a unit of its own (ns in v1, µs in v2);
// ok is false when it is not counted.
func (c *cgroup) cpuTime() (int64, bool) {
	d := c.by[ctlAcct]
	switch {
	case d == "":
		return 0, false
	case c.version == 1:
		b, err := os.ReadFile(filepath.Join(d, "cpuacct.usage"))
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	default:
		return readKey(filepath.Join(d, "cpu.stat"), "usage_usec")
	}
}

// readKey reads the value of key in a flat-keyed cgroup file ("key value" lines).
func readKey(file, key string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func readFields(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// cgroupProcs lists the processes in cgroup dir.
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgMount is a mounted cgroup hierarchy.
type cgMount struct {
	point, root string   // where it is mounted, and the cgroup path mounted there
	controllers []string // v1: those of the sandbox's controllers it has; nil for v2
	v2          bool
}

type cgMounts []cgMount

func (ms cgMounts) v2() (cgMount, bool) {
	for _, m := range ms {
		if m.v2 {
			return m, true
		}
	}
	return cgMount{}, false
}

func (ms cgMounts) v1(controller string) (cgMount, bool) {
	for _, m := range ms {
		if !m.v2 && slices.Contains(m.controllers, controller) {
			return m, true
		}
	}
	return cgMount{}, false
}

// cgroupMounts lists the cgroup hierarchies in /proc/self/mountinfo.
func cgroupMounts() (cgMounts, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms cgMounts
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional…] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		switch b[0] {
		case "cgroup2":
			ms = append(ms, cgMount{point: a[4], root: a[3], v2: true})
		case "cgroup":
			var ctls []string
			for _, o := range strings.Split(b[2], ",") {
				switch o {
				case ctlMemory, ctlPids, ctlCPU, ctlAcct:
					ctls = append(ctls, o)
				}
			}
			if len(ctls) > 0 {
				ms = append(ms, cgMount{point: a[4], root: a[3], controllers: ctls})
			}
		}
	}
	return ms, sc.Err()
}

// ownCgroups maps each hierarchy's controllers field of /proc/self/cgroup ("memory",
// "cpu,cpuacct"; "" for v2) to this process's cgroup path in it.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 {
			m[parts[1]] = parts[2]
		}
	}
	return m, nil
}

// ownPath returns this process's cgroup in the v1 hierarchy that has controller.
func ownPath(own map[string]string, controller string) (string, bool) {
	for field, path := range own {
		if slices.Contains(strings.Split(field, ","), controller) {
			return path, true
		}
	}
	return "", false
}

// dirty is how many bytes of file pages c's processes have dirtied and not yet written back
// (dirty and under writeback): a lower bound, readable at once, of what they have just written.
// ok is false without a memory controller.
// kmem is the kernel memory the cgroup's processes hold: memory.kmem.usage_in_bytes in v1
// (where kernel memory is accounted), the slab in memory.stat in v2.
func (c *cgroup) kmem() (int64, bool) {
	d := c.by[ctlMemory]
	if d == "" {
		return 0, false
	}
	if c.version == 1 {
		b, err := os.ReadFile(filepath.Join(d, "memory.kmem.usage_in_bytes"))
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	}
	b, err := os.ReadFile(filepath.Join(d, "memory.stat"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "slab "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func (c *cgroup) dirty() (int64, bool) {
	d := c.by[ctlMemory]
	if d == "" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(d, "memory.stat"))
	if err != nil {
		return 0, false
	}
	keys := map[string]bool{"dirty": true, "writeback": true} // v1
	if c.version == 2 {
		keys = map[string]bool{"file_dirty": true, "file_writeback": true}
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		if keys[k] {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n, true
}
