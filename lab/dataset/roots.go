package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotUnderRoot: a path names a file outside every data root (or none is configured).
var ErrNotUnderRoot = errors.New("dataset: not under a data root")

// Roots are the directories whose CSV files a server's clients may name by path (labmate
// serve --data-root). A path is accepted only if the file it names, every symbolic link
// resolved, lies under one of them: an absolute path is matched against each root as
// configured and as resolved; a relative one is taken relative to each root in turn. The file
// is opened through os.Root — so that no `..`, symbolic link or rename made between the check
// and the open leads outside — without blocking (a FIFO is refused, not waited on), and must be
// a regular file within the byte limit. Whether a path outside the roots exists is never told:
// a path outside, or a link leading outside, gets the same ErrNotUnderRoot.
//
// Everything under a root can be played as a campaign, so its columns can be read through the
// campaigns' turns: point roots at datasets, never at a home or data directory.
type Roots struct {
	dirs []root
}

type root struct {
	path string // absolute, as configured
	real string // with symbolic links resolved
}

// NewRoots checks the directories (each must exist) and returns them as Roots; none: every
// path is refused.
func NewRoots(dirs []string) (*Roots, error) {
	r := &Roots{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("dataset: data root %q: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("dataset: data root %q: %w", d, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("dataset: data root %q: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("dataset: data root %q is not a directory", d)
		}
		r.dirs = append(r.dirs, root{path: abs, real: real})
	}
	return r, nil
}

// Dirs are the roots as configured (absolute).
func (r *Roots) Dirs() []string {
	out := make([]string, len(r.dirs))
	for i, d := range r.dirs {
		out[i] = d.path
	}
	return out
}

// Open reads the CSV file at path, which must be under a root (see Roots), with o.Redact set:
// errors quote nothing of the file.
func (r *Roots) Open(path string, o *Options) (*Table, error) {
	f, err := r.open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ro := Options{}
	if o != nil {
		ro = *o
	}
	ro.Redact = true
	if err := checkSize(f, path, &ro); err != nil {
		return nil, err
	}
	return Read(f, path, &ro)
}

// open opens the regular file path names under a root.
func (r *Roots) open(path string) (*os.File, error) {
	notUnder := fmt.Errorf("%w: %q", ErrNotUnderRoot, path)
	if path == "" || len(r.dirs) == 0 {
		return nil, notUnder
	}
	type cand struct {
		dir root
		rel string
	}
	var cands []cand
	if filepath.IsAbs(path) {
		p := filepath.Clean(path)
		for _, d := range r.dirs {
			for _, base := range []string{d.path, d.real} {
				if rel, err := filepath.Rel(base, p); err == nil && filepath.IsLocal(rel) {
					cands = append(cands, cand{d, rel})
					break
				}
			}
		}
	} else if rel := filepath.Clean(path); filepath.IsLocal(rel) {
		for _, d := range r.dirs {
			cands = append(cands, cand{d, rel})
		}
	}
	if len(cands) == 0 {
		return nil, notUnder
	}
	var firstErr error
	for _, c := range cands {
		f, err := openIn(c.dir.real, c.rel)
		if isEscape(err) {
			// A link leading out of c.dir: follow it, and accept where it ends if that is under
			// a root (an absolute link within the root, or into another root).
			f, err = r.openResolved(filepath.Join(c.dir.real, c.rel))
		}
		if err == nil {
			st, err := f.Stat()
			switch {
			case err != nil:
				f.Close()
				return nil, fmt.Errorf("dataset: %q: %w", path, err)
			case !st.Mode().IsRegular():
				f.Close()
				return nil, fmt.Errorf("dataset: %q is not a regular file", path)
			}
			return f, nil
		}
		if firstErr == nil || (errors.Is(firstErr, fs.ErrNotExist) && !errors.Is(err, fs.ErrNotExist)) {
			firstErr = err
		}
	}
	if errors.Is(firstErr, ErrNotUnderRoot) {
		return nil, notUnder
	}
	if errors.Is(firstErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("dataset: %q: no such file under the data roots", path)
	}
	var pe *fs.PathError
	if errors.As(firstErr, &pe) {
		firstErr = pe.Err // the path os.Root saw is the root-relative one
	}
	return nil, fmt.Errorf("dataset: %q: %w", path, firstErr)
}

// openResolved opens the file at full, a path whose links lead out of its root, if where they
// end is under a root. Any failure to resolve (a dangling link, say) is ErrNotUnderRoot too:
// whether a file exists outside the roots is not told.
func (r *Roots) openResolved(full string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, ErrNotUnderRoot
	}
	for _, d := range r.dirs {
		if rel, err := filepath.Rel(d.real, real); err == nil && filepath.IsLocal(rel) {
			f, err := openIn(d.real, rel)
			if isEscape(err) {
				return nil, ErrNotUnderRoot // changed since: a link again
			}
			return f, err
		}
	}
	return nil, ErrNotUnderRoot
}

// openIn opens rel under dir through os.Root, without blocking.
func openIn(dir, rel string) (*os.File, error) {
	rt, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	return rt.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// isEscape reports whether err is os.Root's refusal of a path that leads out of the root.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes from parent")
}
