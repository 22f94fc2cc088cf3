package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/job"
)

var _ job.Sampler = (*Scheduler)(nil)

// Usage measures a running job from its cgroups: CPU time from cpuacct.usage (v1) or
// cpu.stat (v2), which count the processes that already exited too, and memory in use with
// its limit. Without a CPU counter it sums /proc over the processes the cgroup lists.
func (s *Scheduler) Usage(ctx context.Context, id job.ID) (*job.Usage, error) {
	r, err := s.readRecord(id)
	if err != nil {
		return nil, err
	}
	if r.State != job.Running || r.PID <= 0 {
		return nil, fmt.Errorf("%w: %s is %s", job.ErrNotRunning, id, r.State)
	}
	u := &job.Usage{MemoryLimit: r.Memory}
	cpu := false
	for _, d := range r.Cgroups.Dirs {
		if n, ok := readInt(filepath.Join(d, "cpuacct.usage")); ok {
			u.CPUSeconds, cpu = float64(n)/1e9, true
		} else if n, ok := cgroupKey(filepath.Join(d, "cpu.stat"), "usage_usec"); ok {
			u.CPUSeconds, cpu = float64(n)/1e6, true
		}
		if n, ok := readInt(filepath.Join(d, "memory.usage_in_bytes")); ok {
			u.RSSBytes = n
		} else if n, ok := readInt(filepath.Join(d, "memory.current")); ok {
			u.RSSBytes = n
		}
	}
	if !cpu {
		pids := []int{r.PID}
		if b, err := os.ReadFile(r.Cgroups.Procs); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if p, err := strconv.Atoi(f); err == nil {
					pids = append(pids, p)
				}
			}
		} else {
			pids = append(pids, procfs.Descendants(r.PID)...)
		}
		var rss int64
		for _, p := range pids {
			if st, ok := procfs.ReadStat(p); ok {
				u.CPUSeconds += st.CPUSeconds
				rss += st.RSSBytes
			}
		}
		if u.RSSBytes == 0 {
			u.RSSBytes = rss
		}
	}
	return u, nil
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// cgroupKey reads key's value in a flat-keyed cgroup file ("key value" lines).
func cgroupKey(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
