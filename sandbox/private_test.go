package sandbox_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/sandbox"
)

func TestPrivateDirsAndCheckDisk(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_DATA_HOME", "/data")
	t.Setenv("XDG_CONFIG_HOME", "")
	dirs := sandbox.PrivateDirs()
	for _, want := range []string{"/data/labmate", "/home/u/.config/labmate", "/home/u/.ssh", "/home/u/.config/gh"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("PrivateDirs() = %q lacks %s", dirs, want)
		}
	}
	for n, want := range map[int64]string{1 << 20: "below the minimum", 1 << 62: "more than", 1 << 30: ""} {
		err := sandbox.CheckDisk(n)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDisk(%d) = %v, want %q", n, err, want)
		}
	}
}
