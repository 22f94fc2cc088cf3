// Package report prints jobs for people and scripts: one job's status, the list of jobs, a
// job's log lines (plain or NDJSON), what a submission did, and the exit status that says how
// a job ended.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/labmate/labmate/internal/shellword"
	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/sandbox"
)

// Exit statuses of a job that ended, as labmate job wait (and logs -f, submit --wait) exit.
const (
	ExitCompleted = 0   // COMPLETED: exited 0
	ExitFailed    = 1   // FAILED: exited non-zero, or killed by a signal or a limit
	ExitCancelled = 3   // CANCELLED: by a user or by perception (the reason says which)
	ExitLost      = 4   // LOST: its process vanished while nobody watched
	ExitTimedOut  = 124 // TIMEOUT: ran past its wall time
)

// ExitCode is the exit status that says how a job ended (ExitCompleted …); a job that has not
// ended has none (-1).
func ExitCode(s job.State) int {
	switch s {
	case job.Completed:
		return ExitCompleted
	case job.Failed:
		return ExitFailed
	case job.Cancelled:
		return ExitCancelled
	case job.Lost:
		return ExitLost
	case job.TimedOut:
		return ExitTimedOut
	}
	return -1
}

// Status prints one job: its state and why, what it runs, where, with what, and when; or
// (asJSON) the job.Status as one JSON object.
func Status(w io.Writer, st *job.Status, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(st)
	}
	fmt.Fprintf(w, "%s  %s", st.ID, st.State)
	if st.Name != "" {
		fmt.Fprintf(w, "  %s", st.Name)
	}
	fmt.Fprintln(w)
	if st.Reason != "" {
		fmt.Fprintf(w, "  reason:    %s\n", st.Reason)
	}
	if e := ending(st); e != "" {
		fmt.Fprintf(w, "  ended:     %s\n", e)
	}
	if v := st.Verdict; v != nil {
		fmt.Fprintf(w, "  perceived: %s\n", Verdict(v))
	}
	if sp := st.Spec; sp != nil {
		fmt.Fprintf(w, "  runs:      %s\n", What(sp))
		fmt.Fprintf(w, "  workspace: %s\n", sp.Workspace)
		if r := Resources(&sp.Resources); r != "" {
			fmt.Fprintf(w, "  resources: %s\n", r)
		}
		if len(sp.Follow) > 0 {
			fmt.Fprintf(w, "  follows:   %s\n", strings.Join(sp.Follow, ", "))
		}
		if sp.Profile != "" || sp.Hotfix != "" {
			fmt.Fprintf(w, "  perception: profile %s, hotfix %s\n", or(sp.Profile, "from the command"), or(string(sp.Hotfix), "on_error"))
		}
	}
	fmt.Fprintf(w, "  submitted: %s\n", stamp(st.Submitted))
	if !st.Started.IsZero() {
		fmt.Fprintf(w, "  started:   %s\n", stamp(st.Started))
	}
	if !st.Ended.IsZero() {
		fmt.Fprintf(w, "  finished:  %s (ran %s)\n", stamp(st.Ended), Elapsed(st, time.Now()))
	}
	if st.Native != "" {
		kind := "pid"
		if job.Kind(st.ID) == "slurm" {
			kind = "slurm job"
		}
		fmt.Fprintf(w, "  native:    %s %s\n", kind, st.Native)
	}
	return nil
}

// ending says how a job ended: its exit code or signal; "" while it has not.
func ending(st *job.Status) string {
	switch {
	case !st.State.Terminal():
		return ""
	case st.Signal != "":
		return "killed by " + st.Signal
	case st.ExitCode != nil:
		return fmt.Sprintf("exit code %d", *st.ExitCode)
	}
	return ""
}

// What is the command a job runs (its argv, shell-quoted where needed) or its script's first
// line.
func What(sp *job.Spec) string {
	if len(sp.Command) > 0 {
		q := make([]string, len(sp.Command))
		for i, a := range sp.Command {
			q[i] = shellword.Quote(a)
		}
		return strings.Join(q, " ")
	}
	lines := strings.Count(strings.TrimRight(sp.Script, "\n"), "\n") + 1
	first := textcut.Head(textcut.FirstLine(strings.TrimSpace(sp.Script)), 60)
	return fmt.Sprintf("script (%d lines): %s", lines, first)
}

// Resources says what a job asked for; "" for the defaults.
func Resources(r *job.Resources) string {
	var parts []string
	if r.Cores > 0 {
		parts = append(parts, plural(r.Cores, "core"))
	}
	if r.MemoryBytes > 0 {
		parts = append(parts, sandbox.FormatSize(r.MemoryBytes))
	}
	if r.WallTime > 0 {
		parts = append(parts, "wall time "+job.FormatWallTime(r.WallTime))
	}
	switch {
	case r.DiskBytes > 0:
		parts = append(parts, "disk quota "+sandbox.FormatSize(r.DiskBytes))
	case r.DiskBytes == job.NoDiskQuota:
		parts = append(parts, "no disk quota")
	}
	if r.GPUs > 0 {
		parts = append(parts, plural(r.GPUs, "GPU"))
	}
	if r.Partition != "" {
		parts = append(parts, "partition "+r.Partition)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Elapsed is how long a job has run (until now while it runs); "-" before it started.
func Elapsed(st *job.Status, now time.Time) string {
	if st.Started.IsZero() {
		return "-"
	}
	end := st.Ended
	if end.IsZero() {
		end = now
	}
	d := end.Sub(st.Started)
	if d < time.Minute {
		return d.Round(10 * time.Millisecond).String()
	}
	return job.FormatWallTime(d.Round(time.Second))
}

func stamp(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// List prints the jobs newest first: id, state, name, when submitted, how long it ran, and
// what it runs or why it is where it is; or (asJSON) one JSON array, newest first too.
func List(w io.Writer, sts []*job.Status, asJSON bool, now time.Time) error {
	sts = slices.Clone(sts)
	slices.SortStableFunc(sts, func(a, b *job.Status) int { return b.Submitted.Compare(a.Submitted) })
	if asJSON {
		if sts == nil {
			sts = []*job.Status{}
		}
		return json.NewEncoder(w).Encode(sts)
	}
	if len(sts) == 0 {
		_, err := fmt.Fprintln(w, "no jobs (submit one with labmate job submit -- COMMAND)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tNAME\tSUBMITTED\tELAPSED\tDETAIL")
	for _, st := range sts {
		detail := ""
		if st.Spec != nil {
			detail = What(st.Spec)
		}
		if st.Reason != "" && st.State != job.Completed {
			detail = st.Reason
		}
		if e := ending(st); e != "" && st.State == job.Failed {
			detail = e + ": " + detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.ID, st.State, or(st.Name, "-"), stamp(st.Submitted), Elapsed(st, now), textcut.Head(textcut.FirstLine(detail), 80))
	}
	return tw.Flush()
}

// Lines prints a job's log lines: stdout lines as they were written, every other stream's
// prefixed with it ("[stderr] …", "[run.log] …"); or (asJSON) each job.Line as one JSON line.
type Lines struct {
	w   io.Writer
	enc *json.Encoder
}

// NewLines prints log lines on w.
func NewLines(w io.Writer, asJSON bool) *Lines {
	l := &Lines{w: w}
	if asJSON {
		l.enc = json.NewEncoder(w)
	}
	return l
}

// Line prints one line.
func (l *Lines) Line(ln *job.Line) error {
	if l.enc != nil {
		return l.enc.Encode(ln)
	}
	var err error
	if ln.Stream == "stdout" {
		_, err = fmt.Fprintln(l.w, ln.Text)
	} else {
		_, err = fmt.Fprintf(l.w, "[%s] %s\n", ln.Stream, ln.Text)
	}
	return err
}

// Ended is one line saying how a job ended, for stderr: "job ID COMPLETED (exit code 0) after 3.2s".
func Ended(st *job.Status) string {
	s := fmt.Sprintf("job %s %s", st.ID, st.State)
	if e := ending(st); e != "" && !strings.Contains(st.Reason, e) {
		s += " (" + e + ")"
	}
	if !st.Started.IsZero() {
		s += " after " + Elapsed(st, time.Now())
	}
	if st.Reason != "" && st.State != job.Completed {
		s += ": " + textcut.FirstLine(st.Reason)
	}
	return s
}

// Submitted says, for stderr, what became of a job just submitted and how to follow it. A
// queued local job starts when a running one ends (its supervisor starts it), or while a
// labmate process holds the job directory open: it says which ones do.
func Submitted(st *job.Status) string {
	var b strings.Builder
	switch st.State {
	case job.Running:
		fmt.Fprintf(&b, "job %s is running", st.ID)
	case job.Queued:
		fmt.Fprintf(&b, "job %s is QUEUED", st.ID)
		if st.Reason != "" {
			fmt.Fprintf(&b, " (%s)", st.Reason)
		}
		if job.Kind(st.ID) == "local" {
			b.WriteString(".\n  A queued local job starts when a running job ends, or while labmate holds its job directory\n" +
				"  open: run labmate job wait " + string(st.ID) + " (or labmate serve, or labmate mcp) to start it when the machine has room")
		}
	default:
		b.WriteString(Ended(st))
	}
	fmt.Fprintf(&b, "\n  follow it with: labmate job logs -f %s", st.ID)
	return b.String()
}
