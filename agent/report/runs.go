package report

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"text/tabwriter"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/textcut"
)

// Runs prints the runs as a table (id, state, model, tokens, last update, task), or as one JSON
// array.
func Runs(w io.Writer, runs []agent.RunSummary, asJSON bool) error {
	if asJSON {
		if runs == nil {
			runs = []agent.RunSummary{}
		}
		return json.NewEncoder(w).Encode(runs)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tMODEL\tTOKENS\tUPDATED\tTASK")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, runState(r.Phase, r.Stop), r.Model, r.Tokens,
			r.Updated.Local().Format(time.DateTime), textcut.Head(textcut.FirstLine(r.Goal), 60))
	}
	return tw.Flush()
}

// runState is a run's state in a word or two: the phase of a run that has not stopped (running,
// or killed before it could), else its stop reason, with "resumable" when Resume continues it
// (it kept its phase).
func runState(phase string, stop agent.StopReason) string {
	switch {
	case stop == "":
		return phase
	case phase != string(agent.PhaseDone):
		return string(stop) + ", resumable"
	}
	return string(stop)
}

// Record is one run in full, as labmate run show prints it.
type Record struct {
	State *agent.State `json:"state"`
	// Operations are the run's run_code operations with their outcomes, in order.
	Operations []Operation `json:"operations"`
	Started    time.Time   `json:"started"`
	Updated    time.Time   `json:"updated"`
}

// Operation is one run_code operation of a run.
type Operation struct {
	Step    int `json:"step"` // 0-based
	Attempt int `json:"attempt"`
	*agent.Outcome
}

// NewRecord collects a run's operations from its events.
func NewRecord(st *agent.State, events iter.Seq2[*agent.Event, error]) (*Record, error) {
	r := &Record{State: st, Operations: []Operation{}}
	for ev, err := range events {
		if err != nil {
			return nil, err
		}
		if r.Started.IsZero() {
			r.Started = ev.Time
		}
		r.Updated = ev.Time
		if ev.Type == agent.EventToolResult && ev.Tool.Operation != nil {
			r.Operations = append(r.Operations, Operation{Step: ev.Step, Attempt: ev.Attempt, Outcome: ev.Tool.Operation})
		}
	}
	return r, nil
}

// Show prints one run: its task, plan and steps, operations and outcome, or (asJSON) the
// Record as one JSON object.
func Show(w io.Writer, r *Record, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	st := r.State
	fmt.Fprintf(w, "run %s: %s\n", st.RunID, st.Task.Goal)
	fmt.Fprintf(w, "model %s, %s mode, %s kernel\n", orNone(st.Model), st.Task.Mode, orNone(st.Task.Kernel))
	if st.Task.Workspace != "" {
		fmt.Fprintf(w, "workspace %s\n", st.Task.Workspace)
	}
	fmt.Fprintf(w, "started %s, updated %s\n", r.Started.Local().Format(time.DateTime), r.Updated.Local().Format(time.DateTime))
	if st.Plan != nil {
		done := st.Step
		if st.Phase == agent.PhaseFinal || st.Phase == agent.PhaseDone && st.Stop != nil && st.Stop.Reason == agent.StopAnswered {
			done = len(st.Plan.Steps)
		}
		printPlan(w, st.Plan, done)
	}
	for i, d := range st.Done {
		fmt.Fprintf(w, "  step %d established: %s\n", i+1, textcut.FirstLine(d))
	}
	fmt.Fprintf(w, "operations: %d\n", len(r.Operations))
	for _, o := range r.Operations {
		fmt.Fprintf(w, "  step %d, attempt %d: %s %s\n", o.Step+1, o.Attempt+1, o.OperationID, outcome(o.Outcome))
	}
	var tokens int64
	for _, u := range st.Usage {
		tokens += u.Total()
	}
	fmt.Fprintf(w, "tokens %d in %d model calls, %d hot-fixes, %d repairs, %d re-plans\n", tokens, st.Turns, st.HotFixes, st.Repairs, st.Replans)
	s := st.Stop
	switch {
	case s == nil:
		fmt.Fprintf(w, "outcome: not stopped (phase %s); if it is not running, continue with: labmate run --resume %s\n", st.Phase, st.RunID)
	case s.Reason == agent.StopAnswered && s.Result != nil:
		fmt.Fprintf(w, "outcome: answered\n%s\n", s.Result.Text)
	default:
		fmt.Fprintf(w, "outcome: stopped (%s)", s.Reason)
		if s.Error != "" {
			fmt.Fprintf(w, ": %s", textcut.FirstLine(s.Error))
		}
		fmt.Fprintln(w)
		if st.Phase != agent.PhaseDone {
			fmt.Fprintf(w, "continue with: labmate run --resume %s\n", st.RunID)
		}
		if s.Result != nil {
			fmt.Fprintf(w, "PARTIAL RESULT:\n%s\n", s.Result.Text)
		}
	}
	return nil
}

func outcome(o *agent.Outcome) string {
	switch {
	case o.OK:
		return fmt.Sprintf("ok in %.2fs", o.DurationS)
	case o.HotFix:
		return fmt.Sprintf("stopped by perception after %.2fs", o.DurationS)
	}
	return fmt.Sprintf("%s after %.2fs: %s", o.Reason, o.DurationS, textcut.FirstLine(o.Error))
}

func orNone(s string) string {
	if s == "" {
		return "(none recorded)"
	}
	return s
}
