package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
)

// supervisorSettle bounds how long --artifact waits for the supervisor of a job that has just
// ended to keep its artifacts.
const supervisorSettle = 15 * time.Second

// jobArtifacts is a scheduler that records, beside its jobs, the artifacts their supervisors
// kept (job/local).
type jobArtifacts interface {
	Artifacts(ctx context.Context, id job.ID) ([]*protocol.Artifact, error)
}

// writeJobArtifact writes --artifact of job st of s to w: as a server that followed the job
// logged it (the job's session in DATA/labmate.db is its id), or as its supervisor recorded it
// beside the job when no server did.
func writeJobArtifact(ctx context.Context, w io.Writer, dirs *jobDirs, s job.Scheduler, st *job.Status, art *artifactFlag) error {
	if !st.State.Terminal() {
		return fmt.Errorf("--artifact %s: job %s is %s: its artifacts are kept when it ends (labmate job wait %s)", art.rel, st.ID, st.State, st.ID)
	}
	if sv, ok := s.(job.Supervised); ok { // it keeps them as the job ends: let it finish
		for deadline := time.Now().Add(supervisorSettle); sv.Supervised(ctx, st.ID) && time.Now().Before(deadline); {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	var more iter.Seq[*protocol.Artifact]
	if r, ok := s.(jobArtifacts); ok {
		arts, err := r.Artifacts(ctx, st.ID)
		if err != nil {
			return fmt.Errorf("--artifact %s: %w", art.rel, err)
		}
		more = slices.Values(arts)
	}
	dir, err := dirs.root()
	if err != nil {
		return err
	}
	return art.write(ctx, w, dir, string(st.ID), "job "+string(st.ID), more)
}
