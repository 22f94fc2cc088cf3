package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/safety"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/tool"
)

// run is one Run or Resume in progress.
type run struct {
	a       *Agent
	st      *State
	meter   *llm.Meter
	set     *tool.Set
	judge   *judge
	kernels map[string]kernel.Kernel
	yield   func(*Event, error) bool
	ended   bool // the consumer stopped reading
	start   time.Time
	before  time.Duration // wall time of earlier sessions
	system  map[string]string
	// restored is what a resume restored of the kernels' variables, for the code module.
	restored string
	// saved is the seq of the last checkpoint saved in the run's own stream (Checkpoints),
	// which the run's next logged event follows (Event.after).
	saved int64
}

var (
	errTurns   = errors.New("agent: the turn cap is reached")
	errReplans = errors.New("agent: the re-plans are exhausted")
	errOutput  = errors.New("agent: the model's answers could not be used")
)

func (a *Agent) run(ctx context.Context, st *State, resumed bool, yield func(*Event, error) bool) {
	r := &run{a: a, st: st, kernels: map[string]kernel.Kernel{}, yield: yield, start: time.Now(), before: st.Elapsed,
		system: map[string]string{}}
	defer func() {
		for _, k := range r.kernels {
			k.Close()
		}
	}()
	// The budget is the run's: what earlier sessions spent counts.
	budget, spent := a.opts.Budget, int64(0)
	for _, u := range st.Usage {
		spent += u.Total()
	}
	if budget > 0 {
		budget = max(1, budget-spent)
	}
	r.meter = llm.NewMeter(a.model, budget)
	var err error
	if r.set, err = r.tools(); err != nil {
		yield(nil, err)
		return
	}
	for _, m := range []string{"plan", "code", "reflect", "perceive", "direct", "codeact"} {
		if r.system[m], err = a.Prompt(m, st.Task.Kernel, r.set.Specs()); err != nil {
			yield(nil, err)
			return
		}
	}
	r.judge = &judge{model: r.meter, system: r.system["perceive"]}
	st.Model = a.model.Name()

	runCtx := ctx
	if a.opts.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, a.opts.Timeout-st.Elapsed)
		defer cancel()
	}
	if err := r.emit(ctx, &Event{Type: EventStart, Start: &StartInfo{Task: st.Task, Model: a.model.Name(), Resumed: resumed}}, true); err != nil {
		return
	}
	if m := safety.Screen(st.Task.Goal); m != nil {
		r.finish(ctx, &Stop{Reason: StopRefused, Error: m.Error()})
		return
	}
	if a.opts.Budget > 0 && spent >= a.opts.Budget {
		r.stop(ctx, runCtx, fmt.Errorf("%w: %d of %d tokens spent in earlier sessions of the run", llm.ErrBudget, spent, a.opts.Budget))
		return
	}
	if resumed && st.Restarted && len(st.Kernels) > 0 {
		if err := r.restoreKernels(runCtx); err != nil {
			return
		}
	}
	for st.Phase != PhaseDone {
		var err error
		switch st.Phase {
		case PhasePlan:
			err = r.plan(runCtx)
		case PhaseCode:
			err = r.code(runCtx)
		case PhaseReflect:
			err = r.reflect(runCtx)
		case PhaseFinal:
			err = r.final(runCtx)
		default:
			err = fmt.Errorf("agent: run %s: unknown phase %q", st.RunID, st.Phase)
		}
		if err != nil {
			r.stop(ctx, runCtx, err)
			return
		}
	}
	r.finish(ctx, &Stop{Reason: StopAnswered, Result: st.Answer})
}

// stop ends the run after err: a clean stop for a cap, an error stop (and the error) otherwise.
func (r *run) stop(ctx, runCtx context.Context, err error) {
	if r.ended || errors.Is(err, errEnded) {
		return
	}
	s := &Stop{Reason: StopError, Error: err.Error()}
	switch {
	case errors.Is(err, llm.ErrBudget):
		s.Reason = StopBudget
	case errors.Is(err, errTurns):
		s.Reason = StopTurns
	case errors.Is(err, errReplans):
		s.Reason = StopReplans
	case errors.Is(err, errParked) && r.st.Parked != nil:
		s.Reason, s.Error, s.Job = StopParked, "", r.st.Parked.Job
	case ctx.Err() != nil:
		s.Reason = StopCancelled
	case runCtx.Err() != nil:
		s.Reason, s.Error = StopTimeout, fmt.Sprintf("the wall-time cap of %v passed", r.a.opts.Timeout)
	}
	s.Resumable = s.Reason == StopCancelled || s.Reason == StopParked || s.Reason == StopError && providerFailed(err)
	s.Result = r.partial()
	r.finish(ctx, s)
	if s.Reason == StopError && !r.ended {
		r.yield(nil, err)
	}
}

// providerFailed reports whether err is the model's provider failing (unreachable, overloaded,
// rate limited, refusing the key or the request, answering garbage): the same run may work
// once the provider does.
func providerFailed(err error) bool {
	return errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRateLimited) ||
		errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrBadRequest) || errors.Is(err, llm.ErrProvider)
}

// partial is what a stopped run had established.
func (r *run) partial() *Answer {
	if r.st.Answer != nil {
		return r.st.Answer
	}
	a := &Answer{Partial: true}
	var b strings.Builder
	for _, d := range r.st.Done {
		fmt.Fprintf(&b, "- %s\n", d)
	}
	if o := r.st.Last; o != nil {
		fmt.Fprintf(&b, "Last operation (%s): %s", o.OperationID, textcut.HeadTail(o.Output, 5, 800))
		a.Evidence = append(a.Evidence, o.OperationID)
	}
	if b.Len() == 0 {
		b.WriteString("nothing was established before the run stopped")
	}
	a.Text = strings.TrimSpace(b.String())
	return a
}

// finish emits the stop event. A resumable stop (cancelled, or the provider failing) keeps the
// run's phase, so that Resume continues it.
func (r *run) finish(ctx context.Context, s *Stop) {
	r.drainJudge(ctx) // a judgement that ended with its operation still counts
	// Failures no repair fixed are worth remembering too.
	if m := r.a.opts.Memory; m != nil && len(r.st.Failures) > 0 && s.Reason != StopCancelled && s.Reason != StopParked && s.Reason != StopAnswered {
		l := &Lesson{RunID: r.st.RunID, Task: r.st.Task.Goal, Failures: r.st.Failures, Recalled: r.st.Recalled}
		if p := r.st.Plan; p != nil && r.st.Step < len(p.Steps) {
			l.Step, l.Action, l.Checkpoint = p.Steps[r.st.Step].Title, p.Steps[r.st.Step].Action, p.Steps[r.st.Step].Checkpoint
		}
		if err := m.Learn(context.WithoutCancel(ctx), l); err == nil {
			r.st.Failures = nil
		}
	}
	if !s.Resumable {
		r.st.Phase = PhaseDone
	}
	r.st.Elapsed = r.before + time.Since(r.start)
	s.Stats = r.stats()
	r.st.Stop = s
	r.emit(ctx, &Event{Type: EventStop, Stop: s}, true)
}

func (r *run) stats() Stats {
	s := Stats{Turns: r.st.Turns, Operations: r.st.Operations, HotFixes: r.st.HotFixes, Repairs: r.st.Repairs,
		Replans: r.st.Replans, Guarded: r.st.Guarded, ToolCalls: r.st.ToolCalls, Polls: r.st.Polls, Elapsed: r.before + time.Since(r.start)}
	for _, m := range []string{"plan", "code", "perceive", "reflect", "direct", "codeact"} {
		if u := r.st.Usage[m]; u != nil {
			s.Modules = append(s.Modules, *u)
		}
	}
	return s
}

// emit stamps ev, checkpoints the state when withState, and yields ev.
func (r *run) emit(ctx context.Context, ev *Event, withState bool) error {
	return r.emitAt(ctx, ev, withState, r.st.Step, r.st.Attempts)
}

// emitAt is emit for an event about a given step and attempt (a reflection, emitted once the
// state has moved on).
func (r *run) emitAt(ctx context.Context, ev *Event, withState bool, step, attempt int) error {
	if r.ended {
		return errEnded
	}
	r.st.Seq++
	ev.RunID, ev.Seq, ev.Time, ev.Step, ev.Attempt = r.st.RunID, r.st.Seq, time.Now(), step, attempt
	if withState {
		if err := r.save(ctx); err != nil {
			return err
		}
	}
	ev.after = r.saved
	if !r.yield(ev, nil) {
		r.ended = true
		return errEnded
	}
	return nil
}

// save checkpoints the state, even when ctx ended: the stop of a cancelled run must be on
// record.
func (r *run) save(ctx context.Context) error {
	if r.ended {
		return errEnded
	}
	if s := r.a.opts.Store; s != nil {
		r.st.Elapsed = r.before + time.Since(r.start)
		var err error
		if c, ok := s.(*Checkpoints); ok {
			var seq int64
			if seq, err = c.save(context.WithoutCancel(ctx), r.st); err == nil {
				r.saved = seq
			}
		} else {
			err = s.Save(context.WithoutCancel(ctx), r.st)
		}
		if err != nil {
			r.ended = true
			r.yield(nil, fmt.Errorf("agent: checkpointing run %s: %w", r.st.RunID, err))
			return errEnded
		}
	}
	return nil
}

// call makes one model call for module, counting the turn and its usage, and reports it.
func (r *run) call(ctx context.Context, module string, req *llm.Request) (*llm.Response, error) {
	if r.st.Turns >= r.a.opts.MaxTurns {
		return nil, fmt.Errorf("%w: %d model calls", errTurns, r.a.opts.MaxTurns)
	}
	r.st.Turns++
	req.Module = module
	if req.System == "" {
		req.System = r.system[module]
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = r.a.opts.MaxTokens
	}
	start := time.Now()
	resp, err := llm.Generate(ctx, r.meter, req)
	c := &ModuleCall{Module: module, Turn: r.st.Turns, PromptChars: promptChars(req), Duration: time.Since(start)}
	if err != nil {
		c.Error = err.Error()
	} else {
		c.Usage = resp.Usage
		c.Reply = reply(resp.Message)
		r.count(module, resp.Usage)
	}
	if e := r.emit(ctx, &Event{Type: EventModelCall, Call: c}, false); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("%s module: %w", module, err)
	}
	return resp, nil
}

// maxReply caps ModuleCall.Reply.
const maxReply = 8 << 10

// reply is a model's answer as a run's story shows it: its text, then a line per tool call.
func reply(m llm.Message) string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "→ %s(%s)", tc.Name, tc.Arguments)
	}
	s := b.String()
	if len(s) > maxReply {
		s = strings.ToValidUTF8(s[:maxReply], "") + " …"
	}
	return s
}

func (r *run) count(module string, u llm.Usage) {
	mu := r.st.Usage[module]
	if mu == nil {
		mu = &llm.ModuleUsage{Module: module}
		r.st.Usage[module] = mu
	}
	mu.Calls++
	mu.Usage = mu.Usage.Add(u)
}

// drainJudge reports the judge's calls made since the last drain.
func (r *run) drainJudge(ctx context.Context) error {
	for _, c := range r.judge.take() {
		r.st.Turns++
		c.Turn = r.st.Turns
		r.count("perceive", c.Usage)
		if err := r.emit(ctx, &Event{Type: EventModelCall, Call: c}, false); err != nil {
			return err
		}
	}
	return nil
}

// structured asks module for JSON matching out's schema, telling the model precisely what was
// wrong with an unusable answer, up to three tries.
func (r *run) structured(ctx context.Context, module string, msgs []llm.Message, schema *llm.OutputSchema, check func(text string) error) error {
	var last error
	for try := 0; try < 3; try++ {
		resp, err := r.call(ctx, module, &llm.Request{Messages: msgs, Output: schema})
		if err != nil {
			return err
		}
		if last = check(resp.Message.Content); last == nil {
			return nil
		}
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: resp.Message.Content},
			llm.Message{Role: llm.RoleUser, Content: "Your answer was rejected: " + last.Error() + ". Answer again with the corrected JSON object only."})
	}
	return fmt.Errorf("%w: %s module: three answers in a row were unusable; the last: %v", errOutput, module, last)
}
