package agent

import (
	"context"
	"errors"
	"time"

	"github.com/labmate/labmate/llm"
)

// Phase is where a run stands; a resumed run continues from its phase.
type Phase string

// Phases.
const (
	PhasePlan    Phase = "plan"
	PhaseCode    Phase = "code"
	PhaseReflect Phase = "reflect"
	PhaseFinal   Phase = "final" // every step accepted: ask for the final answer
	PhaseDone    Phase = "done"
)

// State is everything a run needs to continue: it is checkpointed with the events, and Resume
// starts from the last saved State.
type State struct {
	RunID string `json:"run_id"`
	Task  Task   `json:"task"`
	Phase Phase  `json:"phase"`
	Seq   int64  `json:"seq"` // the last event's seq
	// Model is the model that last worked on the run (llm.Model.Name: PROVIDER:MODEL), so that
	// a caller can resume the run with it.
	Model string `json:"model,omitempty"`

	Plan *Plan `json:"plan,omitempty"`
	Step int   `json:"step"`
	// Done are the accepted steps' summaries, in order: what later prompts get instead of transcripts.
	Done []string `json:"done,omitempty"`
	// Conversation is the code module's exchange for the current step (or the whole codeact run).
	Conversation []llm.Message `json:"conversation,omitempty"`
	// Last is the step's last operation, for the reflect module.
	Last *Outcome `json:"last,omitempty"`
	// Reflection is the last decision, given to the code module (adjust) or the planner (replan).
	Reflection *Reflection `json:"reflection,omitempty"`
	Memory     string      `json:"memory,omitempty"`
	Attempts   int         `json:"attempts"` // repairs of the current step
	// Recalled are the ids of the skills and guardrails memory showed in this run.
	Recalled []string `json:"recalled,omitempty"`
	// StepMemory is what memory recalled for the current step (StepMemoryFor names it:
	// re-plans/step), shown to the code module.
	StepMemory    string `json:"step_memory,omitempty"`
	StepMemoryFor string `json:"step_memory_for,omitempty"`
	// Failures are the cells that failed since the last accepted step: a repair that then
	// works makes them guardrails.
	Failures []Attempt `json:"failures,omitempty"`
	// Flagged are the cells of the step that memory's guard stopped (by their code), so that the
	// same cell sent again runs.
	Flagged []string `json:"flagged,omitempty"`

	Turns      int                         `json:"turns"`
	Usage      map[string]*llm.ModuleUsage `json:"usage,omitempty"`
	Operations int                         `json:"operations"`
	HotFixes   int                         `json:"hot_fixes"`
	Repairs    int                         `json:"repairs"`
	Replans    int                         `json:"replans"`
	Guarded    int                         `json:"guarded"` // cells memory's guard stopped before they ran
	Elapsed    time.Duration               `json:"-"`       // elapsed_s: wall time of earlier sessions of this run
	ToolCalls  int                         `json:"tool_calls,omitempty"`
	Polls      int                         `json:"polls,omitempty"`
	// Parked is the job the run waits for, while it is parked.
	Parked *Parked `json:"parked,omitempty"`

	Answer *Answer `json:"answer,omitempty"`
	Stop   *Stop   `json:"stop,omitempty"`
	// Restarted says the kernels were lost (the run resumed in a new process): the code module
	// is told which variables from earlier operations were restored (Kernels) and which are
	// gone; files in the workspace remain.
	Restarted bool `json:"restarted,omitempty"`
	// Kernels are the kernels' variables as saved after each operation, by kernel name; a
	// resumed run loads them back.
	Kernels map[string]*KernelState `json:"kernels,omitempty"`
}

// Store checkpoints runs: each run's latest State, which Resume continues from. The one
// implementation, Checkpoints, keeps them in the run's stream of the protocol log beside its
// events (LogRun).
type Store interface {
	// Save replaces the run's state with st.
	Save(ctx context.Context, st *State) error
	// Load returns a run's last saved state, or an error wrapping ErrUnknownRun.
	Load(ctx context.Context, runID string) (*State, error)
}

// ErrUnknownRun is wrapped by Store.Load for a run it never saved.
var ErrUnknownRun = errors.New("agent: unknown run")

// ErrFinished is returned by Resume for a run that already ended.
var ErrFinished = errors.New("agent: the run already ended")
