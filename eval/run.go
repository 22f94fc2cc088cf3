package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/progress"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/tool"
)

// Memory is what agent-mode trials recall and learn with (agent/learn's Memory): the agent's
// memory and the tools it gives the model (search_memory, save_fact …).
type Memory interface {
	agent.Memory
	Tools() []tool.Tool
}

// Options configure Run.
type Options struct {
	// Model answers every trial; ModelName names it in the results (default Model.Name()).
	Model     llm.Model
	ModelName string
	// Mode is agent (default), codeact (EmbodiedAct's baseline of Table 5: one conversation with
	// run_code, 5 turns unless MaxTurns says otherwise) or direct (one call, no tools).
	Mode agent.Mode
	// The ablations of the agent mode: cells run blind; steps accepted without review; no
	// memory (the agent mode needs Memory otherwise).
	NoPerception, NoReflect, NoMemory bool

	// The caps of each trial's run; 0: the agent's defaults.
	MaxTurns, MaxRepairs, MaxReplans int
	TrialBudget                      int64 // tokens per trial
	TrialTimeout, CellTimeout        time.Duration

	// K is the trials per item (default 1). Set is the benchmark's set; IDs, when given, the
	// items to run (in the benchmark's order), Limit the first so many of them (0: all).
	K     int
	Set   string
	IDs   []string
	Limit int
	// Parallel is how many trials run at once (default 1).
	Parallel int
	// BudgetTokens caps the tokens of the whole eval, the trials of earlier runs in Out
	// included: once spent, no new trial starts; a rerun with a larger budget continues.
	BudgetTokens int64
	// Out is the result folder: trials.jsonl, the summary and its plots.
	Out string

	// StartKernel starts a kernel for the agent run runID (one workspace per run is the
	// caller's choice); nil: no kernels (direct mode needs none).
	StartKernel func(ctx context.Context, runID, name string) (kernel.Kernel, error)
	// Memory is recalled, guards cells and learns in agent mode, unless NoMemory; the trials
	// learn from each other through it.
	Memory Memory
	// Store checkpoints each trial's run under its run id; nil: none.
	Store agent.Store
	// RunLog, when set, holds each trial's run as its stream (agent.LogRun): its events, as
	// labmate run show and a server reading the same log tell them.
	RunLog operation.Log

	// Progress, when set, gets a progress bar: trials done, tokens spent, time left.
	Progress io.Writer
	// Log, when set, gets notes: a torn line ignored, the trials found done.
	Log io.Writer
	// OnTrial, when set, is called with each trial once it is in trials.jsonl, one at a time.
	OnTrial func(*Trial)
}

// Variant is the mode the trials of o run in, as results name it: the mode, then each
// ablation after a "+" (agent+no-reflect+no-memory).
func (o *Options) Variant() string {
	mode := cmp.Or(o.Mode, agent.ModeAgent)
	v := string(mode)
	if mode == agent.ModeAgent {
		for _, a := range []struct {
			on   bool
			name string
		}{{o.NoPerception, "no-perception"}, {o.NoReflect, "no-reflect"}, {o.NoMemory, "no-memory"}} {
			if a.on {
				v += "+" + a.name
			}
		}
	}
	return v
}

// evaluation is one Run in progress.
type evaluation struct {
	b       Benchmark
	o       Options
	mode    string
	model   string
	journal *journal
	bar     *progress.Bar

	mu     sync.Mutex
	spent  int64
	failed error // the first error that stops the eval
}

// Run runs the trials of b that Out's trials.jsonl does not hold yet — K per selected item,
// a fresh agent run each, its answer graded by b — appending each to trials.jsonl as it ends,
// and returns the summary of the selected trials, which it also writes to Out as summary.md,
// summary.csv, tokens.csv, score.png and tokens.png.
//
// A trial that the context cancels, or whose model's provider fails, is not recorded: it runs
// again in the next Run. Cancelled or with the provider failing, Run stops starting trials and
// returns the summary so far with the error; a grader's error is the trial's, and the eval goes
// on. Without a summary, the eval could not start.
func Run(ctx context.Context, b Benchmark, o *Options) (*Summary, error) {
	e, err := newEvaluation(b, o)
	if err != nil {
		return nil, err
	}
	items, err := e.items()
	if err != nil {
		return nil, err
	}
	j, trials, torn, err := openJournal(e.o.Out)
	if err != nil {
		return nil, err
	}
	defer j.close()
	e.journal = j
	if torn > 0 {
		e.logf("eval: %s: ignored a torn last line of %d bytes (a trial cut off mid-write; it runs again)\n", j.path, torn)
	}
	done, err := e.finished(trials, items)
	if err != nil {
		return nil, err
	}
	var pending []job
	for n := range e.o.K { // a round of every item, then the next: a budget spreads over the items
		for _, it := range items {
			if t := done[key{it.ID, e.mode, e.model, n}]; t != nil {
				e.spent += t.Tokens
			} else {
				pending = append(pending, job{it, n})
			}
		}
	}
	total := len(items) * e.o.K
	if len(done) > 0 {
		e.logf("eval: %s: %d of %d trials are done; %d to run\n", j.path, len(done), total, len(pending))
	}
	if e.o.Progress != nil && len(pending) > 0 {
		e.bar = progress.Resume(e.o.Progress, b.Name(), len(done), total, e.spent)
	}
	if len(pending) > 0 {
		ao, err := e.agentOptions()
		if err != nil {
			return nil, err
		}
		e.runAll(ctx, ao, pending)
	}
	if err := ctx.Err(); err != nil {
		e.fail(fmt.Errorf("eval: interrupted: %w", err))
	}
	s, err := e.summary(items)
	if err != nil || s.All.Trials == s.Expected {
		return s, err
	}
	return s, e.failed
}

// job is one trial to run.
type job struct {
	it Item
	n  int
}

func newEvaluation(b Benchmark, o *Options) (*evaluation, error) {
	if o == nil || o.Model == nil {
		return nil, errors.New("eval: no model")
	}
	if o.Out == "" {
		return nil, errors.New("eval: no result folder (Options.Out)")
	}
	e := &evaluation{b: b, o: *o}
	e.o.Mode = cmp.Or(e.o.Mode, agent.ModeAgent)
	switch e.o.Mode {
	case agent.ModeAgent, agent.ModeCodeAct, agent.ModeDirect:
	default:
		return nil, fmt.Errorf("eval: mode %q: choose agent, codeact or direct", e.o.Mode)
	}
	if e.o.Mode != agent.ModeAgent && (e.o.NoPerception || e.o.NoReflect || e.o.NoMemory) {
		return nil, fmt.Errorf("eval: the ablations (no perception, reflection or memory) take a module out of the agent mode, not of %s", e.o.Mode)
	}
	if e.o.Mode == agent.ModeAgent && e.o.Memory == nil && !e.o.NoMemory {
		return nil, errors.New("eval: the agent mode needs Memory (or NoMemory, the ablation)")
	}
	if e.o.K < 0 || e.o.Limit < 0 || e.o.Parallel < 0 || e.o.BudgetTokens < 0 {
		return nil, fmt.Errorf("eval: k %d, limit %d, parallel %d, budget %d: none may be negative", e.o.K, e.o.Limit, e.o.Parallel, e.o.BudgetTokens)
	}
	e.o.K, e.o.Parallel = max(e.o.K, 1), max(e.o.Parallel, 1)
	e.mode, e.model = e.o.Variant(), cmp.Or(e.o.ModelName, e.o.Model.Name())
	return e, nil
}

// items are the selected items: IDs (in the benchmark's order), then the first Limit.
func (e *evaluation) items() ([]Item, error) {
	all, err := e.b.Items(e.o.Set)
	if err != nil {
		return nil, err
	}
	items := all
	if len(e.o.IDs) > 0 {
		items = nil
		for _, it := range all {
			if slices.Contains(e.o.IDs, it.ID) {
				items = append(items, it)
			}
		}
		for _, id := range e.o.IDs {
			if !slices.ContainsFunc(items, func(it Item) bool { return it.ID == id }) {
				return nil, fmt.Errorf("eval: %s has no item %q in set %q", e.b.Name(), id, e.o.Set)
			}
		}
	}
	if e.o.Limit > 0 && len(items) > e.o.Limit {
		items = items[:e.o.Limit]
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("eval: %s: no items to run in set %q", e.b.Name(), e.o.Set)
	}
	return items, nil
}

// finished checks that trials are this benchmark's and set's and returns those of the
// selection, by key.
func (e *evaluation) finished(trials []*Trial, items []Item) (map[key]*Trial, error) {
	ids := map[string]bool{}
	for _, it := range items {
		ids[it.ID] = true
	}
	done := map[key]*Trial{}
	for _, t := range trials {
		if t.Benchmark != e.b.Name() || t.Set != e.o.Set {
			return nil, fmt.Errorf("%w: %s holds trials of %s (set %q), and this eval is %s (set %q): give it another folder",
				ErrForeign, e.journal.path, t.Benchmark, t.Set, e.b.Name(), e.o.Set)
		}
		if ids[t.Task] && t.Mode == e.mode && t.Model == e.model && t.Trial < e.o.K {
			done[t.key()] = t
		}
	}
	return done, nil
}

// agentOptions are the options every trial's agent shares; each trial adds its kernels.
func (e *evaluation) agentOptions() (*agent.Options, error) {
	o := &e.o
	ao := &agent.Options{Store: o.Store, MaxTurns: o.MaxTurns, MaxRepairs: o.MaxRepairs, MaxReplans: o.MaxReplans,
		Budget: o.TrialBudget, Timeout: o.TrialTimeout, CellTimeout: o.CellTimeout, NoPerception: o.NoPerception, NoReflect: o.NoReflect}
	if o.Mode == agent.ModeCodeAct && ao.MaxTurns == 0 {
		ao.MaxTurns = 5 // EmbodiedAct's Table 5: single-prompt ReAct, 5 turns
	}
	if o.Mode == agent.ModeAgent && !o.NoMemory {
		set, err := tool.NewSet(o.Memory.Tools()...)
		if err != nil {
			return nil, fmt.Errorf("eval: memory's tools: %w", err)
		}
		ao.Memory, ao.Tools = o.Memory, set
	}
	return ao, nil
}

// runAll runs the pending trials, Parallel at a time, until they are done, the context is
// cancelled, the budget is spent or a trial fails the eval.
func (e *evaluation) runAll(ctx context.Context, ao *agent.Options, pending []job) {
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range e.o.Parallel {
		wg.Go(func() {
			for j := range jobs {
				if e.halted(ctx) {
					continue
				}
				t, err := e.trial(ctx, ao, j.it, j.n)
				if err == nil {
					err = e.record(t)
				}
				if err != nil {
					e.fail(err)
				}
			}
		})
	}
	for _, j := range pending {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
}

// halted reports whether no new trial may start.
func (e *evaluation) halted(ctx context.Context) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return ctx.Err() != nil || e.failed != nil || e.o.BudgetTokens > 0 && e.spent >= e.o.BudgetTokens
}

func (e *evaluation) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed == nil {
		e.failed = err
	}
}

// record appends t to the journal and counts it.
func (e *evaluation) record(t *Trial) error {
	if err := e.journal.append(t); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.spent += t.Tokens
	if e.bar != nil {
		e.bar.AddTokens(t.Tokens)
	}
	if e.o.OnTrial != nil {
		e.o.OnTrial(t)
	}
	return nil
}

// trial runs and grades trial n of it. A trial cut short by the context or by the model's
// provider is not a trial: it returns an error and no record.
func (e *evaluation) trial(ctx context.Context, base *agent.Options, it Item, n int) (*Trial, error) {
	runID := uuid.NewString()
	var release func() // the workspace's, once prepared
	ao := *base
	wb, _ := e.b.(WorkspaceBenchmark)
	var workspace string
	if start := e.o.StartKernel; start != nil {
		ao.StartKernel = func(ctx context.Context, name string) (kernel.Kernel, error) {
			k, err := start(ctx, runID, name)
			if err != nil || wb == nil || workspace != "" {
				return k, err
			}
			workspace = k.Info().Workspace
			if release, err = wb.Prepare(ctx, it, workspace); err != nil {
				k.Close()
				workspace = ""
				return nil, fmt.Errorf("eval: %s: preparing the workspace: %w", it.ID, err)
			}
			return k, nil
		}
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	a, err := agent.New(e.o.Model, &ao)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	var stop *agent.Stop
	var runErr error
	events := a.Run(ctx, &agent.Task{ID: runID, Goal: it.Goal, Kernel: it.Kernel, Mode: e.o.Mode})
	if e.o.RunLog != nil {
		events = agent.LogRun(ctx, e.o.RunLog, runID, 1, events, agent.RunEndOf, func(err error) { e.logf("%v", err) })
	}
	for ev, err := range events {
		if err != nil {
			runErr = err
			break
		}
		if ev.Stop != nil {
			stop = ev.Stop
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("eval: interrupted: %w", ctx.Err())
	case stop == nil:
		return nil, fmt.Errorf("eval: %s, trial %d: %w", it.ID, n, runErr)
	case stop.Reason == agent.StopError && stop.Resumable:
		return nil, fmt.Errorf("eval: %s, trial %d: the model's provider failed (the trial runs again when the eval is rerun): %s", it.ID, n, stop.Error)
	}
	t := &Trial{Benchmark: e.b.Name(), Set: e.o.Set, Task: it.ID, Group: it.Group, Mode: e.mode, Model: e.model, Trial: n,
		Modules: stop.Stats.Modules, Operations: stop.Stats.Operations, HotFixes: stop.Stats.HotFixes, Repairs: stop.Stats.Repairs,
		Replans: stop.Stats.Replans, Turns: stop.Stats.Turns, RunID: runID, Stop: string(stop.Reason), Error: stop.Error}
	for _, m := range stop.Stats.Modules {
		t.Tokens += m.Total()
	}
	if stop.Result != nil {
		t.Answer = stop.Result.Text
	}
	if stop.Reason != agent.StopAnswered {
		t.Details = map[string]any{"error": fmt.Sprintf("the run stopped (%s) before it answered: not graded", stop.Reason)}
	} else if g, err := e.grade(ctx, wb, it, t.Answer, workspace); err != nil || g == nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("eval: interrupted: %w", ctx.Err())
		}
		if err == nil {
			err = errors.New("the grader returned no grade")
		}
		t.Error = fmt.Sprintf("grading: %v", err)
	} else {
		t.Score, t.Passed, t.Details = g.Score, g.Passed, g.Details
	}
	t.WallS = time.Since(begin).Seconds()
	return t, nil
}

// grade grades an answer, with the trial's workspace when the benchmark needs it.
func (e *evaluation) grade(ctx context.Context, wb WorkspaceBenchmark, it Item, answer, workspace string) (*Grade, error) {
	if wb != nil {
		return wb.GradeIn(ctx, it, answer, workspace)
	}
	return e.b.Grade(ctx, it, answer)
}

// summary sums up the selected trials as trials.jsonl holds them, says whether and why the
// eval stopped short, and writes it to Out.
func (e *evaluation) summary(items []Item) (*Summary, error) {
	trials, _, _, err := readTrials(e.journal.path)
	if err != nil {
		return nil, err
	}
	done, err := e.finished(trials, items)
	if err != nil {
		return nil, err
	}
	var mine []*Trial
	for _, t := range trials {
		if done[t.key()] == t {
			mine = append(mine, t)
		}
	}
	s := Summarize(mine)
	s.Benchmark, s.Set, s.Model, s.Mode = e.b.Name(), e.o.Set, e.model, e.mode
	s.Expected = len(items) * e.o.K
	if left := s.Expected - len(mine); left > 0 {
		switch {
		case errors.Is(e.failed, context.Canceled) || errors.Is(e.failed, context.DeadlineExceeded):
			s.Stopped = fmt.Sprintf("interrupted with %d trials left; rerun to continue", left)
		case e.failed != nil:
			s.Stopped = fmt.Sprintf("%d trials left after %v", left, e.failed)
		case e.o.BudgetTokens > 0 && e.spent >= e.o.BudgetTokens:
			s.Stopped = fmt.Sprintf("at the token budget: %d of %d tokens spent, %d trials left; rerun with a larger budget to continue", e.spent, e.o.BudgetTokens, left)
		default:
			s.Stopped = fmt.Sprintf("%d trials left; rerun to continue", left)
		}
	}
	return s, s.WriteFiles(e.o.Out)
}

func (e *evaluation) logf(format string, args ...any) {
	if e.o.Log != nil {
		fmt.Fprintf(e.o.Log, format, args...)
	}
}
