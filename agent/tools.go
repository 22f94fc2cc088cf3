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

// RunCode is the input of the run_code tool: one cell in a live kernel, watched by perception.
type RunCode struct {
	Code   string   `json:"code" jsonschema:"the code to run, as one cell; the kernel keeps variables between cells"`
	Kernel string   `json:"kernel,omitempty" jsonschema:"octave or python (default: the task's kernel)"`
	Watch  []string `json:"watch,omitempty" jsonschema:"constraints perception enforces while the code runs, on series logged with labmate_log/labmate.log or printed as 'name = value': 'x < 1e6', 'finite(x)', 'residual decreasing', 'energy increasing', 't in [0, 5]'"`
	Hotfix string   `json:"hotfix,omitempty" jsonschema:"when perception interrupts the run: on_error (default), on_warning or off"`
	// TimeoutS bounds the cell's wall time.
	TimeoutS float64 `json:"timeout_s,omitempty" jsonschema:"wall-clock limit in seconds (default 300)"`
	// ExpectSilenceS declares a legitimately silent computation.
	ExpectSilenceS float64 `json:"expect_silence_s,omitempty" jsonschema:"how long the code may compute without printing, in seconds"`
}

// FinalAnswer is the input of the final_answer tool.
type FinalAnswer struct {
	Answer   string   `json:"answer" jsonschema:"the answer to the task, with the numbers it rests on"`
	Evidence []string `json:"evidence,omitempty" jsonschema:"the outputs or operation ids that support the answer"`
}

// Outcome is how one run_code operation ended, as the agent keeps it.
type Outcome struct {
	OperationID string            `json:"operation_id"`
	Kernel      string            `json:"kernel"`
	Code        string            `json:"code"`
	OK          bool              `json:"ok"`
	Reason      protocol.Reason   `json:"reason,omitempty"` // why it failed
	Error       string            `json:"error,omitempty"`
	Line        int               `json:"line,omitempty"`
	HotFix      bool              `json:"hot_fix,omitempty"` // perception stopped it
	Verdict     *protocol.Verdict `json:"verdict,omitempty"`
	Output      string            `json:"output"` // head and tail of stdout/stderr
	DurationS   float64           `json:"duration_s"`
	// Artifacts are the workspace files the cell created or changed (figures, tables).
	Artifacts []protocol.Artifact `json:"artifacts,omitempty"`
}

// text is the outcome as the model reads it.
func (o *Outcome) text() string {
	var b strings.Builder
	switch {
	case o.OperationID == "": // a claim the coding module made without running code
	case o.OK:
		fmt.Fprintf(&b, "operation %s completed in %.2fs.\n", o.OperationID, o.DurationS)
	case o.HotFix:
		fmt.Fprintf(&b, "operation %s was INTERRUPTED by perception after %.2fs (hot-fix); the workspace is kept.\n", o.OperationID, o.DurationS)
	default:
		fmt.Fprintf(&b, "operation %s FAILED (%s) after %.2fs", o.OperationID, o.Reason, o.DurationS)
		if o.Line > 0 {
			fmt.Fprintf(&b, " at line %d", o.Line)
		}
		b.WriteString(".\n")
	}
	if o.Error != "" && !o.HotFix {
		fmt.Fprintf(&b, "error: %s\n", headTail(o.Error, 10, 1500))
	}
	if v := o.Verdict; v != nil && v.State != protocol.Normal {
		fmt.Fprintf(&b, "perception: %s from %s: %s\n", v.State, v.Detector, v.Message)
		for _, e := range v.Evidence {
			if !strings.Contains(o.Output, strings.TrimPrefix(e, "stderr: ")) { // said once is enough
				fmt.Fprintf(&b, "  evidence: %s\n", head(e, 200))
			}
		}
	}
	if o.Output != "" {
		fmt.Fprintf(&b, "output:\n%s", o.Output)
	} else {
		b.WriteString("output: (none)\n")
	}
	for _, a := range o.Artifacts {
		fmt.Fprintf(&b, "file written: %s (%s, %d bytes)\n", a.Path, a.MIMEType, a.Size)
	}
	return b.String()
}

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
	req := &protocol.Request{Kind: "exec", Kernel: name, Code: in.Code, TimeoutS: timeout,
		Hotfix: protocol.Hotfix(in.Hotfix), Watch: in.Watch, ExpectSilenceS: in.ExpectSilenceS}
	var opts *operation.Options
	if r.st.Task.Mode == ModeCodeAct {
		req.Hotfix = protocol.HotfixOff // the baseline runs blind: no perception, no hot-fix
	} else if !r.a.opts.NoJudge {
		opts = &operation.Options{Judge: r.judge}
	}
	caution, stop := r.guard(ctx, name, in.Code)
	if stop != nil {
		return stop, nil
	}
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
	out := &Outcome{OperationID: uuid.NewString(), Kernel: name, Code: in.Code}
	r.st.Operations++
	buf := &lineBuf{keep: r.a.opts.OutputLines}
	var final *operation.Message
	for m, err := range operation.Run(ctx, log, r.st.RunID, out.OperationID, req, start, opts) {
		if err != nil {
			return nil, err
		}
		if p, ok := m.Payload.(*protocol.Progress); ok {
			if o := p.Observation; o != nil && o.Kind == protocol.ObsArtifact && o.Artifact != nil {
				out.Artifacts = append(out.Artifacts, *o.Artifact)
			}
			if o := p.Observation; o != nil && (o.Kind == protocol.ObsStdout || o.Kind == protocol.ObsStderr) {
				if o.Kind == protocol.ObsStderr {
					buf.add("stderr: " + o.Line)
				} else {
					buf.add(o.Line)
				}
			}
			if p.Verdict != nil && r.st.Task.Mode != ModeCodeAct {
				if err := r.emit(ctx, &Event{Type: EventVerdict, Verdict: p.Verdict}, false); err != nil {
					return nil, err
				}
			}
		}
		if err := r.drainJudge(ctx); err != nil {
			return nil, err
		}
		final = m
	}
	out.Output = buf.String()
	switch p := final.Payload.(type) {
	case *protocol.Complete:
		out.OK, out.DurationS = true, p.Result.DurationS
	case *protocol.Failed:
		out.Reason, out.Error = p.Reason, p.Error
		if r.st.Task.Mode != ModeCodeAct {
			out.Verdict = p.Verdict
		}
		if p.Result != nil {
			out.DurationS, out.Line = p.Result.DurationS, p.Result.Line
		}
		out.HotFix = p.Reason == protocol.ReasonInterrupted && p.Verdict != nil
		if out.HotFix {
			r.st.HotFixes++
		}
		if p.Reason == protocol.ReasonCrashed || p.Reason == protocol.ReasonError && p.Result == nil {
			r.dropKernel(name) // the interpreter is gone; the next run_code starts a fresh one
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	text := out.text()
	if caution != "" {
		text += "\nMemory's cautions for this cell (from earlier runs):\n" + caution
	}
	return &tool.Result{Content: text, IsError: !out.OK, Data: out}, nil
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

// kernel returns the live kernel of that name, starting it on first use.
func (r *run) kernel(ctx context.Context, name string) (kernel.Kernel, error) {
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
