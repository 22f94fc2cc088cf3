package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// PrivateDirs are the host paths a sandbox should never show (Policy.Hide), even inside a
// workspace that contains them (code run in the home directory): labmate's data and
// configuration, and the usual places of the user's credentials.
func PrivateDirs() []string {
	var out []string
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	for _, xdg := range []struct{ env, def string }{{"XDG_DATA_HOME", ".local/share"}, {"XDG_CONFIG_HOME", ".config"}} {
		if d := os.Getenv(xdg.env); d != "" {
			out = append(out, filepath.Join(d, "labmate"))
		} else if home != "" {
			out = append(out, filepath.Join(home, xdg.def, "labmate"))
		}
	}
	if home != "" {
		for _, p := range []string{".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".pgpass", ".git-credentials",
			".password-store", ".config/gcloud", ".config/gh"} {
			out = append(out, filepath.Join(home, p))
		}
	}
	return out
}

// CheckDisk says what is wrong with a workspace quota of n bytes: too small to be meant, or
// larger than any filesystem here.
func CheckDisk(n int64) error {
	const minDisk = 64 << 20
	if n < minDisk {
		return fmt.Errorf("a workspace quota of %s is below the minimum of %s", FormatSize(n), FormatSize(minDisk))
	}
	var biggest int64
	for _, dir := range []string{".", "/"} {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			biggest = max(biggest, int64(st.Blocks)*st.Bsize)
		}
	}
	if biggest > 0 && n > biggest {
		return fmt.Errorf("a workspace quota of %s is more than the %s filesystem it would live on", FormatSize(n), FormatSize(biggest))
	}
	return nil
}
