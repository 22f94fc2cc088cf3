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
	f, err := s.openRecorded(id, artifactsFile)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	var all []*protocol.Artifact
	if err := json.NewDecoder(f).Decode(&all); err != nil {
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

// openRecorded opens the file name recorded beside job id; nil and no error when nothing was
// recorded, nil and an error wrapping job.ErrUnknownJob for a job there is not.
func (s *Scheduler) openRecorded(id job.ID, name string) (*os.File, error) {
	if _, err := s.readRecord(id); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.jobDir(id), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job/local: %s: %w", id, err)
	}
	return f, nil
}
