package sandbox

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"4294967296", 4 << 30},
		{"512M", 512 << 20},
		{"2G", 2 << 30},
		{"2g", 2 << 30},
		{"4GiB", 4 << 30},
		{"4GB", 4 << 30},
		{"1.5G", 3 << 29},
		{"10k", 10 << 10},
		{"1T", 1 << 40},
		{" 64 MiB ", 64 << 20},
		{"100B", 100},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty size"},
		{"lots", "not a number"},
		{"4X", "not a number"},
		{"4Xi", "unknown unit"},
		{"-1G", "negative"},
		{"1e30", "too large"},
		{"NaN", "not a number"},
	} {
		if _, err := ParseSize(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSize(%q) = %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{100: "100 bytes", 12 << 10: "12 KiB", 512 << 20: "512 MiB", 3 << 29: "1.5 GiB", 2 << 40: "2.0 TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q; want %q", n, got, want)
		}
	}
}
