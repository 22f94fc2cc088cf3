// Package agent is labmate's dual-loop cognition: it takes a task in plain language, plans it,
// acts in live kernels, watches its own runs through perception, repairs what breaks while it
// runs (the fast inner loop), judges each step against the plan and re-plans when the plan was
// wrong (the slow outer loop), and answers with the evidence.
//
// # Modules
//
// Four modules call the model, each with its system prompt from prompts/*.md:
//
//   - plan: a hierarchical plan (steps with substeps, each with its tool and a validation
//     checkpoint) as JSON-schema output, checked against the tools that exist;
//   - code: tool calls — run_code (a cell in a kernel, with watch constraints and a Hot-Fix
//     policy, run through package operation so perception judges it and the Hot-Fix stops it),
//     final_answer, and whatever Options.Tools adds;
//   - perceive: perception's escalation hook (perception.Judge): only ambiguous windows reach
//     the model, at most one per operation per 30 s and five per run;
//   - reflect: accept, adjust locally, or re-plan globally, with reasons (JSON-schema output).
//
// An operation that fails or is interrupted goes back to the code module with its output, error
// and perception's verdict as evidence for a repair, up to Options.MaxRepairs times per step; a
// step that cannot be repaired, or a reflect decision to re-plan, goes back to the planner, up to
// Options.MaxReplans times. Turns (model calls), tokens (an llm.Meter) and wall time are capped;
// a run that hits a cap stops cleanly with what it had established as a partial result.
//
// # Context
//
// Prompts stay lean: each step's code conversation starts afresh from a brief (the task, the plan
// outline, one-line summaries of the steps already accepted); outputs are cut to their first and
// last lines with a marker; in a step's conversation only the two latest tool results are kept in
// full. Every model call is reported with its usage and prompt size per module.
//
// # Checkpoints
//
// With a Store, every event is saved as it is emitted and the run's State after each change, so
// Resume continues a run killed mid-way: finished operations are not repeated (their results are
// in the state), and an operation cut short is run again. After each operation the kernel that
// ran it saves its variables (kernel.Snapshotter) in the workspace, .labmate/state/RUN/KERNEL;
// Resume starts those kernels, restores the variables (an EventKernelState each) and tells the
// code module which names came back and which did not, with the reasons.
//
// # Baselines
//
// ModeDirect answers with one model call and no tools; ModeCodeAct runs one conversation with
// run_code and final_answer, without plan, perception, Hot-Fix or reflection. The ablations
// Options.NoPerception and Options.NoReflect take one module out of the agent mode.
package agent

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"iter"
	"strings"
	"text/template"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/tool"
)

// Mode is how a run works.
type Mode string

// Modes.
const (
	ModeAgent   Mode = "agent"   // plan, code, perceive, reflect (the default)
	ModeDirect  Mode = "direct"  // one model call, no tools
	ModeCodeAct Mode = "codeact" // one conversation with run_code: execute, then respond
)

// Task is what a run is asked to do.
type Task struct {
	Goal   string `json:"goal"`
	Kernel string `json:"kernel"` // the default kernel for run_code: "python" (default) or "octave"
	Mode   Mode   `json:"mode"`
	// ID names the run; empty: a new UUID.
	ID string `json:"id,omitempty"`
	// Workspace is where the caller's kernels work. The agent only keeps it with the run, so
	// that a resumed run can be given the same directory.
	Workspace string `json:"workspace,omitempty"`
}

// Memory is what the agent needs from long-term memory: recall before planning and before each
// step, a guard before each cell, and learning from what each step's execution taught. Package
// agent/learn implements it over a memory.Store.
type Memory interface {
	// Recall returns what memory holds about the task (Step nil: for the planner) or one of its
	// steps (for the code module).
	Recall(ctx context.Context, q *RecallQuery) (*Recollection, error)
	// Guard checks a cell against memory's guardrails before it runs.
	Guard(ctx context.Context, c *Cell) (*Caution, error)
	// Learn stores what a step taught: an accepted step with the failures repaired on the way,
	// or a run's failures that no repair fixed.
	Learn(ctx context.Context, l *Lesson) error
}

// RecallQuery asks memory about a task or one of its steps.
type RecallQuery struct {
	RunID  string `json:"run_id"`
	Task   string `json:"task"`
	Kernel string `json:"kernel"`
	Step   *Step  `json:"step,omitempty"`
}

// Recollection is what memory recalled.
type Recollection struct {
	// Text is for the prompt ("" for nothing): guardrails, references (to consult, never to
	// report as a result), facts and skills.
	Text string `json:"text"`
	// Skills and Guardrails are the ids of the skills and of the warning and boundary facts
	// shown: a skill's counts move with the outcome of the step that used it.
	Skills     []string `json:"skills,omitempty"`
	Guardrails []string `json:"guardrails,omitempty"`
}

// Cell is a cell about to run.
type Cell struct {
	RunID  string `json:"run_id"`
	Task   string `json:"task"`
	Step   string `json:"step"` // the step's title and action
	Kernel string `json:"kernel"`
	Code   string `json:"code"`
}

// Caution is what memory says about a cell before it runs.
type Caution struct {
	// Repeats are the settings of the cell that memory records as having failed before.
	Repeats []Repeat `json:"repeats,omitempty"`
	// Text is the other warnings relevant to the cell (by the functions and parameters it
	// uses), for the code module ("" for none).
	Text string `json:"text,omitempty"`
}

// Repeat is a setting a cell repeats that failed before.
type Repeat struct {
	Setting string   `json:"setting"`          // "dt = 0.06"
	Fact    string   `json:"fact"`             // the guardrail's id
	Text    string   `json:"text"`             // what it says
	Worked  []string `json:"worked,omitempty"` // the settings that fixed it then
}

// Lesson is what a step taught, with the trace that produced it.
type Lesson struct {
	RunID      string `json:"run_id"`
	Task       string `json:"task"`
	Step       string `json:"step"`
	Action     string `json:"action,omitempty"`
	Checkpoint string `json:"checkpoint"`
	Summary    string `json:"summary"`
	// Accepted is false for a run's failures that no repair fixed (the step failed for good).
	Accepted   bool     `json:"accepted"`
	Code       string   `json:"code,omitempty"`   // the cell that did it
	Kernel     string   `json:"kernel,omitempty"` // the kernel it ran in
	Operations []string `json:"operations,omitempty"`
	// Failures are what failed on the way — errors, Hot-Fixes, results the reviewer rejected —
	// in order, since the last accepted step.
	Failures []Attempt `json:"failures,omitempty"`
	// References are values from outside the run that the step compared against (an
	// experimental or literature value), as the reviewer named them.
	References []string `json:"references,omitempty"`
	// Recalled are the skills and guardrails memory showed for the step.
	Recalled []string `json:"recalled,omitempty"`
}

// Attempt is a cell that failed: an error, a Hot-Fix, or a result the reviewer rejected.
type Attempt struct {
	Step        string            `json:"step"` // the step's title
	OperationID string            `json:"operation_id"`
	Kernel      string            `json:"kernel"`
	Code        string            `json:"code"`
	HotFix      bool              `json:"hot_fix,omitempty"`
	Reason      string            `json:"reason,omitempty"` // the operation's failure reason
	Error       string            `json:"error,omitempty"`
	Verdict     *protocol.Verdict `json:"verdict,omitempty"`
	// Review is why the reviewer rejected a result that ran (adjust or re-plan).
	Review string `json:"review,omitempty"`
}

// Options configure an Agent. A nil *Options means the defaults.
type Options struct {
	// StartKernel starts a kernel by name ("octave", "python"); it chooses the sandbox and the
	// workspace. Kernels are started on first use and closed when the run ends. Nil: run_code
	// reports that no kernel is available.
	StartKernel func(ctx context.Context, name string) (kernel.Kernel, error)
	// Cells, when set, runs the run's cells as operations of the run's session (package
	// runner): its queue, kernels, interrupt path and log. StartKernel is then not used.
	Cells Cells
	// Tools are more tools for the code module, beside run_code and final_answer.
	Tools *tool.Set
	// Jobs, when set, gives the code module wait_job: a run that needs a job's result parks
	// (StopParked, naming the job) instead of polling, and Resume, once the job has ended,
	// gives the call the job's outcome. The job tools themselves (job/tools) come with Tools.
	Jobs job.Schedulers
	// Store checkpoints runs; nil: none (and no Resume).
	Store Store
	// Memory, when set, is recalled before planning and before each step, guards each cell,
	// and learns from each step's outcome.
	Memory Memory

	MaxRepairs  int           // repairs per step (inner loop); default 3
	MaxReplans  int           // re-plans per run (outer loop); default 2, negative: none
	MaxTurns    int           // model calls per run; default 40
	Budget      int64         // tokens per run; 0: unlimited
	Timeout     time.Duration // wall time per run; 0: unlimited
	CellTimeout time.Duration // default run_code timeout; default 5m
	MaxTokens   int           // per model answer; 0: the adapter's default

	NoJudge bool // do not escalate ambiguous windows to the model

	// NoPerception runs every cell blind, as the codeact baseline does (an ablation): no
	// verdicts, no Hot-Fix, no judge; the cell still runs, to its end or its timeout.
	NoPerception bool
	// NoReflect accepts every step whose cell ran, without a call of the reflect module (an
	// ablation); a failed cell still goes back to the code module for a repair.
	NoReflect bool

	// Artifacts, when set, keeps a copy of every artifact a cell of the run reports (the
	// server's artifact store), so its figures outlive the run's workspace.
	Artifacts operation.Keeper
}

// Agent runs tasks with one model. It is safe for concurrent use: each Run is independent.
type Agent struct {
	model   llm.Model
	opts    Options
	prompts map[string]*template.Template
}

//go:embed prompts/*.md
var promptFS embed.FS

// New returns an agent that thinks with model.
func New(model llm.Model, opts *Options) (*Agent, error) {
	if model == nil {
		return nil, errors.New("agent: no model")
	}
	a := &Agent{model: model, prompts: map[string]*template.Template{}}
	if opts != nil {
		a.opts = *opts
	}
	o := &a.opts
	if o.MaxRepairs <= 0 {
		o.MaxRepairs = 3
	}
	if o.MaxReplans < 0 {
		o.MaxReplans = 0
	} else if o.MaxReplans == 0 {
		o.MaxReplans = 2
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = 40
	}
	if o.CellTimeout <= 0 {
		o.CellTimeout = 5 * time.Minute
	}
	entries, err := promptFS.ReadDir("prompts")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := promptFS.ReadFile("prompts/" + e.Name())
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(e.Name(), ".md")
		t, err := template.New(name).Option("missingkey=error").Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("agent: prompt %s: %w", e.Name(), err)
		}
		a.prompts[name] = t
	}
	return a, nil
}

// Run runs task to its end, yielding every event as it happens; the last event is a stop. A
// failure of the provider or of the plumbing is reported by that stop event and then yielded as
// the error; hitting a cap (turns, tokens, wall time, re-plans) is a clean stop with the partial
// result and no error.
func (a *Agent) Run(ctx context.Context, task *Task) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		if task == nil || strings.TrimSpace(task.Goal) == "" {
			yield(nil, errors.New("agent: the task is empty"))
			return
		}
		t := *task
		if t.ID == "" {
			t.ID = uuid.NewString()
		}
		if t.Kernel == "" {
			t.Kernel = "python"
		}
		switch t.Mode {
		case "":
			t.Mode = ModeAgent
		case ModeAgent, ModeDirect, ModeCodeAct:
		default:
			yield(nil, fmt.Errorf("agent: mode %q: choose agent, direct or codeact", t.Mode))
			return
		}
		st := &State{RunID: t.ID, Task: t, Phase: PhasePlan, Usage: map[string]*llm.ModuleUsage{}}
		switch t.Mode {
		case ModeDirect:
			st.Phase = PhaseFinal
		case ModeCodeAct:
			st.Phase = PhaseCode
		}
		a.run(ctx, st, false, yield)
	}
}

// Resume continues the run runID from its last checkpoint in Options.Store.
func (a *Agent) Resume(ctx context.Context, runID string) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		if a.opts.Store == nil {
			yield(nil, errors.New("agent: resume needs a Store"))
			return
		}
		st, err := a.opts.Store.Load(ctx, runID)
		if err != nil {
			yield(nil, err)
			return
		}
		if st.Phase == PhaseDone {
			yield(nil, fmt.Errorf("%w: run %s stopped (%s)", ErrFinished, runID, st.Stop.Reason))
			return
		}
		st.Stop = nil // it runs again
		if st.Usage == nil {
			st.Usage = map[string]*llm.ModuleUsage{}
		}
		if st.Operations > 0 {
			st.Restarted = true
		}
		a.run(ctx, st, true, yield)
	}
}

// Prompt is the system prompt of a module ("plan", "code", "reflect", "perceive", "direct",
// "codeact") as the agent sends it for a kernel, with the run's tools.
func (a *Agent) Prompt(module, kernelName string, tools []llm.ToolSpec) (string, error) {
	t := a.prompts[module]
	if t == nil {
		return "", fmt.Errorf("agent: no prompt for module %q", module)
	}
	var b strings.Builder
	err := t.Execute(&b, map[string]any{"Kernel": kernelName, "Tools": tools, "MaxRepairs": a.opts.MaxRepairs})
	return b.String(), err
}
