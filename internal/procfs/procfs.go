// Package procfs reads the little of Linux's /proc that the kernels and the sandbox need:
// a process's state, start time and usage, and its children.
package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stat is what labmate needs of /proc/PID/stat.
type Stat struct {
	State      byte    // R, S, D, Z, X, …
	Start      uint64  // start time in clock ticks since boot: with the pid, a process's identity
	CPUSeconds float64 // user + system time
	RSSBytes   int64   // resident set size
}

// clockTicks is USER_HZ, which is 100 on every Linux architecture Go supports.
const clockTicks = 100

var pageSize = int64(os.Getpagesize())

// ReadStat reads /proc/PID/stat; false when the process is gone.
func ReadStat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	// "pid (comm) state ppid …": comm may contain spaces and parentheses; it ends at the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 22 || f[0] == "" {
		return Stat{}, false
	}
	// f[0] is field 3 of the line: utime is field 14, stime 15, starttime 22, rss 24.
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	start, _ := strconv.ParseUint(f[19], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return Stat{State: f[0][0], Start: start, CPUSeconds: (ut + st) / clockTicks, RSSBytes: pages * pageSize}, true
}

// Children lists the children of every thread of pid, oldest first.
func Children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// Descendants lists every process below pid, breadth first.
func Descendants(pid int) []int {
	var out []int
	seen := map[int]bool{pid: true}
	queue := Children(pid)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, Children(p)...)
	}
	return out
}
