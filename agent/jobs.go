package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/tool"
)

// ToolWaitJob is the tool a run calls when it needs a job's result (Options.Jobs).
const ToolWaitJob = "wait_job"

// WaitJob is the input of wait_job.
type WaitJob struct {
	JobID string `json:"job_id" jsonschema:"the id of the job whose result the run needs, as submit_job returned it"`
}

// Parked is a run waiting for a job: it stopped (StopParked) without holding a process, and
// Resume, once the job has ended, gives its wait_job call the job's outcome.
type Parked struct {
	Job    string    `json:"job"`
	CallID string    `json:"call_id"` // the wait_job call that parked the run
	State  job.State `json:"state"`   // the job's state when the run parked
	Since  time.Time `json:"since"`
}

// JobOutcome is how a job a run waited for ended: the Data of wait_job's result.
type JobOutcome struct {
	Status *job.Status `json:"status"`
	Tail   []*job.Line `json:"tail,omitempty"` // the last lines of its log
	Lines  int64       `json:"lines"`          // lines in its log
}

// tailLines is how many of a job's last log lines wait_job returns.
const tailLines = 20

// errParked ends a run's session when a wait_job call parks it.
var errParked = errors.New("agent: the run is parked")

// park is the Data of a wait_job result for a job that has not ended.
type park struct {
	job   job.ID
	state job.State
}

// pollTools are the job tools (job/tools) whose calls, while the job they ask about is
// queued or running, are polls: counted as Stats.Polls, not as Stats.ToolCalls.
var pollTools = map[string]bool{"job_status": true, "job_logs": true}

// jobState is what a job tool's result says of the job's state (job/tools.LogsOut).
type jobState interface{ JobState() job.State }

// countCall counts a tool call of the code module: a poll, or one of the agent's tool calls.
func (r *run) countCall(name string, res *tool.Result) {
	if pollTools[name] && !res.IsError {
		var s job.State
		switch d := res.Data.(type) {
		case *job.Status:
			s = d.State
		case jobState:
			s = d.JobState()
		}
		if s != "" && !s.Terminal() {
			r.st.Polls++
			return
		}
	}
	r.st.ToolCalls++
}

// waitJobTool is wait_job over Options.Jobs.
func (r *run) waitJobTool() tool.Tool {
	return tool.Must(ToolWaitJob, "Wait for a job's end when the task needs its result: while the job is queued or running the run "+
		"parks (it stops without holding a process and is resumed when the job ends); this call then returns how the job ended "+
		"and the last lines of its log. Do not poll job_status for this.",
		func(ctx context.Context, in WaitJob) (*tool.Result, error) {
			id := job.ID(strings.TrimSpace(in.JobID))
			sch, err := r.a.opts.Jobs.For(id)
			if err != nil {
				return nil, err
			}
			st, err := sch.Status(ctx, id)
			if err != nil {
				return nil, err
			}
			if !st.State.Terminal() {
				return &tool.Result{Content: fmt.Sprintf("job %s is %s: the run parks until it ends", id, st.State), Data: &park{job: id, state: st.State}}, nil
			}
			return JobResult(ctx, sch, st)
		})
}

// JobResult is what wait_job returns for a job that has ended, in the monitor's words: "job ID
// ended: COMPLETED in 3m12s, exit code 0; last lines of its log: …".
func JobResult(ctx context.Context, sch job.Scheduler, st *job.Status) (*tool.Result, error) {
	out := &JobOutcome{Status: st}
	for ln, err := range sch.Logs(ctx, st.ID, 0, false) {
		if err != nil {
			return nil, err
		}
		out.Lines = ln.Seq
		if out.Tail = append(out.Tail, ln); len(out.Tail) > tailLines {
			out.Tail = out.Tail[1:]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job %s ended: %s", st.ID, st.State)
	if !st.Started.IsZero() && !st.Ended.IsZero() {
		d := st.Ended.Sub(st.Started)
		if d < time.Minute {
			d = d.Round(10 * time.Millisecond)
		} else {
			d = d.Round(time.Second)
		}
		fmt.Fprintf(&b, " in %s", d)
	}
	switch {
	case st.Signal != "":
		fmt.Fprintf(&b, ", killed by %s", st.Signal)
	case st.ExitCode != nil:
		fmt.Fprintf(&b, ", exit code %d", *st.ExitCode)
	}
	if st.Reason != "" && st.State != job.Completed {
		fmt.Fprintf(&b, " (%s)", textcut.Head(st.Reason, 400))
	}
	switch {
	case len(out.Tail) == 0:
		b.WriteString("; its log is empty.")
	case int64(len(out.Tail)) < out.Lines:
		fmt.Fprintf(&b, "; the last %d of its %d log lines (job_logs reads the rest):\n", len(out.Tail), out.Lines)
	default:
		b.WriteString("; its log:\n")
	}
	for _, ln := range out.Tail {
		fmt.Fprintf(&b, "[%s] %s\n", ln.Stream, textcut.Head(ln.Text, 500))
	}
	return &tool.Result{Content: strings.TrimRight(b.String(), "\n"), IsError: st.State != job.Completed, Data: out}, nil
}
