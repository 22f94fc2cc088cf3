package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
)

// artifactsFile holds, in DIR/jobs/ID, the artifacts the job's supervisor reported when the
// job ended: one JSON array.
const artifactsFile = "artifacts.json"

// RecordArtifacts records arts beside job id, replacing what was recorded: the files its
// workspace gained or changed while it ran, as its supervisor reported them when it ended —
// kept by their digest in the data directory's artifact store, so that labmate job status ID
// --artifact PATH gives them after the workspace has gone, with no server having followed the
// job.
func (s *Scheduler) RecordArtifacts(id job.ID, arts []*protocol.Artifact) error {
	if _, err := s.readRecord(id); err != nil {
		return err
	}
	if arts == nil {
		arts = []*protocol.Artifact{}
	}
	return writeAtomic(filepath.Join(s.jobDir(id), artifactsFile), arts)
}

// Artifacts returns the artifacts recorded for job id (RecordArtifacts), none when nothing
// was recorded; an entry that is not a valid artifact is left out.
func (s *Scheduler) Artifacts(ctx context.Context, id job.ID) ([]*protocol.Artifact, error) {
	if _, err := s.readRecord(id); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(s.jobDir(id), artifactsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job/local: %s: %w", id, err)
	}
	var all []*protocol.Artifact
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("job/local: %s: %s: %w", id, artifactsFile, err)
	}
	out := all[:0]
	for _, a := range all {
		if a != nil && a.Validate() == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
