// Package report prints agent runs for people and scripts: a run's events as it goes (progress
// on one writer, the answer on another, or NDJSON), its statistics, the list of past runs, and
// one past run in full.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/protocol"
)

// Printer prints a run's events one at a time.
type Printer interface {
	Event(ev *agent.Event) error
}

// NewJSON prints every event as one line of JSON on w.
func NewJSON(w io.Writer) Printer { return &jsonEvents{enc: json.NewEncoder(w)} }

type jsonEvents struct{ enc *json.Encoder }

func (p *jsonEvents) Event(ev *agent.Event) error { return p.enc.Encode(ev) }

// NewText prints a run as a person follows it: progress on stderr, the answer on stdout.
func NewText(stdout, stderr io.Writer) Printer { return &textEvents{stdout: stdout, stderr: stderr} }

type textEvents struct {
	stdout, stderr io.Writer
}

func (p *textEvents) Event(ev *agent.Event) error {
	w := p.stderr
	switch ev.Type {
	case agent.EventStart:
		verb := "run"
		if ev.Start.Resumed {
			verb = "resuming run"
		}
		fmt.Fprintf(w, "labmate: %s %s with %s (%s, %s kernel)\n", verb, ev.RunID, ev.Start.Model, ev.Start.Task.Mode, ev.Start.Task.Kernel)
	case agent.EventMemory:
		fmt.Fprintf(w, "memory: %s\n", textcut.FirstLine(ev.Memory))
	case agent.EventPlan:
		printPlan(w, ev.Plan, -1)
	case agent.EventModelCall:
		c := ev.Call
		if c.Error != "" {
			fmt.Fprintf(w, "  %s: model call failed: %s\n", c.Module, c.Error)
		}
	case agent.EventOperation:
		return p.operation(ev.Message)
	case agent.EventVerdict:
		if v := ev.Verdict; v.State != protocol.Normal {
			fmt.Fprintf(w, "  perception: [%s] %s: %s\n", v.State, v.Detector, v.Message)
		}
	case agent.EventToolResult:
		t := ev.Tool
		switch {
		case t.Operation != nil && t.Operation.OK:
			fmt.Fprintf(w, "  ok in %.2fs\n", t.Operation.DurationS)
		case t.Operation != nil && t.Operation.HotFix:
			fmt.Fprintf(w, "  stopped by perception after %.2fs (hot-fix %d of the step)\n", t.Operation.DurationS, ev.Attempt)
		case t.Operation != nil:
			fmt.Fprintf(w, "  %s after %.2fs: %s\n", t.Operation.Reason, t.Operation.DurationS, textcut.FirstLine(t.Operation.Error))
		case t.IsError:
			fmt.Fprintf(w, "  %s rejected: %s\n", t.Name, textcut.FirstLine(t.Content))
		}
	case agent.EventKernelState:
		fmt.Fprintf(w, "kernel state: %s\n", ev.KernelState.Summary())
	case agent.EventReflection:
		f := ev.Reflection
		fmt.Fprintf(w, "reflect: step %d: %s — %s\n", ev.Step+1, f.Decision, textcut.FirstLine(f.Reasons))
	case agent.EventAnswer:
		fmt.Fprintln(p.stdout, ev.Answer.Text)
	case agent.EventStop:
		s := ev.Stop
		switch {
		case s.Reason == agent.StopAnswered:
			fmt.Fprintf(w, "labmate: answered in %s (%d model calls, %d operations, %d hot-fixes, %d re-plans)\n",
				s.Stats.Elapsed.Round(time.Millisecond), s.Stats.Turns, s.Stats.Operations, s.Stats.HotFixes, s.Stats.Replans)
		case s.Reason == agent.StopCancelled:
			fmt.Fprintf(w, "labmate: interrupted; continue with: labmate run --resume %s\n", ev.RunID)
		case s.Reason == agent.StopParked:
			fmt.Fprintf(w, "labmate: parked: the run waits for job %s (labmate job logs -f %s follows it); it holds no process meanwhile\n", s.Job, s.Job)
		default:
			fmt.Fprintf(w, "labmate: stopped (%s)", s.Reason)
			if s.Error != "" {
				fmt.Fprintf(w, ": %s", s.Error)
			}
			fmt.Fprintln(w)
			if s.Resumable {
				fmt.Fprintf(w, "labmate: continue once the provider answers again with: labmate run --resume %s\n", ev.RunID)
			}
			if s.Result != nil && s.Reason != agent.StopError {
				fmt.Fprintf(p.stdout, "PARTIAL RESULT:\n%s\n", s.Result.Text)
			}
		}
	}
	return nil
}

func (p *textEvents) operation(m *protocol.EnhancedMessage) error {
	payload, err := protocol.DecodePayload(m)
	if err != nil {
		return err
	}
	switch v := payload.(type) {
	case *protocol.Request:
		code := strings.TrimRight(v.Code, "\n")
		lines := strings.Split(code, "\n")
		fmt.Fprintf(p.stderr, "run_code (%s, %d lines):\n", v.Kernel, len(lines))
		for i, l := range lines {
			if i == 6 && len(lines) > 8 {
				fmt.Fprintf(p.stderr, "  ┆ … %d more lines\n", len(lines)-6)
				break
			}
			fmt.Fprintf(p.stderr, "  ┆ %s\n", l)
		}
	case *protocol.Progress:
		if o := v.Observation; o != nil && (o.Kind == protocol.ObsStdout || o.Kind == protocol.ObsStderr) {
			fmt.Fprintf(p.stderr, "  │ %s\n", o.Line)
		}
	}
	return nil
}

// printPlan prints a plan's steps; with done ≥ 0, the steps before done are marked accepted.
func printPlan(w io.Writer, p *agent.Plan, done int) {
	fmt.Fprintf(w, "plan: %s\n", p.Goal)
	for i, s := range p.Steps {
		mark := ""
		if done >= 0 {
			mark = "[ ] "
			if i < done {
				mark = "[x] "
			}
		}
		fmt.Fprintf(w, "  %s%d. %s [%s] — check: %s\n", mark, i+1, s.Title, s.Tool, s.Checkpoint)
	}
}

// Stats prints tokens and calls per module and the run's counts, as a table or (asJSON) as
// one JSON object {"stats": …}.
func Stats(w io.Writer, s agent.Stats, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"stats": s})
	}
	var total int64
	for _, m := range s.Modules {
		total += m.Total()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODULE\tCALLS\tINPUT\tOUTPUT\tTOTAL\t%\t")
	var calls int
	var in, out int64
	for _, m := range s.Modules {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(m.Total()) / float64(total)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t\n", m.Module, m.Calls, m.InputTokens, m.OutputTokens, m.Total(), pct)
		calls += m.Calls
		in += m.InputTokens
		out += m.OutputTokens
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t100.0\t\n", calls, in, out, total)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "operations %d, hot-fixes %d, repairs %d, re-plans %d, cells stopped by memory's guardrails %d, wall time %s\n",
		s.Operations, s.HotFixes, s.Repairs, s.Replans, s.Guarded, s.Elapsed.Round(time.Millisecond))
	return err
}
