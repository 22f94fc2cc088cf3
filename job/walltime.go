package job

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxWallTime bounds what ParseWallTime accepts: a year is already more than any cluster
// grants; a larger value is a typo.
const MaxWallTime = 366 * 24 * time.Hour

// ParseWallTime reads a wall time as a user writes it: Slurm's forms — MM, MM:SS, HH:MM:SS,
// D-HH, D-HH:MM, D-HH:MM:SS (a bare number is minutes, as sbatch --time reads it) — or a Go
// duration (90m, 2h, 1h30m, 45s). It refuses a negative, zero or absurd (over a year) value,
// saying which.
func ParseWallTime(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty wall time (want e.g. 1:30:00, 90m or 2h)")
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("wall time %q is negative", s)
	}
	var d time.Duration
	if strings.ContainsAny(t, "hmsuµn") && !strings.ContainsAny(t, ":") {
		var err error
		if d, err = time.ParseDuration(t); err != nil {
			return 0, fmt.Errorf("wall time %q: want [D-]HH:MM:SS, MM, or a duration such as 90m or 2h", s)
		}
	} else {
		var err error
		if d, err = parseSlurmTime(t); err != nil {
			return 0, fmt.Errorf("wall time %q: %w", s, err)
		}
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("wall time %q is zero: give how long the job may run, e.g. 1:30:00 or 2h", s)
	case d > MaxWallTime:
		return 0, fmt.Errorf("wall time %q is %s, more than a year: a typo?", s, FormatWallTime(d))
	}
	return d, nil
}

// parseSlurmTime reads sbatch's --time forms.
func parseSlurmTime(t string) (time.Duration, error) {
	bad := fmt.Errorf("want [D-]HH:MM:SS, MM, or a duration such as 90m or 2h")
	num := func(p string) (int64, bool) {
		n, err := strconv.ParseInt(p, 10, 64)
		return n, err == nil && n >= 0 && n < 1e7 && p != ""
	}
	days := int64(0)
	rest := t
	if d, r, ok := strings.Cut(t, "-"); ok {
		n, ok := num(d)
		if !ok {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	vals := make([]int64, len(parts))
	for i, p := range parts {
		n, ok := num(p)
		if !ok {
			return 0, bad
		}
		vals[i] = n
	}
	var h, m, sec int64
	switch {
	case days > 0 || strings.Contains(t, "-"):
		// D-HH, D-HH:MM, D-HH:MM:SS
		switch len(vals) {
		case 1:
			h = vals[0]
		case 2:
			h, m = vals[0], vals[1]
		case 3:
			h, m, sec = vals[0], vals[1], vals[2]
		default:
			return 0, bad
		}
	default:
		// MM, MM:SS, HH:MM:SS
		switch len(vals) {
		case 1:
			m = vals[0]
		case 2:
			m, sec = vals[0], vals[1]
		case 3:
			h, m, sec = vals[0], vals[1], vals[2]
		default:
			return 0, bad
		}
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, nil
}

// FormatWallTime writes d as Slurm does, [D-]HH:MM:SS.
func FormatWallTime(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	days, secs := secs/86400, secs%86400
	s := fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs%3600/60, secs%60)
	if days > 0 {
		s = fmt.Sprintf("%d-%s", days, s)
	}
	return s
}
