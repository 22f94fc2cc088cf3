package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The identity and home of code in ModeBubblewrap. The uid is unprivileged inside the
// sandbox's user namespace, whatever the caller's; /etc/passwd and /etc/group inside are
// generated and name only it and nobody.
const (
	UID  = 1000
	GID  = 1000
	User = "labmate"
	// Home is $HOME inside ModeBubblewrap: a private directory on the sandbox's /tmp, so that
	// what tools keep in ~/.cache or ~/.config counts against the /tmp size and the memory
	// budget and never lands in the workspace. It is empty at every start.
	Home = "/tmp/home"
)

// hostname is the sandbox's host name (its own UTS namespace).
const hostname = "labmate"

// shmBytes is the size of the sandbox's /dev/shm (as Docker's default).
const shmBytes = 64 << 20

// etcEntries are the host's /etc entries bound read-only when they exist: what the dynamic
// loader, glibc, fontconfig, TLS, Octave, Python, matplotlib and OpenMPI read. Nothing secret
// (no shadow, ssl/private, ssh, machine-id) and no passwd or group: those are generated.
var etcEntries = []string{
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"localtime", "timezone", "locale.alias", "mime.types", "magic", "magic.mime",
	"fonts", "ssl/certs", "ssl/openssl.cnf", "gnutls", "ca-certificates.conf",
	"gai.conf", "host.conf", "services", "protocols", "networks",
	"os-release", "debian_version", "lsb-release", "shells", "inputrc", "terminfo",
	"octaverc", "octave", "matplotlibrc", "openmpi", "R", "texmf", "ghostscript",
	"papersize", "libpaper.d", "xml", "sgml",
}

// etcGlobs are patterns of more /etc entries: Python's per-version config (sitecustomize).
var etcGlobs = []string{"python3*", "ImageMagick-*"}

// networkEtc are bound only with Policy.Network: the host's resolver configuration.
var networkEtc = []string{"resolv.conf"}

// procReadOnly are the parts of the sandbox's /proc that are replaced by the host's, read-only:
// as root, the code is still uid 0 on the host, and writing /proc/sys (kernel.core_pattern,
// binfmt_misc), /proc/sysrq-trigger or /proc/acpi would reach the host kernel. procMasked are
// hidden behind /dev/null (Docker's list; /proc/kcore needs CAP_SYS_RAWIO, which is gone).
var (
	procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "asound"}
	procMasked   = []string{"keys", "key-users", "latency_stats", "timer_list", "timer_stats", "sched_debug"}
)

// sysEntries is all of /sys there is inside: the CPU and NUMA topology that glibc, OpenBLAS and
// hwloc (OpenMPI) read. The rest, including the cgroup filesystem, is absent.
var sysEntries = []string{"/sys/devices/system/cpu", "/sys/devices/system/node"}

// genFile is a file generated for the sandbox's /etc.
type genFile struct {
	name string
	data string
}

// bwrapFeatures are the options of the installed bwrap that the sandbox uses when present.
type bwrapFeatures struct {
	size, disableUserns bool
}

// hostLayout returns the bwrap options that build the sandbox's root from the host, but for
// /etc (see stagedEtc): /usr, the merged-/usr links, the font cache, and the CPU topology.
func hostLayout() []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	for _, name := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + name
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	made := map[string]bool{}
	// dirs creates the missing parents of p with the usual mode (bwrap's own are 0700).
	dirs := func(p string) {
		var missing []string
		for d := filepath.Dir(p); !made[d] && d != "/"; d = filepath.Dir(d) {
			missing = append(missing, d)
			made[d] = true
		}
		for i := len(missing) - 1; i >= 0; i-- {
			a = append(a, "--perms", "0755", "--dir", missing[i])
		}
	}
	dirs("/var/tmp")
	a = append(a, "--symlink", "../tmp", "/var/tmp")
	if _, err := os.Stat("/var/cache/fontconfig"); err == nil {
		// The system font cache: without it fontconfig rescans every font at each start.
		dirs("/var/cache/fontconfig")
		a = append(a, "--ro-bind", "/var/cache/fontconfig", "/var/cache/fontconfig")
	}
	for _, p := range sysEntries {
		if _, err := os.Stat(p); err == nil {
			dirs(p)
			a = append(a, "--ro-bind", p, p)
		}
	}
	return a
}

// procLayout mounts a fresh /proc with the host-reaching parts read-only or masked.
func procLayout() []string {
	a := []string{"--proc", "/proc"}
	for _, n := range procReadOnly {
		p := "/proc/" + n
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, n := range procMasked {
		p := "/proc/" + n
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	return a
}

// generatedFiles are /etc/passwd, /etc/group, /etc/hosts and /etc/nsswitch.conf inside: the
// sandbox's user (getpwuid, whoami and Octave need one) and nobody, the overflow id that
// files of other host users show. With network the host's /etc/hosts is kept, plus the
// sandbox's name.
func generatedFiles(network bool) []genFile {
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	if network {
		if b, err := os.ReadFile("/etc/hosts"); err == nil {
			hosts = string(b)
			if !strings.HasSuffix(hosts, "\n") {
				hosts += "\n"
			}
		}
	}
	hosts += "127.0.1.1\t" + hostname + "\n"
	return []genFile{
		{"passwd", fmt.Sprintf("%s:x:%d:%d:%s:%s:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", User, UID, GID, User, Home)},
		{"group", fmt.Sprintf("%s:x:%d:\nnogroup:x:65534:\n", User, GID)},
		{"hosts", hosts},
		{"nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n"},
	}
}

// mount is one bind or mask of a command's own paths.
type mount struct {
	path string
	src  string // where the host's side finds path; "" means path
	kind int    // mountWritable, mountReadOnly, mountHidden
	dir  bool
}

// Kinds of mounts; at equal depth they are made in this order.
const (
	mountWritable = iota
	mountReadOnly
	mountHidden
)

// bwrapArgs returns bwrap's options, ending with "--": the fixed layout, the workspace (with
// its dot-entries read-only), the read-only paths and the hidden ones. The mounts that come
// after --tmpfs /tmp may lie under /tmp; they are sorted so that a parent is mounted before
// what lies inside it.
func (s *Sandbox) bwrapArgs(etc, workspace string, env []string, mounts []mount) []string {
	// The command's environment exists only inside: bwrap itself, and the wrapper before it,
	// run in the host's (hostPath).
	a := []string{"--clearenv"}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", name, value)
	}
	if s.seccomp != "" {
		a = append(a, "--seccomp", strconv.Itoa(seccompFd))
	}
	a = append(a, "--unshare-all")
	if s.policy.Network {
		a = append(a, "--share-net")
	}
	a = append(a, "--unshare-user")
	if s.features.disableUserns {
		// No user namespaces inside: their kernel code is a large attack surface.
		a = append(a, "--disable-userns")
	}
	a = append(a,
		"--uid", strconv.Itoa(UID), "--gid", strconv.Itoa(GID), "--hostname", hostname,
		// As root bwrap keeps every capability inside its user namespace: drop them all.
		"--cap-drop", "ALL",
		"--die-with-parent",
		// No controlling terminal, so no TIOCSTI injection into the caller's terminal. Signals
		// are unaffected: Target signals the interpreter itself, Kill the bwrap processes.
		"--new-session",
	)
	a = append(a, s.host...)
	a = append(a, "--ro-bind", etc, "/etc")
	a = append(a, s.proc...)
	a = append(a, "--dev", "/dev")
	if s.features.size {
		a = append(a, "--size", strconv.Itoa(shmBytes))
	}
	a = append(a, "--tmpfs", "/dev/shm", "--remount-ro", "/dev")
	a = append(a, "--perms", "1777")
	if s.features.size {
		a = append(a, "--size", strconv.FormatInt(s.policy.TmpBytes, 10))
	}
	a = append(a, "--tmpfs", "/tmp", "--perms", "0700", "--dir", Home)
	slices.SortStableFunc(mounts, func(x, y mount) int {
		if d := strings.Count(x.path, "/") - strings.Count(y.path, "/"); d != 0 {
			return d
		}
		return x.kind - y.kind
	})
	for _, m := range mounts {
		src := m.src
		if src == "" {
			src = m.path
		}
		switch {
		case m.kind == mountWritable:
			a = append(a, "--bind", src, m.path)
		case m.kind == mountReadOnly:
			a = append(a, "--ro-bind", src, m.path)
		case m.dir:
			a = append(a, "--tmpfs", m.path, "--remount-ro", m.path)
		default:
			a = append(a, "--ro-bind", "/dev/null", m.path)
		}
	}
	// bwrap builds the root on a tmpfs, which would stay writable (and an unbounded RAM sink).
	a = append(a, "--remount-ro", "/")
	if workspace != "" {
		a = append(a, "--chdir", workspace)
	}
	return append(a, "--")
}

// dotEntries lists the top-level entries of workspace whose names start with a dot and that
// are files or directories (a symlink cannot be mounted over).
func dotEntries(workspace string) []string {
	entries, err := os.ReadDir(workspace)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Type()&os.ModeSymlink == 0 && (e.IsDir() || e.Type().IsRegular()) {
			out = append(out, filepath.Join(workspace, e.Name()))
		}
	}
	return out
}

// within reports whether p lies strictly inside dir.
func within(p, dir string) bool {
	return dir == "/" && p != "/" || strings.HasPrefix(p, dir+"/")
}
