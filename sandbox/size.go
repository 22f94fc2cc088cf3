package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// ParseSize reads a size in bytes: a number with an optional unit K, M, G or T, each a power
// of 1024 and optionally followed by "i" and/or "B" ("512M", "2G", "4GiB", "1.5G", "10GB"),
// or a plain number of bytes. Case does not matter.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size (want e.g. 512M, 4G or 4GiB)")
	}
	u := strings.TrimSuffix(strings.ToUpper(t), "B")
	binary := strings.HasSuffix(u, "I") // "GiB"
	u = strings.TrimSuffix(u, "I")
	shift := 0
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			u = u[:n-1]
		}
	}
	if binary && shift == 0 {
		return 0, fmt.Errorf("size %q: unknown unit (want K, M, G or T, e.g. 512M or 4GiB)", s)
	}
	u = strings.TrimSpace(u)
	v, err := strconv.ParseFloat(u, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q is not a number with an optional unit K, M, G or T (e.g. 512M, 4G, 4GiB)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	b := v * float64(int64(1)<<shift)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(b), nil
}

// FormatSize writes n bytes the way the sandbox reports sizes: "4.0 GiB", "512 MiB", "12 KiB", "100 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(n)/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// HostMemory is the machine's RAM (MemTotal in /proc/meminfo), in bytes.
func HostMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/meminfo has no MemTotal")
}
