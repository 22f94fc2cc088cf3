package sandbox

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
)

// The sandbox's /etc is a private copy of the curated host entries plus the generated files,
// bound read-only in one mount: bwrap makes each mount read-only by parsing the mount table,
// so dozens of single-entry binds cost milliseconds at every start. The copy is checked
// against the host at most every etcRecheck and remade when an entry changed (a package
// installed meanwhile) or the copy is gone (a cleaner of /tmp); sandboxes that are running keep
// the copy they started with.
const etcRecheck = 10 * time.Second

// etcPrefix names the copies in the temporary directory: labmate-etc-<pid>-<random>.
const etcPrefix = "labmate-etc-"

type etcStage struct {
	dir     string
	stamp   uint64 // a hash of the sources' names, sizes and times when dir was made
	checked time.Time
}

func (st *etcStage) dirOrEmpty() string {
	if st == nil {
		return ""
	}
	return st.dir
}

var stages = struct {
	sync.Mutex
	m map[bool]*etcStage // by Policy.Network
}{m: map[bool]*etcStage{}}

// stagedEtc returns the directory to bind as /etc for a sandbox with or without network, making
// or remaking it when needed.
func stagedEtc(network bool) (string, error) {
	stages.Lock()
	defer stages.Unlock()
	st := stages.m[network]
	if st != nil && time.Since(st.checked) < etcRecheck {
		return st.dir, nil
	}
	sources := etcSources(network)
	stamp := stampOf(sources)
	if _, err := os.Stat(filepath.Join(st.dirOrEmpty(), "passwd")); st != nil && st.stamp == stamp && err == nil {
		st.checked = time.Now()
		return st.dir, nil
	}
	if st == nil {
		removeStaleStages()
	}
	dir, err := makeStage(sources, network)
	if err != nil {
		return "", err
	}
	stages.m[network] = &etcStage{dir: dir, stamp: stamp, checked: time.Now()}
	return dir, nil
}

// etcSources are the host's /etc entries that exist: etcEntries, the globs, and with network the
// resolver's configuration.
func etcSources(network bool) []string {
	names := slices.Clone(etcEntries)
	for _, g := range etcGlobs {
		m, _ := filepath.Glob(filepath.Join("/etc", g))
		for _, p := range m {
			names = append(names, filepath.Base(p))
		}
	}
	if network {
		names = append(names, networkEtc...)
	}
	var out []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join("/etc", n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// stampOf hashes the names, sizes and modification times of everything under the sources.
func stampOf(sources []string) uint64 {
	h := fnv.New64a()
	for _, n := range sources {
		filepath.WalkDir(filepath.Join("/etc", n), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
		if fi, err := os.Stat(filepath.Join("/etc", n)); err == nil { // what a top-level link points to
			fmt.Fprintf(h, "%s -> %d %d\n", n, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return h.Sum64()
}

// makeStage copies the sources into a new private directory and writes the generated files.
func makeStage(sources []string, network bool) (string, error) {
	dir, err := os.MkdirTemp("", etcPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("sandbox: making /etc: %w", err)
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: making /etc: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	for _, n := range sources {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755); err != nil {
			return fail(err)
		}
		if err := copyTop(filepath.Join("/etc", n), filepath.Join(dir, n)); err != nil {
			return fail(err)
		}
	}
	for _, f := range generatedFiles(network) {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.data), 0o644); err != nil {
			return fail(err)
		}
	}
	if err := os.Symlink("../proc/self/mounts", filepath.Join(dir, "mtab")); err != nil {
		return fail(err)
	}
	return dir, nil
}

// copyTop copies an /etc entry. A symbolic link into /usr stays a link (it resolves inside the
// sandbox too); one that points elsewhere (resolv.conf → /run/…) is copied as what it points to.
func copyTop(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		abs := target
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(filepath.Dir(src), target)
		}
		if resolved, err := filepath.EvalSymlinks(abs); err == nil && !strings.HasPrefix(resolved, "/usr/") {
			return copyTree(resolved, dst)
		}
		return os.Symlink(target, dst)
	}
	return copyTree(src, dst)
}

// copyTree copies files, directories and symbolic links (as links) from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == src {
				return err
			}
			return nil // unreadable below the top: not copied
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.MkdirAll(to, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			return os.Symlink(target, to)
		case t.IsRegular():
			return copyFile(p, to)
		}
		return nil // sockets, devices: never in the curated /etc
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil // not readable by the caller: not for the sandbox either
		}
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeStaleStages removes the /etc copies of labmate processes that are gone.
func removeStaleStages() {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), etcPrefix+"*"))
	for _, p := range m {
		owner, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(p), etcPrefix), "-")
		if pid, err := strconv.Atoi(owner); err == nil && pid != os.Getpid() {
			if _, alive := procfs.ReadStat(pid); !alive {
				if fi, err := os.Lstat(p); err == nil && fi.IsDir() && ownedByMe(fi) && time.Since(fi.ModTime()) > staleAfter {
					os.RemoveAll(p)
				}
			}
		}
	}
}

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
