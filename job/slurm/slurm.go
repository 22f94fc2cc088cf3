// Package slurm is a job.Scheduler over the Slurm command line: sbatch --parsable with a
// generated batch script, scontrol -o show job for a job's state (sacct --parsable2 once the
// controller has forgotten it, where accounting exists), scancel to stop it.
//
// Each job has a directory, Dir/slurm-<jobid>, that holds what Slurm does not keep: the spec,
// the reason it was cancelled, its final status (Slurm forgets a finished job after MinJobAge
// unless accounting is on) and its log as read so far (log.jsonl, so that line numbers stay
// the same for every reader and every Scheduler value). Slurm writes the job's stdout and
// stderr to Dir/out/<jobid>.{stdout,stderr}: Dir must be visible from the compute nodes (on a
// cluster, a shared file system). A job outlives the process that submitted it; a new
// Scheduler over the same Dir finds it.
//
// Slurm's wall time has a resolution of one minute (a WallTime is rounded up) and is enforced
// by the controller's periodic check, so a job runs up to about half a minute past it. Memory
// is enforced by whatever the cluster configures for --mem (task/cgroup on most clusters).
package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/joblog"
	"github.com/labmate/labmate/sandbox"
)

// Options tunes a Scheduler; nil means defaults.
type Options struct {
	// Bin is the directory of sbatch, scontrol, scancel and sacct; empty: found in PATH.
	Bin string
	// Env is added to the environment of every Slurm command (e.g. SLURM_CONF=…).
	Env []string
	// Poll is how often Watch and a followed Logs ask again; default 1 s.
	Poll time.Duration
}

// Scheduler submits jobs to Slurm and keeps what it knows of them under its directory.
type Scheduler struct {
	dir  string
	bin  string
	env  []string
	poll time.Duration
	logs *joblog.Cache
}

var _ job.Scheduler = (*Scheduler)(nil)

// New returns a Scheduler keeping its jobs under dir (created if missing).
func New(dir string, opts *Options) (*Scheduler, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, "out"), 0o755); err != nil {
		return nil, fmt.Errorf("slurm: job directory: %w", err)
	}
	s := &Scheduler{dir: abs, bin: opts.Bin, poll: opts.Poll, logs: joblog.NewCache(logOptions)}
	if len(opts.Env) > 0 {
		s.env = append(os.Environ(), opts.Env...)
	}
	if s.poll <= 0 {
		s.poll = time.Second
	}
	return s, nil
}

// record is a job's job.json, written once at submission.
type record struct {
	ID        job.ID    `json:"id"`
	Native    string    `json:"native"`
	Submitted time.Time `json:"submitted"`
	Stdout    string    `json:"stdout"`
	Stderr    string    `json:"stderr"`
	Spec      *job.Spec `json:"spec"`
}

type cancelNote struct {
	Why  string    `json:"why"`
	Time time.Time `json:"time"`
}

// Submit validates spec, writes its batch script and gives it to sbatch.
func (s *Scheduler) Submit(ctx context.Context, spec *job.Spec) (job.ID, error) {
	if spec == nil {
		return "", errors.New("job spec: missing")
	}
	if err := spec.Validate(); err != nil {
		return "", err
	}
	if err := sandbox.CheckUserEnv(spec.Env); err != nil {
		return "", fmt.Errorf("job spec: %w", err)
	}
	if spec.Resources.DiskBytes > 0 {
		return "", errors.New("job spec: resources.disk_bytes: a workspace quota is for local jobs; a Slurm cluster's file systems have their own")
	}
	if !filepath.IsAbs(spec.Workspace) {
		return "", fmt.Errorf("job spec: workspace %q: not an absolute path", spec.Workspace)
	}
	if fi, err := os.Stat(spec.Workspace); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("job spec: workspace %q: not a directory", spec.Workspace)
	}
	for _, f := range spec.Follow {
		if filepath.IsAbs(f) || !filepath.IsLocal(f) {
			return "", fmt.Errorf("job spec: follow %q: not a path inside the workspace", f)
		}
	}
	out := filepath.Join(s.dir, "out")
	script, err := batchScript(spec, filepath.Join(out, "%j.stdout"), filepath.Join(out, "%j.stderr"))
	if err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(s.dir, ".submit-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	path := filepath.Join(stage, "job.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		return "", err
	}
	submitted := time.Now()
	stdout, err := s.run(ctx, "sbatch", "--parsable", path)
	if err != nil {
		return "", fmt.Errorf("slurm: submit: %w", err)
	}
	native, err := parseSbatch(stdout)
	if err != nil {
		return "", fmt.Errorf("slurm: submit: %w", err)
	}
	rec := &record{
		ID:        job.ID("slurm-" + native),
		Native:    native,
		Submitted: submitted,
		Stdout:    filepath.Join(out, native+".stdout"),
		Stderr:    filepath.Join(out, native+".stderr"),
		Spec:      spec,
	}
	if err := writeJSON(filepath.Join(stage, "job.json"), rec); err != nil {
		return "", err
	}
	if err := os.Rename(stage, s.jobDir(rec.ID)); err != nil {
		return "", fmt.Errorf("slurm: job %s submitted, but its record was not kept: %w", rec.ID, err)
	}
	return rec.ID, nil
}

// Status returns what Slurm says of the job, or its recorded end.
func (s *Scheduler) Status(ctx context.Context, id job.ID) (*job.Status, error) {
	rec, err := s.load(id)
	if err != nil {
		return nil, err
	}
	return s.status(ctx, rec)
}

func (s *Scheduler) status(ctx context.Context, rec *record) (*job.Status, error) {
	dir := s.jobDir(rec.ID)
	var final job.Status
	if err := readJSON(filepath.Join(dir, "final.json"), &final); err == nil {
		final.Spec = rec.Spec
		return &final, nil
	}
	in, err := s.query(ctx, rec.Native)
	if errors.Is(err, errForgotten) {
		// Neither the controller nor accounting knows it any more, and nobody saw it end.
		st := &job.Status{State: job.Lost, Native: rec.Native,
			Reason: fmt.Sprintf("Slurm no longer knows job %s and has no accounting for it; its end was not seen", rec.Native)}
		if last := s.lastLine(rec); last != "" {
			st.Reason += "; last log line: " + last
		}
		return s.finish(rec, st)
	}
	if err != nil {
		return nil, err
	}
	st := in.status()
	if st.State == job.Cancelled {
		var note cancelNote
		if readJSON(filepath.Join(dir, "cancel.json"), &note) == nil && note.Why != "" {
			st.Reason = note.Why
		} else {
			st.Reason = "cancelled outside labmate (scancel)"
		}
	}
	if st.State.Terminal() {
		return s.finish(rec, st)
	}
	s.fill(rec, st)
	return st, nil
}

func (s *Scheduler) fill(rec *record, st *job.Status) {
	st.ID, st.Native, st.Submitted, st.Spec = rec.ID, rec.Native, rec.Submitted, rec.Spec
	st.Name = rec.Spec.Name
}

// finish records a terminal status, which Slurm will forget.
func (s *Scheduler) finish(rec *record, st *job.Status) (*job.Status, error) {
	s.fill(rec, st)
	keep := *st
	keep.Spec = nil
	if err := writeJSON(filepath.Join(s.jobDir(rec.ID), "final.json"), &keep); err != nil {
		return nil, err
	}
	return st, nil
}

var errForgotten = errors.New("slurm: job unknown to the controller and to accounting")

// query asks the controller (scontrol), then accounting (sacct) for a job.
func (s *Scheduler) query(ctx context.Context, native string) (*info, error) {
	out, err := s.run(ctx, "scontrol", "-o", "show", "job", native)
	if err == nil {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "JobId="+native+" ") {
				return parseScontrol(line)
			}
		}
		return nil, fmt.Errorf("slurm: scontrol show job %s: no line for it in %q", native, trim(out))
	}
	if !strings.Contains(err.Error(), "Invalid job id") {
		return nil, fmt.Errorf("slurm: status: %w", err)
	}
	out, err = s.run(ctx, "sacct", "--parsable2", "-n", "-X", "-j", native,
		"-o", "JobID,JobName,State,ExitCode,Submit,Start,End")
	if err != nil || strings.TrimSpace(out) == "" {
		return nil, errForgotten // accounting disabled ("Slurm accounting storage is disabled") or silent
	}
	return parseSacct(out, native)
}

// List returns the jobs under the scheduler's directory, oldest first.
func (s *Scheduler) List(ctx context.Context) ([]*job.Status, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var all []*job.Status
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "slurm-") {
			continue
		}
		rec, err := s.load(job.ID(e.Name()))
		if err != nil {
			continue
		}
		st, err := s.status(ctx, rec)
		if err != nil {
			return nil, err
		}
		all = append(all, st)
	}
	slices.SortFunc(all, func(a, b *job.Status) int {
		if c := a.Submitted.Compare(b.Submitted); c != 0 {
			return c
		}
		x, _ := strconv.Atoi(a.Native)
		y, _ := strconv.Atoi(b.Native)
		return x - y
	})
	return all, nil
}

// Cancel records why and scancels the job; a job that has ended is left alone.
func (s *Scheduler) Cancel(ctx context.Context, id job.ID, why string) error {
	rec, err := s.load(id)
	if err != nil {
		return err
	}
	st, err := s.status(ctx, rec)
	if err != nil {
		return err
	}
	if st.State.Terminal() {
		return nil
	}
	if why == "" {
		why = "cancelled"
	}
	if err := writeJSON(filepath.Join(s.jobDir(id), "cancel.json"), &cancelNote{Why: why, Time: time.Now()}); err != nil {
		return err
	}
	if _, err := s.run(ctx, "scancel", rec.Native); err != nil {
		return fmt.Errorf("slurm: cancel %s: %w", id, err)
	}
	return nil
}

// Watch yields the status now and at each change of state, polling, until a terminal one.
func (s *Scheduler) Watch(ctx context.Context, id job.ID) iter.Seq2[*job.Status, error] {
	return func(yield func(*job.Status, error) bool) {
		rec, err := s.load(id)
		if err != nil {
			yield(nil, err)
			return
		}
		var last job.State
		for {
			st, err := s.patientStatus(ctx, rec)
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(nil, err)
				return
			}
			if st.State.Terminal() && last == job.Queued && !st.Started.IsZero() {
				// It ran between two polls: say so, as a scheduler that saw it would.
				running := *st
				running.State, running.Reason, running.ExitCode, running.Signal, running.Ended = job.Running, "", nil, "", time.Time{}
				if !yield(&running, nil) {
					return
				}
				last = job.Running
			}
			if st.State != last {
				if !yield(st, nil) {
					return
				}
				last = st.State
			}
			if st.State.Terminal() {
				return
			}
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-time.After(s.poll):
			}
		}
	}
}

// outage is how long Watch and a followed Logs keep asking a controller that does not answer
// (restarted, overloaded) before they give up with its error.
const outage = time.Minute

// patientStatus is status, asked again while the controller fails for less than outage.
func (s *Scheduler) patientStatus(ctx context.Context, rec *record) (*job.Status, error) {
	deadline := time.Now().Add(outage)
	for {
		st, err := s.status(ctx, rec)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return st, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.poll):
		}
	}
}

func (s *Scheduler) jobDir(id job.ID) string { return filepath.Join(s.dir, string(id)) }

// load reads a job's record; an id that is not one of this directory's is ErrUnknownJob.
func (s *Scheduler) load(id job.ID) (*record, error) {
	native, ok := strings.CutPrefix(string(id), "slurm-")
	if _, err := strconv.ParseUint(native, 10, 64); !ok || err != nil {
		return nil, fmt.Errorf("%w: %q", job.ErrUnknownJob, id)
	}
	var rec record
	if err := readJSON(filepath.Join(s.jobDir(id), "job.json"), &rec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", job.ErrUnknownJob, id)
		}
		return nil, fmt.Errorf("slurm: job %s: %w", id, err)
	}
	if rec.Spec == nil {
		rec.Spec = &job.Spec{}
	}
	return &rec, nil
}

// run runs a Slurm command; its error carries the command's stderr.
func (s *Scheduler) run(ctx context.Context, name string, args ...string) (string, error) {
	path := name
	if s.bin != "" {
		path = filepath.Join(s.bin, name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return stdout.String(), fmt.Errorf("%s: %w: %s", name, err, msg)
	}
	return stdout.String(), nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// writeJSON replaces path whole (temp file and rename), so that readers never see half of it.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
