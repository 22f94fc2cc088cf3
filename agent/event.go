package agent

import (
	"time"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/protocol"
)

// EventType says what an Event reports.
type EventType string

// The events of a run, in the order a run typically emits them.
const (
	EventStart      EventType = "run_start"   // the run began (or resumed)
	EventMemory     EventType = "memory"      // what memory recalled before planning
	EventModelCall  EventType = "model_call"  // one call of a module to the model, with its usage
	EventPlan       EventType = "plan"        // a (re-)plan was accepted
	EventOperation  EventType = "operation"   // a protocol message of a run_code operation
	EventToolResult EventType = "tool_result" // a tool call's result, as the model reads it
	EventVerdict    EventType = "verdict"     // perception's (or the judge's) verdict on an operation
	EventReflection EventType = "reflection"  // the reflect module's decision on a step
	EventAnswer     EventType = "answer"      // the final answer
	EventStop       EventType = "stop"        // the run ended; always the last event
)

// EventKernelState reports, after the start of a resumed run, the variables it restored in a
// kernel (and those it could not).
const EventKernelState EventType = "kernel_state"

// Event is one thing that happened in a run. Exactly the field matching Type is set.
type Event struct {
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"` // 1, 2, … within the run, continued across resumes
	Type  EventType `json:"type"`
	Time  time.Time `json:"time"`
	// Step is the plan step (0-based) the event belongs to; Attempt counts the repairs of that step.
	Step    int `json:"step"`
	Attempt int `json:"attempt,omitempty"`

	Start      *StartInfo                `json:"start,omitempty"`
	Memory     string                    `json:"memory,omitempty"`
	Call       *ModuleCall               `json:"call,omitempty"`
	Plan       *Plan                     `json:"plan,omitempty"`
	Message    *protocol.EnhancedMessage `json:"message,omitempty"`
	Cell       *CellRef                  `json:"cell,omitempty"`
	Tool       *ToolEvent                `json:"tool,omitempty"`
	Verdict    *protocol.Verdict         `json:"verdict,omitempty"`
	Reflection *Reflection               `json:"reflection,omitempty"`
	Answer     *Answer                   `json:"answer,omitempty"`
	Stop       *Stop                     `json:"stop,omitempty"`

	KernelState *KernelState `json:"kernel_state,omitempty"`

	// after is the seq of the run's last checkpoint in its stream when the event was emitted
	// (Checkpoints): LogRun logs the event after it.
	after int64
}

// StartInfo opens a run.
type StartInfo struct {
	Task    Task   `json:"task"`
	Model   string `json:"model"`
	Resumed bool   `json:"resumed,omitempty"`
}

// ModuleCall is one model call by a module.
type ModuleCall struct {
	Module string    `json:"module"` // plan, code, reflect, perceive, direct, codeact
	Turn   int       `json:"turn"`   // the run's model-call counter, 1-based
	Usage  llm.Usage `json:"usage"`
	// PromptChars is the size of what was sent (system prompt, messages and tool specs): the
	// context the agent chose to spend, whatever the provider counts.
	PromptChars int           `json:"prompt_chars"`
	Duration    time.Duration `json:"-"` // duration_s
	Error       string        `json:"error,omitempty"`
	// Reply is what the model answered: its text and its tool calls (→ name(arguments)), at
	// most maxReply bytes, so that a run's story shows each model answer.
	Reply string `json:"reply,omitempty"`
}

// ToolEvent is a tool call and what it returned to the model.
type ToolEvent struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
	// Operation is the run_code operation's id and outcome.
	Operation *Outcome `json:"operation,omitempty"`
}

// Decision is the reflect module's verdict on a step.
type Decision string

// Decisions.
const (
	Accept Decision = "accept" // the step met its checkpoint: go on
	Adjust Decision = "adjust" // close, but fix it locally: back to the code module
	Replan Decision = "replan" // the plan itself is wrong: plan again
)

// Reflection is a decision with its reasons.
type Reflection struct {
	Decision Decision `json:"decision"`
	Reasons  string   `json:"reasons"`
	// Summary is what the step established, carried into later prompts instead of transcripts.
	Summary string `json:"summary,omitempty"`
	// Fix says what to change, for Adjust.
	Fix string `json:"fix,omitempty"`
	// Auto marks a decision the agent took itself (repairs exhausted), without a model call.
	Auto bool `json:"auto,omitempty"`
}

// Answer is the run's result.
type Answer struct {
	Text     string   `json:"text"`
	Evidence []string `json:"evidence,omitempty"`
	// Partial marks what a stopped run had established when it stopped: the accepted steps'
	// summaries and the last output.
	Partial bool `json:"partial,omitempty"`
}

// StopReason says why a run ended.
type StopReason string

// Stop reasons.
const (
	StopAnswered  StopReason = "answered"
	StopBudget    StopReason = "budget"    // the token budget is spent
	StopTurns     StopReason = "max_turns" // the model-call cap was reached
	StopTimeout   StopReason = "timeout"   // the wall-time cap passed
	StopReplans   StopReason = "replans_exhausted"
	StopCancelled StopReason = "cancelled"
	StopError     StopReason = "error" // the provider or the plumbing failed; Error says how
	// StopParked: the run waits for a job (Stop.Job) without holding a process; it is
	// Resumable, and Resume once the job has ended gives the waiting call the job's outcome.
	StopParked StopReason = "parked"
	// StopRefused: the task names a hazardous or controlled substance (lab/safety); the run
	// stopped before planning, without a model call, and Error says which and why.
	StopRefused StopReason = "refused"
)

// Stop ends a run.
type Stop struct {
	Reason StopReason `json:"reason"`
	Error  string     `json:"error,omitempty"`
	// Result is the answer, or the partial result of a run that stopped early.
	Result *Answer `json:"result,omitempty"`
	Stats  Stats   `json:"stats"`
	// Resumable says the run kept its phase and Resume continues it: it was cancelled, or its
	// model's provider failed, or it is parked.
	Resumable bool `json:"resumable,omitempty"`
	// Job is the job a parked run waits for.
	Job string `json:"job,omitempty"`
}

// Stats sums a run up.
type Stats struct {
	Modules    []llm.ModuleUsage `json:"modules"`
	Turns      int               `json:"turns"`
	Operations int               `json:"operations"`
	HotFixes   int               `json:"hot_fixes"`
	Repairs    int               `json:"repairs"`
	Replans    int               `json:"replans"`
	Guarded    int               `json:"guarded,omitempty"` // cells memory's guard stopped before they ran
	// ToolCalls are the code module's tool calls (run_code, final_answer, wait_job once, the
	// others), not counting Polls: job_status and job_logs calls about a job still queued or
	// running.
	ToolCalls int           `json:"tool_calls"`
	Polls     int           `json:"polls,omitempty"`
	Elapsed   time.Duration `json:"-"` // elapsed_s
}
