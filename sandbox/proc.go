package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/labmate/labmate/internal/procfs"
)

// procID names one process, immune to pid reuse.
type procID struct {
	pid   int
	start uint64
}

// alive reports whether the process still runs (a zombie has finished).
func (p procID) alive() bool {
	st, ok := procfs.ReadStat(p.pid)
	return ok && st.Start == p.start && st.State != 'Z' && st.State != 'X'
}

// tree returns pid and everything below it.
func tree(pid int) []procID {
	var out []procID
	for _, p := range append([]int{pid}, procfs.Descendants(pid)...) {
		if st, ok := procfs.ReadStat(p); ok {
			out = append(out, procID{p, st.Start})
		}
	}
	return out
}

// cgroupSeq numbers the cgroups this process creates.
var cgroupSeq atomic.Uint64

// pidsParent returns labmate's directory in the cgroup v1 pids hierarchy, below the cgroup this
// process is in, creating it if need be. Child cgroups are named <pid>-<n> after the process that
// made them; those of dead processes that are empty are removed here.
func pidsParent() (string, error) {
	mountpoint, root, err := pidsMount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup("pids")
	if err != nil {
		return "", err
	}
	rel, ok := strings.CutPrefix(own, root)
	if !ok {
		rel = ""
	}
	dir := filepath.Join(mountpoint, rel, "labmate")
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("sandbox: creating pids cgroup: %w", err)
	}
	// The directory may exist but belong to someone else: prove that we can make and limit a
	// cgroup.
	probe, err := newCgroup(dir, 1)
	if err != nil {
		return "", err
	}
	if err := removeCgroup(probe); err != nil {
		return "", fmt.Errorf("sandbox: pids cgroup: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("sandbox: pids cgroup: %w", err)
	}
	for _, e := range entries {
		owner, _, _ := strings.Cut(e.Name(), "-")
		if pid, err := strconv.Atoi(owner); e.IsDir() && err == nil && pid != os.Getpid() {
			if _, ok := procfs.ReadStat(pid); !ok {
				_ = os.Remove(filepath.Join(dir, e.Name())) // fails harmlessly if not empty
			}
		}
	}
	return dir, nil
}

// pidsMount finds the cgroup v1 hierarchy that has the pids controller: its mount point and the
// cgroup path mounted there.
func pidsMount() (mountpoint, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional…] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 || b[0] != "cgroup" {
			continue
		}
		for _, o := range strings.Split(b[2], ",") {
			if o == "pids" {
				return a[4], a[3], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", errors.New("sandbox: no cgroup v1 pids hierarchy is mounted")
}

// ownCgroup returns this process's cgroup path in the v1 hierarchy of controller.
func ownCgroup(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ","+controller+",") {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("sandbox: not in a %s cgroup", controller)
}

// newCgroup creates a child of parent allowing at most max processes.
func newCgroup(parent string, max int) (string, error) {
	dir := filepath.Join(parent, fmt.Sprintf("%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: creating pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("sandbox: limiting pids cgroup: %w", err)
	}
	return dir, nil
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

// removeCgroup removes cgroup dir; a cgroup that is already gone is fine.
func removeCgroup(dir string) error {
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
