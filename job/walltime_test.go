package job

import (
	"strings"
	"testing"
	"time"
)

func TestParseWallTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"1:30:00", 90 * time.Minute},
		{"90", 90 * time.Minute},
		{"5:30", 5*time.Minute + 30*time.Second},
		{"2-12", 60 * time.Hour},
		{"1-00:00:01", 24*time.Hour + time.Second},
		{"1-02:03", 26*time.Hour + 3*time.Minute},
		{"90m", 90 * time.Minute},
		{"2h", 2 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{" 45s ", 45 * time.Second},
	} {
		got, err := ParseWallTime(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseWallTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"-5m", "negative"},
		{"0", "zero"},
		{"0s", "zero"},
		{"", "empty"},
		{"abc", "want [D-]HH:MM:SS"},
		{"1:2:3:4", "want [D-]HH:MM:SS"},
		{"5x", "want [D-]HH:MM:SS"},
		{"9000h", "more than a year"},
	} {
		if _, err := ParseWallTime(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseWallTime(%q): %v, want an error with %q", c.in, err, c.want)
		}
	}
	if got := FormatWallTime(26*time.Hour + 3*time.Minute + 500*time.Millisecond); got != "1-02:03:01" {
		t.Errorf("FormatWallTime = %q", got)
	}
}
