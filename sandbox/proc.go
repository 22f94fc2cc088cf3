package sandbox

import "github.com/labmate/labmate/internal/procfs"

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
