package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/tool"
)

// Tool names the agent defines itself.
const (
	ToolRunCode     = "run_code"
	ToolFinalAnswer = "final_answer"
)

// outputLines is how many of the first and of the last output lines an outcome keeps.
const outputLines = 20

// RunCode is the input of the run_code tool: one cell in a live kernel, watched by
// perception — the exec input every face of labmate shares (operation.Cell).
type RunCode = operation.Cell

// FinalAnswer is the input of the final_answer tool.
type FinalAnswer struct {
	Answer   string   `json:"answer" jsonschema:"the answer to the task, with the numbers it rests on"`
	Evidence []string `json:"evidence,omitempty" jsonschema:"the outputs or operation ids that support the answer"`
}

// Outcome is how one run_code operation ended, as the agent keeps it (and its model reads
// it, Text): the collector every face of labmate shares (operation.Outcome).
type Outcome = operation.Outcome

// tools is the run's tool set: run_code, final_answer, then Options.Tools.
func (r *run) tools() (*tool.Set, error) {
	set, err := tool.NewSet(
		tool.Must(ToolRunCode, "Run code as one cell in a live, sandboxed kernel (Octave or Python with numpy/scipy). "+
			"Output streams while it runs; perception watches it and interrupts it on an error, NaN/Inf, divergence, "+
			"growing oscillation, a stall or a violated watch constraint. Variables persist between cells.", r.runCode),
		tool.Must(ToolFinalAnswer, "Give the final answer to the task, with the evidence it rests on. Ends the run.",
			func(ctx context.Context, in FinalAnswer) (*tool.Result, error) {
				return &tool.Result{Content: "answer recorded", Data: &Answer{Text: in.Answer, Evidence: in.Evidence}}, nil
			}),
	)
	if err != nil {
		return nil, err
	}
	if r.a.opts.Jobs != nil {
		if err := set.Add(r.waitJobTool()); err != nil {
			return nil, err
		}
	}
	if r.a.opts.Tools != nil {
		for _, name := range r.a.opts.Tools.Names() {
			t, _ := r.a.opts.Tools.Lookup(name)
			if err := set.Add(t); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

// errEnded stops a tool when the run's consumer stopped reading.
var errEnded = errors.New("agent: the consumer stopped the run")

// runCode runs one operation through package operation, emitting its protocol messages and
// verdicts as events.
func (r *run) runCode(ctx context.Context, in RunCode) (*tool.Result, error) {
	name := in.Kernel
	if name == "" {
		name = r.st.Task.Kernel
	}
	timeout := in.TimeoutS
	if timeout == 0 {
		timeout = r.a.opts.CellTimeout.Seconds()
	}
	in.Kernel, in.TimeoutS = name, timeout
	req := in.Request()
	// Never nil: Cells would run a cell with nil Options under the runner's judge.
	opts := &operation.Options{Artifacts: r.a.opts.Artifacts}
	blind := r.st.Task.Mode == ModeCodeAct || r.a.opts.NoPerception
	if blind {
		req.Hotfix = protocol.HotfixOff // the baseline (or the ablation) runs blind: no perception, no hot-fix
	} else if !r.a.opts.NoJudge {
		opts.Judge = r.judge
	}
	caution, stop := r.guard(ctx, name, in.Code)
	if stop != nil {
		return stop, nil
	}
	out := operation.Collect(uuid.NewString(), name, in.Code, &operation.OutputLimits{Lines: outputLines})
	r.st.Operations++
	if r.a.opts.Cells != nil {
		if err := r.execCell(ctx, req, out, opts, blind); err != nil {
			return nil, err
		}
	} else if err := r.execOwn(ctx, req, out, opts, blind); err != nil {
		return nil, err
	}
	if blind {
		out.Verdict, out.Verdicts = nil, nil
	}
	if out.HotFix {
		r.st.HotFixes++
	}
	if out.Reason == protocol.ReasonCrashed || out.Reason == protocol.ReasonError && out.Result == nil {
		r.dropKernel(name) // the interpreter is gone; the next run_code starts a fresh one
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	text := out.Text()
	if caution != "" {
		text += "\nMemory's cautions for this cell (from earlier runs):\n" + caution
	}
	return &tool.Result{Content: text, IsError: !out.OK, Data: &out.Outcome}, nil
}

// execOwn runs one cell in a kernel of the run's own (Options.StartKernel), its protocol
// messages emitted as events (EventOperation), then perception's verdicts.
func (r *run) execOwn(ctx context.Context, req *protocol.Request, out *operation.Collector, opts *operation.Options, blind bool) error {
	start := func(ctx context.Context, name string) (kernel.Kernel, error) {
		k, err := r.kernel(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("starting the %s kernel: %w", name, err)
		}
		return k, nil
	}
	// The run's event stream is the operation's log: each message is emitted as it happens.
	log := operation.LogFunc(func(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
		return m, r.emit(ctx, &Event{Type: EventOperation, Message: m}, false)
	})
	for m, err := range operation.Run(ctx, log, r.st.RunID, out.OperationID, req, start, opts) {
		if err != nil {
			return err
		}
		if err := r.collect(ctx, out, m, blind); err != nil {
			return err
		}
	}
	return nil
}

// collect adds m, a message of the cell's operation, to out, then emits perception's verdict it
// carries (unless the cell runs blind) and the judge's calls.
func (r *run) collect(ctx context.Context, out *operation.Collector, m *operation.Message, blind bool) error {
	out.Add(m)
	if p, ok := m.Payload.(*protocol.Progress); ok && p.Verdict != nil && !blind {
		if err := r.emit(ctx, &Event{Type: EventVerdict, Verdict: p.Verdict}, false); err != nil {
			return err
		}
	}
	return r.drainJudge(ctx)
}

// guard asks memory about a cell before it runs. A cell that repeats a setting memory records
// as failing is not run the first time it is sent: the code module is told why, and what worked
// then; the same cell sent again runs. Other warnings relevant to the cell come back as caution.
func (r *run) guard(ctx context.Context, kernelName, code string) (caution string, stop *tool.Result) {
	m := r.a.opts.Memory
	st := r.st
	if m == nil || st.Task.Mode != ModeAgent {
		return "", nil
	}
	step := ""
	if st.Plan != nil && st.Step < len(st.Plan.Steps) {
		step = st.Plan.Steps[st.Step].Title + ": " + st.Plan.Steps[st.Step].Action
	}
	c, err := m.Guard(ctx, &Cell{RunID: st.RunID, Task: st.Task.Goal, Step: step, Kernel: kernelName, Code: code})
	if err != nil || c == nil {
		return "", nil // memory is help, not a requirement
	}
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(code)))
	if len(c.Repeats) == 0 || slices.Contains(st.Flagged, key) {
		return c.Text, nil
	}
	st.Flagged = append(st.Flagged, key)
	st.Guarded++
	var b strings.Builder
	b.WriteString("run_code: NOT RUN — memory's guardrails record that this cell repeats what failed before:\n")
	for _, x := range c.Repeats {
		fmt.Fprintf(&b, "- %s: %s [%s]", x.Setting, x.Text, x.Fact)
		if len(x.Worked) > 0 {
			fmt.Fprintf(&b, " (what worked then: %s)", strings.Join(x.Worked, ", "))
		}
		b.WriteByte('\n')
	}
	if c.Text != "" {
		b.WriteString("Other cautions:\n" + c.Text + "\n")
	}
	b.WriteString("Change the cell. If this task differs and the setting is right here, send the same cell again unchanged: it will run.")
	return "", &tool.Result{Content: b.String(), IsError: true}
}

// kernel returns the live kernel of that name, starting it on first use: the run's session's
// (Options.Cells), or one of the run's own.
func (r *run) kernel(ctx context.Context, name string) (kernel.Kernel, error) {
	if c := r.a.opts.Cells; c != nil {
		return c.Kernel(ctx, r.st.RunID, r.st.Task.Workspace, name)
	}
	if k := r.kernels[name]; k != nil {
		return k, nil
	}
	if r.a.opts.StartKernel == nil {
		return nil, errors.New("no kernels are available to this agent")
	}
	// Started outside ctx: a cancellation during start-up must not leave half an interpreter.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	k, err := r.a.opts.StartKernel(sctx, name)
	if err != nil {
		return nil, err
	}
	r.kernels[name] = k
	return k, nil
}

func (r *run) dropKernel(name string) {
	if k := r.kernels[name]; k != nil {
		k.Close()
		delete(r.kernels, name)
	}
}

var _ perception.Judge = (*judge)(nil)
