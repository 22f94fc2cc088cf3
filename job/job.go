// Package job runs long computations in the background — a DFT or MD run of hours, a parameter
// sweep — through a Scheduler: job/local runs them on this machine in the kernels' sandbox,
// durable in the data directory; job/slurm submits them to a Slurm cluster. A job outlives the
// process that submitted it: whoever comes back (labmate job status, a restarted labmate serve,
// a resumed agent run) finds it by its ID, follows its logs from where it stopped reading, and
// is told how it ended.
//
// The package holds the interface and what both schedulers share; jobtest is the suite both
// pass.
package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"path"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/seconds"
	"github.com/labmate/labmate/protocol"
)

// ID names a job across schedulers: "local-…" or "slurm-…", so that a caller can tell which
// scheduler holds it.
type ID string

// State is where a job is.
type State string

// Job states. A job moves Queued → Running → one terminal state, or from Queued straight to a
// terminal one (cancelled, or refused by the scheduler).
const (
	Queued    State = "QUEUED"    // accepted, waiting for resources
	Running   State = "RUNNING"   // its process runs
	Completed State = "COMPLETED" // exited 0
	Failed    State = "FAILED"    // exited non-zero or was killed by a signal or a limit
	Cancelled State = "CANCELLED" // stopped by Cancel (a user, or perception with its verdict)
	TimedOut  State = "TIMEOUT"   // ran past its wall time
	Lost      State = "LOST"      // its process vanished while nobody watched it
)

// Terminal reports whether s is final.
func (s State) Terminal() bool {
	switch s {
	case Completed, Failed, Cancelled, TimedOut, Lost:
		return true
	}
	return false
}

// Resources are what a job asks for. Zero values mean the scheduler's defaults.
type Resources struct {
	Cores       int           `json:"cores,omitempty"`
	MemoryBytes int64         `json:"memory_bytes,omitempty"`
	WallTime    time.Duration `json:"-"` // wall_time_s
	GPUs        int           `json:"gpus,omitempty"`
	Partition   string        `json:"partition,omitempty"` // Slurm only
	// DiskBytes is how much the job's workspace may grow while it runs (local only; 0: the
	// scheduler's default, NoDiskQuota: none): past it the job is stopped, FAILED with the quota
	// in its reason.
	DiskBytes int64 `json:"disk_bytes,omitempty"`
}

// NoDiskQuota as Resources.DiskBytes asks for no workspace quota at all (0 asks for the
// scheduler's default).
const NoDiskQuota = -1

// Spec describes a job: either Command (an argv) or Script (a bash script), run in Workspace.
type Spec struct {
	Name    string   `json:"name,omitempty"`
	Command []string `json:"command,omitempty"`
	Script  string   `json:"script,omitempty"`
	// Profile is the software whose output perception reads (qe, lammps, octave, python,
	// shell, generic; see perception/software); empty: chosen from the command.
	Profile string `json:"profile,omitempty"`
	// Workspace is the job's working directory (absolute); its files are the job's.
	Workspace string            `json:"workspace"`
	Resources Resources         `json:"resources"`
	Env       map[string]string `json:"env,omitempty"`
	// Follow are workspace-relative files whose appended lines are part of the job's log (e.g.
	// QE's output file, log.lammps), beside stdout and stderr.
	Follow []string `json:"follow,omitempty"`
	// Hotfix says when perception may cancel the job (default on_error).
	Hotfix protocol.Hotfix `json:"hotfix,omitempty"`
}

// Validate checks a spec before it is submitted; its error names the field and the value.
func (s *Spec) Validate() error {
	switch {
	case len(s.Command) == 0 && s.Script == "":
		return errors.New("job spec: give a command or a script")
	case len(s.Command) > 0 && s.Script != "":
		return errors.New("job spec: give a command or a script, not both")
	case s.Workspace == "":
		return errors.New("job spec: workspace: missing")
	case !path.IsAbs(s.Workspace):
		return fmt.Errorf("job spec: workspace: %q is not an absolute path", s.Workspace)
	case s.Resources.Cores < 0:
		return fmt.Errorf("job spec: resources.cores: %d is negative", s.Resources.Cores)
	case s.Resources.MemoryBytes < 0:
		return fmt.Errorf("job spec: resources.memory_bytes: %d is negative", s.Resources.MemoryBytes)
	case s.Resources.WallTime < 0:
		return fmt.Errorf("job spec: resources.wall_time: %v is negative", s.Resources.WallTime)
	case s.Resources.GPUs < 0:
		return fmt.Errorf("job spec: resources.gpus: %d is negative", s.Resources.GPUs)
	case s.Resources.DiskBytes < NoDiskQuota:
		return fmt.Errorf("job spec: resources.disk_bytes: %d is negative (%d: no quota, 0: the default)", s.Resources.DiskBytes, NoDiskQuota)
	}
	for i, f := range s.Follow {
		if f == "" || path.IsAbs(f) || f != path.Clean(f) || f == ".." || strings.HasPrefix(f, "../") {
			return fmt.Errorf("job spec: follow[%d]: %q is not a clean path relative to the workspace", i, f)
		}
	}
	switch s.Hotfix {
	case "", protocol.HotfixOnError, protocol.HotfixOnWarning, protocol.HotfixOff:
	default:
		return fmt.Errorf("job spec: hotfix %q: choose on_error, on_warning or off", s.Hotfix)
	}
	return nil
}

// Status is what a scheduler knows of a job.
type Status struct {
	ID    ID     `json:"id"`
	Name  string `json:"name,omitempty"`
	State State  `json:"state"`
	// Reason says why a job is queued, failed, was cancelled (the verdict, or who) or was lost
	// (its last log line).
	Reason   string `json:"reason,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"` // e.g. "SIGKILL" when a signal ended it
	// Native is the scheduler's own id: the Slurm job id, the local pid.
	Native    string    `json:"native,omitempty"`
	Submitted time.Time `json:"submitted"`
	Started   time.Time `json:"started,omitzero"`
	Ended     time.Time `json:"ended,omitzero"`
	Spec      *Spec     `json:"spec,omitempty"`
	// Verdict is the last verdict of perception, other than Normal, that the job's supervisor
	// recorded where the job runs (job/local; see Supervised); nil when none was.
	Verdict *protocol.Verdict `json:"verdict,omitempty"`
}

// Line is one line of a job's log. Seq numbers a job's lines 1, 2, … across all its streams,
// in the order they were read, so that a reader resumes with after=Seq.
type Line struct {
	Seq    int64     `json:"seq"`
	Stream string    `json:"stream"` // "stdout", "stderr", or a followed file's relative path
	Text   string    `json:"text"`
	Time   time.Time `json:"time"`
}

// Scheduler runs jobs. Implementations: job/local, job/slurm; jobtest is their shared suite.
type Scheduler interface {
	// Submit validates spec and queues it; the job runs as soon as its resources are free.
	Submit(ctx context.Context, spec *Spec) (ID, error)
	// Status returns a job's status, or an error wrapping ErrUnknownJob.
	Status(ctx context.Context, id ID) (*Status, error)
	// List returns the jobs the scheduler knows, oldest first.
	List(ctx context.Context) ([]*Status, error)
	// Cancel stops a queued or running job, recording why; a job that has ended is left alone
	// (no error). Unknown: an error wrapping ErrUnknownJob.
	Cancel(ctx context.Context, id ID, why string) error
	// Logs yields the job's log lines with Seq > after, in order; with follow, it waits for more
	// until the job has ended and every line is read, otherwise it stops at the end of what is
	// there now.
	Logs(ctx context.Context, id ID, after int64, follow bool) iter.Seq2[*Line, error]
	// Watch yields the job's status now and then at each change of state, until a terminal one.
	Watch(ctx context.Context, id ID) iter.Seq2[*Status, error]
}

// ErrUnknownJob is wrapped by a Scheduler's errors for an id it does not hold.
var ErrUnknownJob = errors.New("job: unknown job")

// Sampler is what a Scheduler may offer beside the interface: the resource use of a running
// job, which perception reads to tell a job that computes silently from one that is idle.
// job/local measures its jobs' cgroups; a scheduler that cannot measure (Slurm without job
// accounting) does not implement it, and its jobs' silence is never judged.
type Sampler interface {
	// Usage returns the job's resource use now; an error wrapping ErrUnknownJob for an id
	// the scheduler does not hold, and ErrNotRunning when the job does not run.
	Usage(ctx context.Context, id ID) (*Usage, error)
}

// Usage is a running job's resource use.
type Usage struct {
	CPUSeconds  float64 `json:"cpu_s"`                        // CPU time of all its processes, cumulative
	RSSBytes    int64   `json:"rss_bytes"`                    // memory in use
	MemoryLimit int64   `json:"memory_limit_bytes,omitempty"` // its memory limit, when known
}

// ErrNotRunning is wrapped by Sampler.Usage for a job that is queued or has ended.
var ErrNotRunning = errors.New("job: not running")

// Supervised is implemented by a scheduler whose jobs are watched where they run: job/local
// starts, for each job, a supervisor that outlives labmate and runs the job's perception and
// Hot-Fix (and its workspace quota) from its start to its end, recording its verdicts beside
// the job. A follower of a supervised job (labmate job wait) reads those verdicts instead of
// judging the job a second time.
type Supervised interface {
	// Supervised reports whether a supervisor watches job id now.
	Supervised(ctx context.Context, id ID) bool
	// Verdicts returns the verdicts, other than Normal, the job's supervisor recorded, oldest
	// first.
	Verdicts(ctx context.Context, id ID) ([]*protocol.Verdict, error)
}

// MarshalJSON writes the resources with the wall time in seconds (wall_time_s), as all of
// labmate's JSON carries times.
func (r Resources) MarshalJSON() ([]byte, error) {
	type plain Resources
	return seconds.Marshal(plain(r), seconds.Field{Name: "wall_time", D: &r.WallTime, OmitZero: true})
}

// UnmarshalJSON reads wall_time_s; wall_time_ns, the nanoseconds of older records and
// clients, is still read. A field it does not know is an error, as it is in the spec.
func (r *Resources) UnmarshalJSON(b []byte) error {
	type plain Resources
	v := struct {
		*plain
		WallTimeS  *float64 `json:"wall_time_s"`
		WallTimeNS *int64   `json:"wall_time_ns"`
	}{plain: (*plain)(r)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("resources: %w", err)
	}
	if v.WallTimeS != nil && (*v.WallTimeS < 0 || *v.WallTimeS > float64(math.MaxInt64/time.Second)) {
		return fmt.Errorf("resources: wall_time_s: %v: want a number of seconds from 0 to %d", *v.WallTimeS, math.MaxInt64/time.Second)
	}
	r.WallTime = seconds.Duration(v.WallTimeS, v.WallTimeNS)
	return nil
}
