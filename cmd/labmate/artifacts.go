package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
)

// dataArtifacts is the artifact store of data directory flag (DATA/artifacts, with the bound
// labmate serve --artifacts-max gave it), for a command-line process that runs cells into the
// data directory's log: their artifacts are kept there as a server's are, so that the
// dashboard and labmate run show serve them once the workspace has changed or gone. Nil, said
// on stderr, when it cannot be opened: the artifacts are then reported, not kept.
func dataArtifacts(stderr io.Writer, flag, role string) operation.Keeper {
	dir, err := dataDir(flag)
	if err == nil {
		var s *artifact.Store
		if s, err = artifact.Open(filepath.Join(dir, "artifacts"), nil); err == nil {
			return s
		}
	}
	fmt.Fprintf(stderr, "labmate %s: artifacts are not kept in the data directory: %v\n", role, err)
	return nil
}

// writeArtifact writes to w the bytes of artifact rel as session (an agent run, an exec
// session, a job) last reported it in the log of data directory dir, from the artifact store.
// Its errors say what the session reported instead, or why the file is not kept.
func writeArtifact(ctx context.Context, w io.Writer, dir, session, rel string) error {
	if err := runner.CheckArtifactPath(rel); err != nil {
		return fmt.Errorf("--artifact: %w", err)
	}
	path := filepath.Join(dir, locallog.File)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--artifact %s: the data directory %s has no log (%s)", rel, dir, locallog.File)
	}
	log, err := sqlite.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer log.Close()
	var last, found bool
	var sum string
	var size int64
	var names []string
	seen := map[string]bool{}
	for a := range runner.Reported(ctx, log, session, "") {
		if !seen[a.Path] {
			seen[a.Path] = true
			names = append(names, a.Path)
		}
		if a.Path == rel {
			found, last = true, a.SHA256 != ""
			if last {
				sum, size = a.SHA256, a.Size
			}
		}
	}
	switch {
	case !found && len(names) == 0:
		return fmt.Errorf("--artifact %s: %s reported no artifacts", rel, session)
	case !found:
		return fmt.Errorf("--artifact %s: %s reported no such artifact; it reported %s", rel, session, strings.Join(names, ", "))
	case sum == "":
		return fmt.Errorf("--artifact %s: it was reported without a digest (larger than a cell's files are kept, or still being written): it is only in the workspace that made it", rel)
	}
	store, err := artifact.Open(filepath.Join(dir, "artifacts"), nil)
	if err != nil {
		return err
	}
	f, _, err := store.Open(sum)
	if ev := (*artifact.EvictedError)(nil); errors.As(err, &ev) {
		return fmt.Errorf("--artifact %s: %w", rel, err)
	} else if err != nil {
		return fmt.Errorf("--artifact %s (%d bytes, sha256 %s): not in the artifact store %s: the process that ran it kept none", rel, size, sum, store.Dir())
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
