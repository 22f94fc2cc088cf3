package engine

import (
	"os"
	"strconv"
	"strings"
)

// descendants lists every process below pid (children first found via /proc/PID/task/*/children).
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

var pageSize = int64(os.Getpagesize())

// usage sums CPU seconds and resident bytes over pid and its descendants.
func usage(pid int) (cpu float64, rss int64) {
	for _, p := range append([]int{pid}, descendants(pid)...) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 22 {
			continue
		}
		// f[0] is field 3 (state): utime=14, stime=15, rss=24 (1-based).
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		pages, _ := strconv.ParseInt(f[21], 10, 64)
		cpu += (ut + st) / clockTicks
		rss += pages * pageSize
	}
	return cpu, rss
}

// clockTicks is USER_HZ, which is 100 on every Linux architecture Go supports.
const clockTicks = 100
