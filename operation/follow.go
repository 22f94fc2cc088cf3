package operation

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/labmate/labmate/protocol"
)

// Following files: a run that writes its progress to a file instead of stdout (`pw.x < in >
// scf.out`, LAMMPS' log.lammps under `-screen none`, a Python job appending to run.log) is
// not silent, and its faults are in that file. The follower reads what the named workspace
// files gain while the cell runs and turns each new line into an ObsFile observation (and
// its `name = value` pairs into telemetry), which perception judges like printed output.
//
// It polls: Exec calls poll between the kernel's observations (at least every half second,
// when the kernel sends its resource sample) and once more after the cell ended, so what was
// written before the end is judged before the outcome. Files are opened through an os.Root
// on the workspace, so a path — or a symlink a cell planted — cannot reach outside it; only
// regular files are read (a FIFO would block, a device has no end).

const (
	pollEvery     = 250 * time.Millisecond
	maxFollowed   = 16
	maxReadOnce   = 256 << 10 // bytes read from one file per poll
	maxFileLine   = 4 << 10   // longer lines are cut
	maxFollowText = 8 << 20   // line bytes reported per operation; then growth only
)

// follower tails the followed files of one operation. It is used from one goroutine.
type follower struct {
	root    *os.Root
	files   []*followed
	left    int64
	buf     []byte
	last    time.Time
	emitted int // lines handed over so far
}

type followed struct {
	path string
	off  int64
	ino  uint64
	part []byte
}

// newFollower starts following paths (relative to workspace) from their current ends; nil
// when there is nothing to follow or the workspace cannot be opened.
func newFollower(workspace string, paths []string) *follower {
	if len(paths) == 0 || workspace == "" {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil
	}
	f := &follower{root: root, left: maxFollowText}
	for _, p := range paths {
		ff := &followed{path: p}
		if fh, info, err := OpenWorkspaceFile(f.root, p); err == nil {
			ff.off, ff.ino = info.Size(), inode(info)
			fh.Close()
		}
		f.files = append(f.files, ff)
	}
	return f
}

func (f *follower) close() {
	if f != nil {
		f.root.Close()
	}
}

func inode(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// due reports whether a poll is due at now.
func (f *follower) due(now time.Time) bool { return f != nil && now.Sub(f.last) >= pollEvery }

// poll reads what each file gained and hands one observation per new line to observe; a
// file that grew without completing a line gives one observation with an empty line (it is
// active). With final, a last incomplete line is handed over too.
func (f *follower) poll(now time.Time, final bool, observe func(*protocol.Observation)) {
	if f == nil {
		return
	}
	f.last = now
	for _, ff := range f.files {
		fh, info, err := OpenWorkspaceFile(f.root, ff.path)
		if err != nil {
			continue
		}
		if ino := inode(info); info.Size() < ff.off || ino != ff.ino { // truncated or replaced
			ff.off, ff.ino, ff.part = 0, ino, ff.part[:0]
		}
		grew, before := false, f.emitted
		for ff.off < info.Size() {
			n := min(info.Size()-ff.off, maxReadOnce)
			if int64(cap(f.buf)) < n {
				f.buf = make([]byte, n)
			}
			got, err := fh.ReadAt(f.buf[:n], ff.off)
			if got == 0 {
				break
			}
			ff.off += int64(got)
			grew = true
			f.lines(now, ff, f.buf[:got], observe)
			if err != nil && !errors.Is(err, io.EOF) || !final {
				break // one chunk per poll while the cell runs
			}
		}
		fh.Close()
		if final && len(ff.part) > 0 {
			f.emit(now, ff, ff.part, observe)
			ff.part = ff.part[:0]
		} else if grew && f.emitted == before {
			observe(&protocol.Observation{Kind: protocol.ObsFile, Time: now, Path: ff.path})
		}
	}
}

// lines splits b (appended to what was left of the last line) into lines.
func (f *follower) lines(now time.Time, ff *followed, b []byte, observe func(*protocol.Observation)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			ff.part = append(ff.part, b...)
			if len(ff.part) >= maxFileLine {
				f.emit(now, ff, ff.part, observe)
				ff.part = ff.part[:0]
			}
			return
		}
		line := b[:i]
		if len(ff.part) > 0 {
			ff.part = append(ff.part, line...)
			line = ff.part
		}
		f.emit(now, ff, line, observe)
		ff.part = ff.part[:0]
		b = b[i+1:]
	}
}

func (f *follower) emit(now time.Time, ff *followed, line []byte, observe func(*protocol.Observation)) {
	f.emitted++
	o := &protocol.Observation{Kind: protocol.ObsFile, Time: now, Path: ff.path}
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > maxFileLine {
		line = line[:maxFileLine]
	}
	if f.left > 0 {
		f.left -= int64(len(line)) + 1
		o.Line = strings.ToValidUTF8(string(line), "\uFFFD")
	}
	observe(o)
}

// checkFollow validates the files a request names: relative paths inside the workspace.
func checkFollow(paths []string) error {
	if len(paths) > maxFollowed {
		return errors.New("too many files: at most 16")
	}
	for _, p := range paths {
		if p == "" || !filepath.IsLocal(p) {
			return errors.New(quote(p) + " is not a relative path inside the workspace")
		}
	}
	return nil
}

func quote(s string) string { return "\"" + strings.ReplaceAll(s, "\"", "\\\"") + "\"" }

// withTargets is a copy of follow with the files code visibly writes its progress to
// (FollowTargets) added, up to maxFollowed files in all.
func withTargets(follow []string, kernel, code string) []string {
	follow = slices.Clone(follow)
	for _, f := range FollowTargets(kernel, code) {
		if !slices.Contains(follow, f) && len(follow) < maxFollowed {
			follow = append(follow, f)
		}
	}
	return follow
}

// FollowTargets are the files a cell visibly writes its progress to, which Check follows
// without being asked: in a shell cell, the targets of output redirections (`pw.x < in >
// scf.out`, `lmp -in in.cu > md.log 2>&1`, `python3 sim.py >> run.log`) and of tee, except
// for commands that only write input files (cat, echo, printf, sed) and /dev; and LAMMPS' log
// (-log FILE, else log.lammps) when its screen output is turned off (-screen none). Heredoc
// bodies are input, not commands.
func FollowTargets(kernel, code string) []string {
	if kernel != "shell" {
		return nil
	}
	var out []string
	add := func(p string) {
		p = strings.Trim(p, "'\"")
		if p != "" && !strings.ContainsAny(p, "$`*?&") && !strings.HasPrefix(p, "/") && filepath.IsLocal(p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	heredoc := ""
	for line := range strings.Lines(code) {
		line = strings.TrimRight(line, "\r\n")
		if heredoc != "" {
			if strings.TrimSpace(line) == heredoc {
				heredoc = ""
			}
			continue
		}
		if i := strings.Index(line, "<<"); i >= 0 {
			tag := strings.TrimLeft(line[i+2:], "-~ \t")
			if j := strings.IndexAny(tag, " \t;|&>"); j >= 0 {
				tag = tag[:j]
			}
			heredoc = strings.Trim(tag, "'\"")
		}
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		for _, seg := range splitCommands(line) {
			w := strings.Fields(seg)
			if len(w) == 0 {
				continue
			}
			switch filepath.Base(w[0]) {
			case "cat", "echo", "printf", "sed", "envsubst", "true", ":":
				continue
			}
			lmp, screenOff, logFile := false, false, ""
			for i := 0; i < len(w); i++ {
				tok := w[i]
				switch {
				case tok == "tee" && i+1 < len(w):
					for j := i + 1; j < len(w) && !strings.HasPrefix(w[j], ">"); j++ {
						if !strings.HasPrefix(w[j], "-") {
							add(w[j])
						}
					}
				case isLAMMPSWord(tok):
					lmp = true
				case lmp && (tok == "-screen" || tok == "-sc") && i+1 < len(w):
					screenOff = w[i+1] == "none"
				case lmp && (tok == "-log" || tok == "-l") && i+1 < len(w):
					logFile = w[i+1]
				}
				if target, ok := redirectTarget(w, i); ok {
					add(target)
				}
			}
			if lmp && screenOff {
				switch logFile {
				case "none":
				case "":
					add("log.lammps")
				default:
					add(logFile)
				}
			}
		}
	}
	return out
}

// splitCommands cuts a shell line at ; && || and | (not inside quotes — roughly).
func splitCommands(line string) []string {
	var out []string
	start, quote := 0, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '|' || (c == '&' && i+1 < len(line) && line[i+1] == '&'):
			if c == '|' && i > 0 && line[i-1] == '>' { // >| is a redirection
				continue
			}
			out = append(out, line[start:i])
			start = i + 1
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
				start = i + 1
			}
		}
	}
	return append(out, line[start:])
}

// redirectTarget reads an output redirection at w[i]: `> f`, `>f`, `>> f`, `2> f`, `&> f`,
// `1>>f`; not `>&2` or `2>&1`.
func redirectTarget(w []string, i int) (string, bool) {
	tok := strings.TrimLeft(w[i], "012&")
	if !strings.HasPrefix(tok, ">") {
		return "", false
	}
	tok = strings.TrimLeft(tok, ">|")
	if strings.HasPrefix(tok, "&") {
		return "", false
	}
	if tok == "" {
		if i+1 >= len(w) {
			return "", false
		}
		tok = w[i+1]
	}
	if strings.HasPrefix(tok, "/dev/") || tok == "/dev/null" {
		return "", false
	}
	return tok, true
}

func isLAMMPSWord(w string) bool {
	switch filepath.Base(w) {
	case "lmp", "lmp_serial", "lmp_mpi", "lmp_stable", "lmp_openmpi", "lmp_mpich":
		return true
	}
	return false
}
