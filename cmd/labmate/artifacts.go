package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
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

// artifactFlag is --artifact PATH of every command that shows what reported artifacts — an
// agent run (run show), a session (session show: a labmate exec cell, local or on a server,
// a cell of the dashboard), a job (job status, job logs): it writes the file's bytes, as they were
// reported last, from the data directory's artifact store, where they outlive the workspace.
type artifactFlag struct{ rel string }

func (a *artifactFlag) add(cmd *cobra.Command, of string) {
	cmd.Flags().StringVar(&a.rel, "artifact", "", "write this artifact of the "+of+" (its path in the workspace) to standard output, from DATA/artifacts")
}

// set reports whether --artifact was given.
func (a *artifactFlag) set() bool { return a.rel != "" }

// write writes to w the artifact as session (who, in the errors) reported it in the log of
// data directory dir, or in more (reports the log does not hold: a job's supervisor's); the
// newest report with a digest wins. Its errors name the path and what was reported instead,
// or why the file is not kept.
func (a *artifactFlag) write(ctx context.Context, w io.Writer, dir, session, who string, more iter.Seq[*protocol.Artifact]) error {
	if err := runner.CheckArtifactPath(a.rel); err != nil {
		return fmt.Errorf("--artifact: %w", err)
	}
	reports := []iter.Seq[*protocol.Artifact]{}
	log, err := locallog.OpenReadOnly(dir)
	switch {
	case err == nil:
		defer log.Close()
		reports = append(reports, runner.Reported(ctx, log, session, ""))
	case !errors.Is(err, fs.ErrNotExist) || more == nil: // a job's supervisor needs no log
		return fmt.Errorf("--artifact %s: %w", a.rel, err)
	}
	if more != nil {
		reports = append(reports, more)
	}
	store, err := artifact.Open(filepath.Join(dir, "artifacts"), nil)
	if err != nil {
		return fmt.Errorf("--artifact %s: %w", a.rel, err)
	}
	if err := runner.CopyReported(w, store, concat(reports...), who, a.rel); err != nil {
		return fmt.Errorf("--artifact %w", err)
	}
	return nil
}

// concat yields the elements of each of seqs in turn.
func concat[T any](seqs ...iter.Seq[T]) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, seq := range seqs {
			for v := range seq {
				if !yield(v) {
					return
				}
			}
		}
	}
}
