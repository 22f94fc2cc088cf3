// Package tools gives models the job schedulers as typed tools, written once for the agent
// and MCP: submit_job, job_status, job_logs, cancel_job and list_jobs. A job's id says which
// scheduler holds it (local-…, slurm-…). A call that cannot be done (a bad spec, an unknown
// id) is a tool failure the model reads, saying which field and value.
package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
	"github.com/labmate/labmate/tool"
)

// The tools' names.
const (
	SubmitJob = "submit_job"
	JobStatus = "job_status"
	JobLogs   = "job_logs"
	CancelJob = "cancel_job"
	ListJobs  = "list_jobs"
)

// Options tune Tools; nil means defaults.
type Options struct {
	// Default is the scheduler submit_job uses when a call names none (default "local").
	Default string
	// Workspace is the directory a relative (or missing) workspace is taken in; empty: a call
	// must give an absolute workspace.
	Workspace string
	// Confine keeps every job inside a workspace it is given: a call may only name a directory
	// inside it, relative (no "..", no symbolic link out of it), or none. With Workspace (an
	// agent run's), the job runs there; without (labmate serve's faces: see server.Server.Jobs),
	// the relative path is passed on for the scheduler's face to place in the workspace it
	// assigns.
	Confine bool
}

// Limits of job_logs.
const (
	defaultLogLines = 200
	maxLogLines     = 2000
	maxWait         = 60 * time.Second
)

// SubmitIn is a job to submit.
type SubmitIn struct {
	Command   []string          `json:"command,omitempty" jsonschema:"the program and its arguments, e.g. [\"pw.x\", \"-in\", \"scf.in\"]; or give script"`
	Script    string            `json:"script,omitempty" jsonschema:"a bash script to run instead of a command"`
	Name      string            `json:"name,omitempty" jsonschema:"a name for the job"`
	Workspace string            `json:"workspace,omitempty" jsonschema:"the job's working directory (its files are the job's): a directory inside the workspace this caller runs jobs in, relative, or none (absolute only from the CLI)"`
	Cores     int               `json:"cores,omitempty" jsonschema:"cores (default 1)"`
	Memory    string            `json:"memory,omitempty" jsonschema:"the memory budget of the whole job, e.g. 512M, 2G, 1.5GiB"`
	WallTime  string            `json:"wall_time,omitempty" jsonschema:"the wall time, e.g. 1:30:00, 90m, 2h; then the job is stopped (TIMEOUT)"`
	GPUs      int               `json:"gpus,omitempty" jsonschema:"GPUs (Slurm only)"`
	Partition string            `json:"partition,omitempty" jsonschema:"the Slurm partition (Slurm only)"`
	Env       map[string]string `json:"env,omitempty" jsonschema:"environment variables"`
	Follow    []string          `json:"follow,omitempty" jsonschema:"workspace files whose new lines are part of the job's log, e.g. scf.out, log.lammps"`
	Profile   string            `json:"profile,omitempty" jsonschema:"the software perception reads: qe, lammps, octave, python, shell, generic (default: from the command)"`
	Hotfix    string            `json:"hotfix,omitempty" jsonschema:"when perception may cancel the job: on_error (default), on_warning, off"`
	Scheduler string            `json:"scheduler,omitempty" jsonschema:"local (this machine, sandboxed) or slurm"`
}

// IDIn names a job.
type IDIn struct {
	ID string `json:"id" jsonschema:"the job's id, e.g. local-20260101-120000-000001-ab12cd34 or slurm-42"`
}

// LogsIn asks for a job's log lines.
type LogsIn struct {
	ID    string  `json:"id" jsonschema:"the job's id"`
	After int64   `json:"after,omitempty" jsonschema:"only lines after this seq (pass the previous call's next to read on)"`
	Limit int     `json:"limit,omitempty" jsonschema:"at most this many lines (default 200, at most 2000)"`
	WaitS float64 `json:"wait_s,omitempty" jsonschema:"wait up to this many seconds (at most 60) for new lines or the job's end"`
}

// LogsOut is a page of a job's log.
type LogsOut struct {
	Lines []*job.Line `json:"lines"`
	// Next is the seq to pass as after to read on.
	Next  int64     `json:"next"`
	More  bool      `json:"more,omitempty"` // lines beyond limit are there now
	State job.State `json:"state"`
}

// JobState is the job's state when the page was read: a reader that polls a running job
// (the agent counts such calls apart) can tell.
func (o *LogsOut) JobState() job.State { return o.State }

// CancelIn stops a job.
type CancelIn struct {
	ID  string `json:"id" jsonschema:"the job's id"`
	Why string `json:"why,omitempty" jsonschema:"the reason recorded with the job"`
}

// ListIn lists jobs.
type ListIn struct {
	Active bool `json:"active,omitempty" jsonschema:"only queued and running jobs"`
	Limit  int  `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 50)"`
}

// ListOut is the jobs, newest first.
type ListOut struct {
	Jobs []*job.Status `json:"jobs"`
}

// Tools returns submit_job, job_status, job_logs, cancel_job and list_jobs over s.
func Tools(s job.Schedulers, opts *Options) []tool.Tool {
	o := Options{Default: "local"}
	if opts != nil {
		o = *opts
		if o.Default == "" {
			o.Default = "local"
		}
	}
	return []tool.Tool{
		tool.Must(SubmitJob, "Submit a long computation (a DFT or MD run, a sweep) as a background job that outlives this call: "+
			"a command or a bash script, in a workspace, with cores, memory, wall time and the files to follow. "+
			"Returns its status (id, QUEUED or RUNNING); come back with job_status and job_logs.",
			func(ctx context.Context, in SubmitIn) (*job.Status, error) { return submit(ctx, s, &o, &in) }),
		tool.Must(JobStatus, "A job's state (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, LOST), why, its exit code, and when.",
			func(ctx context.Context, in IDIn) (*job.Status, error) {
				sch, err := s.For(job.ID(in.ID))
				if err != nil {
					return nil, err
				}
				return sch.Status(ctx, job.ID(in.ID))
			}),
		tool.Must(JobLogs, "A job's log lines (stdout, stderr, followed files), numbered by seq: pass after to read on, "+
			"wait_s to wait for new lines or the job's end.",
			func(ctx context.Context, in LogsIn) (*tool.Result, error) { return logs(ctx, s, &in) }),
		tool.Must(CancelJob, "Stop a queued or running job, recording why.",
			func(ctx context.Context, in CancelIn) (*job.Status, error) {
				sch, err := s.For(job.ID(in.ID))
				if err != nil {
					return nil, err
				}
				why := in.Why
				if why == "" {
					why = "cancelled by a tool call"
				}
				if err := sch.Cancel(ctx, job.ID(in.ID), why); err != nil {
					return nil, err
				}
				return sch.Status(ctx, job.ID(in.ID))
			}),
		tool.Must(ListJobs, "The jobs, newest first, with their states.",
			func(ctx context.Context, in ListIn) (*ListOut, error) {
				all, err := s.List(ctx)
				if err != nil {
					return nil, err
				}
				slices.Reverse(all)
				limit := in.Limit
				if limit <= 0 {
					limit = 50
				}
				out := &ListOut{Jobs: []*job.Status{}}
				for _, st := range all {
					if len(out.Jobs) == limit {
						break
					}
					if !in.Active || !st.State.Terminal() {
						out.Jobs = append(out.Jobs, st)
					}
				}
				return out, nil
			}),
	}
}

func submit(ctx context.Context, s job.Schedulers, o *Options, in *SubmitIn) (*job.Status, error) {
	kind := in.Scheduler
	if kind == "" {
		kind = o.Default
	}
	sch, ok := s[kind]
	if !ok || sch == nil {
		return nil, fmt.Errorf("scheduler %q: not available here (choose %s)", kind, strings.Join(s.Kinds(), " or "))
	}
	if err := sandbox.CheckUserEnv(in.Env); err != nil {
		return nil, err
	}
	spec := &job.Spec{Name: in.Name, Command: in.Command, Script: in.Script, Env: in.Env, Follow: in.Follow,
		Resources: job.Resources{Cores: in.Cores, GPUs: in.GPUs, Partition: in.Partition}}
	ws := in.Workspace
	switch {
	case o.Confine:
		if err := ConfinedPath(ws); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		ws = filepath.Join(o.Workspace, ws)
	case ws == "" && o.Workspace == "":
		return nil, errors.New("workspace: missing: give the job's working directory, an absolute path")
	case ws == "":
		ws = o.Workspace
	case !filepath.IsAbs(ws) && o.Workspace == "":
		return nil, fmt.Errorf("workspace %q: not an absolute path", ws)
	case !filepath.IsAbs(ws):
		ws = filepath.Join(o.Workspace, ws)
	}
	spec.Workspace = filepath.Clean(ws)
	if o.Confine && o.Workspace != "" {
		// Checked once, resolved, and submitted as checked: the scheduler opens that path with
		// no link followed, so a cell swapping a directory for a link after this look has the
		// job refused, not moved out of the workspace.
		real, err := linkedOut(o.Workspace, in.Workspace, spec.Workspace)
		if err != nil {
			return nil, err
		}
		spec.Workspace = real
	} else if o.Confine {
		spec.Workspace = in.Workspace // placed by the scheduler's face
	}
	if in.Memory != "" {
		n, err := sandbox.ParseSize(in.Memory)
		if err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
		spec.Resources.MemoryBytes = n
	}
	if in.WallTime != "" {
		d, err := job.ParseWallTime(in.WallTime)
		if err != nil {
			return nil, fmt.Errorf("wall_time: %w", err)
		}
		spec.Resources.WallTime = d
	}
	if in.Profile != "" {
		p, err := perception.ParseProfile(in.Profile)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		spec.Profile = string(p)
	}
	spec.Hotfix = protocol.Hotfix(in.Hotfix)
	id, err := sch.Submit(ctx, spec)
	if err != nil {
		return nil, err
	}
	return sch.Status(ctx, id)
}

// ConfinedPath checks a workspace a caller names inside the one it is given: empty (that one
// itself) or a relative path that stays inside it.
func ConfinedPath(ws string) error {
	switch {
	case ws == "":
		return nil
	case filepath.IsAbs(ws) || strings.HasPrefix(ws, "~"):
		return fmt.Errorf("%q: jobs run inside the workspace they are given: name a directory inside it, relative, or none", ws)
	case !filepath.IsLocal(ws):
		return fmt.Errorf("%q: climbs out of the workspace jobs run inside: name a directory inside it", ws)
	}
	return nil
}

// linkedOut checks that ws, inside root as named (asked), is not reached through a symbolic
// link out of root, and returns ws resolved: the path it checked.
func linkedOut(root, asked, ws string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	real := resolve(ws)
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("workspace %q: a link out of the workspace jobs run inside", asked)
	}
	return real, nil
}

// resolve is p with the symbolic links of its longest existing prefix resolved.
func resolve(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func logs(ctx context.Context, s job.Schedulers, in *LogsIn) (*tool.Result, error) {
	id := job.ID(in.ID)
	sch, err := s.For(id)
	if err != nil {
		return nil, err
	}
	if _, err := sch.Status(ctx, id); err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultLogLines
	}
	limit = min(limit, maxLogLines)
	out := &LogsOut{Lines: []*job.Line{}, Next: in.After}
	// read reads what there is; with settle, it waits for lines and returns settle after the
	// first one came (the lines written with it come too).
	read := func(ctx context.Context, settle func()) error {
		for ln, err := range sch.Logs(ctx, id, out.Next, settle != nil) {
			if err != nil {
				return err
			}
			if len(out.Lines) == limit {
				out.More = true
				return nil
			}
			out.Lines = append(out.Lines, ln)
			out.Next = ln.Seq
			if settle != nil && len(out.Lines) == 1 {
				settle()
			}
		}
		return nil
	}
	if err := read(ctx, nil); err != nil {
		return nil, err
	}
	if wait := time.Duration(min(in.WaitS, maxWait.Seconds()) * float64(time.Second)); wait > 0 && len(out.Lines) == 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		err := read(wctx, func() { time.AfterFunc(200*time.Millisecond, cancel) })
		cancel()
		if err != nil && wctx.Err() == nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	st, err := sch.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	out.State = st.State
	var b strings.Builder
	for _, ln := range out.Lines {
		fmt.Fprintf(&b, "%d %s: %s\n", ln.Seq, ln.Stream, ln.Text)
	}
	switch {
	case out.More:
		fmt.Fprintf(&b, "(more lines: call again with after=%d)\n", out.Next)
	case st.State.Terminal():
		fmt.Fprintf(&b, "(the job has ended: %s; this is all of its log)\n", st.State)
	default:
		fmt.Fprintf(&b, "(the job is %s: call again with after=%d for new lines)\n", st.State, out.Next)
	}
	return &tool.Result{Content: b.String(), Data: out}, nil
}
