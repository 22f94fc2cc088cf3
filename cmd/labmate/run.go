package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/learn"
	agentsqlite "github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/knowledge"
	ktools "github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/tool"
)

func newRunCmd() *cobra.Command {
	var (
		modelSpec, kernelName, mode, resume, workspace, data string
		memoryStore, namespace                               string
		memoryRead                                           []string
		asJSON, stats, noMemory, memoryInfer                 bool
		maxTurns, maxRepairs, maxReplans                     int
		budget                                               int64
		timeout, cellTimeout                                 time.Duration
		sf                                                   sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   `run [flags] "TASK" | run --resume ID`,
		Short: "Solve a task with the agent: plan, run code in live kernels, watch, repair, reflect, answer",
		Long: `Solve a scientific or engineering task with the dual-loop agent. It plans the task (steps
with validation checkpoints), writes code and runs it in a live, sandboxed kernel while perception
watches the run and interrupts it when it goes wrong, repairs failed or interrupted runs (up to
--max-repairs per step), reviews each step against its checkpoint and re-plans when the plan was
wrong (up to --max-replans), and answers with the evidence.

The model is --model SPEC (else $LABMATE_MODEL, else the config file; see labmate model), such as
openai:gpt-4.1, anthropic:claude-sonnet-4-5 or ollama:qwen3:8b. --mode direct answers with one model call and no tools; --mode codeact runs one
conversation with run_code, without plan, perception or reflection (baselines for comparisons).

Progress is printed to stderr as it happens and the answer to stdout; --json prints every event as
NDJSON to stdout instead (run_start, memory, plan, model_call, operation, verdict, tool_result,
reflection, answer, stop). --stats adds a table of tokens and calls per module, hot-fixes, repairs
and re-plans.

In agent mode, memory (--memory-store, default ~/.local/share/labmate/memory.db; see labmate
memory) is recalled before planning and before each step: the guardrails (what failed before and
what fixed it), references (values to consult, never to report as the result), facts and skills
relevant to the task. Before a cell runs, a cell that repeats a setting a guardrail records as
failing is sent back to the model once with what worked then. What each step's execution taught
is written back through consolidation, linked to the run and its operations: a failure followed
by a repair that worked becomes a guardrail, an accepted step a skill created or revised by
content (never overwritten by title), the counts of the skills it used move, and values it
compared against are kept as references. The model also gets the tools search_memory,
search_skills, save_fact, save_skill and update_skill. --memory-read NS adds namespaces to recall
(e.g. a frozen memory another model wrote), --memory-infer lets the model decide ADD, UPDATE,
DELETE or NOOP when consolidating, and --no-memory turns memory off.

Every event is checkpointed in DATA/runs.db: a run that was killed (or stopped with Ctrl-C)
continues with --resume ID, without repeating the operations it finished. The kernels are new: the
variables they can serialise (Python's picklable globals, Octave's save-able variables), saved
after each operation in the workspace's .labmate/state, are loaded back, the model is told which
names could not be, and files in the workspace remain.

The code the model writes runs in a workspace of its own, DATA/workspaces/run-ID (printed when the
run starts), the only place it can write; --workspace DIR lets it work in a directory of yours
instead (its .git and other dot-directories stay read-only to the code).

Caps: --max-turns model calls, --budget tokens, --timeout wall time. A run that hits one stops
cleanly with what it had established. Exit status: 0 answered, 3 stopped by a cap (partial
result), 1 failed (the provider or labmate), 130 interrupted, 2 could not start.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case resume != "" && len(args) > 0:
				return errors.New("--resume continues a run: give no TASK with it")
			case resume == "" && len(args) != 1:
				return errors.New(`give the task as one argument: labmate run "TASK" (or --resume ID)`)
			case resume == "" && strings.TrimSpace(args[0]) == "":
				return errors.New("the task is empty")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch agent.Mode(mode) {
			case agent.ModeAgent, agent.ModeDirect, agent.ModeCodeAct:
			default:
				return fmt.Errorf("--mode %q: choose agent, direct or codeact", mode)
			}
			if _, err := findKernel(kernelName); err != nil {
				return fmt.Errorf("--kernel: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			model, err := newModel(ctx, modelSpec)
			if err != nil {
				return err
			}
			if data, err = dataDir(data); err != nil {
				return err
			}
			store, err := agentsqlite.Open(filepath.Join(data, "runs.db"))
			if err != nil {
				return err
			}
			defer store.Close()
			if workspace == "" && resume != "" {
				// The resumed run works where it worked before: its files are there.
				st, err := store.Load(ctx, resume)
				if err != nil {
					return err
				}
				workspace = st.Task.Workspace
			}
			var runID string
			if workspace == "" {
				// Code a model writes works in a directory of its own, never the user's.
				runID = uuid.NewString()
				if workspace, err = runWorkspace(data, runID); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate run: workspace %s\n", workspace)
			}
			var sb kernel.Sandbox
			if mode != string(agent.ModeDirect) {
				s, err := sf.open()
				if err != nil {
					return err
				}
				sb = s
			}
			var mem agent.Memory
			var tools *tool.Set
			if !noMemory && mode == string(agent.ModeAgent) {
				ms, err := (&memoryFlags{store: memoryStore}).open(ctx)
				if err != nil {
					return err
				}
				defer ms.Close()
				opts := &learn.Options{Namespace: namespace, Model: model.Name()}
				if len(memoryRead) > 0 {
					opts.Read = append([]string{namespace}, memoryRead...)
				}
				if memoryInfer {
					opts.Infer = model
				}
				lm := learn.New(ms, opts)
				if tools, err = tool.NewSet(lm.Tools()...); err != nil {
					return err
				}
				mem = lm
			}
			if mode == string(agent.ModeAgent) {
				kt, closeDocs, err := agentKnowledgeTools()
				if err != nil {
					return err
				}
				defer closeDocs()
				if tools == nil {
					tools = &tool.Set{}
				}
				if err := tools.Add(kt...); err != nil {
					return err
				}
			}
			a, err := agent.New(model, &agent.Options{
				Memory: mem,
				Tools:  tools,
				StartKernel: func(ctx context.Context, name string) (kernel.Kernel, error) {
					kk, err := findKernel(name)
					if err != nil {
						return nil, err
					}
					if sb == nil {
						return nil, errors.New("no kernels in --mode direct")
					}
					return kk.start(ctx, &kernel.Options{Sandbox: sb, Workspace: workspace})
				},
				Store:       store,
				MaxTurns:    maxTurns,
				MaxRepairs:  maxRepairs,
				MaxReplans:  maxReplans,
				Budget:      budget,
				Timeout:     timeout,
				CellTimeout: cellTimeout,
			})
			if err != nil {
				return err
			}
			var events func(func(*agent.Event, error) bool)
			if resume != "" {
				events = a.Resume(ctx, resume)
			} else {
				events = a.Run(ctx, &agent.Task{ID: runID, Goal: args[0], Kernel: kernelName, Mode: agent.Mode(mode), Workspace: workspace})
			}
			var out eventPrinter = &textEvents{stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
			if asJSON {
				out = &jsonEvents{enc: json.NewEncoder(cmd.OutOrStdout())}
			}
			var last *agent.Stop
			for ev, err := range events {
				if err != nil {
					if last == nil { // failed before the run could start: nothing was printed
						return err
					}
					return exitError{1} // the stop event said why
				}
				if err := out.event(ev); err != nil {
					return err
				}
				if ev.Stop != nil {
					last = ev.Stop
				}
			}
			if last == nil {
				return exitError{2}
			}
			if stats {
				printStats(cmd.OutOrStdout(), last.Stats, asJSON)
			}
			switch last.Reason {
			case agent.StopAnswered:
				return nil
			case agent.StopError:
				return exitError{1}
			case agent.StopCancelled:
				return exitError{130}
			}
			return exitError{3}
		},
	}
	f := cmd.Flags()
	f.StringVarP(&modelSpec, "model", "m", "", "the model, e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, ollama:qwen3:8b (default $LABMATE_MODEL)")
	f.StringVarP(&kernelName, "kernel", "k", "python", "the kernel code runs in: python or octave")
	f.StringVar(&mode, "mode", string(agent.ModeAgent), "agent (plan, code, perceive, reflect), direct (no tools) or codeact (execute, then respond)")
	f.BoolVar(&asJSON, "json", false, "print every event as NDJSON to stdout")
	f.BoolVar(&stats, "stats", false, "print tokens and calls per module, hot-fixes, repairs and re-plans at the end")
	f.StringVar(&resume, "resume", "", "continue the run with this id from its last checkpoint")
	f.IntVar(&maxTurns, "max-turns", 40, "most model calls in the run")
	f.IntVar(&maxRepairs, "max-repairs", 3, "repairs of a failed or interrupted step before re-planning")
	f.IntVar(&maxReplans, "max-replans", 2, "re-plans before giving up")
	f.Int64Var(&budget, "budget", 0, "most tokens (input+output) the run may spend; 0: no limit")
	f.DurationVar(&timeout, "timeout", 0, "wall-time limit of the run, e.g. 10m; 0: none")
	f.DurationVar(&cellTimeout, "cell-timeout", 5*time.Minute, "default wall-time limit of one cell")
	f.StringVar(&workspace, "workspace", "", "the kernels' working directory, the only writable one (default: a new DATA/workspaces/run-ID, printed)")
	f.StringVar(&memoryStore, "memory-store", defaultMemoryStore(), "memory: a SQLite file or a postgres:// URL (env LABMATE_MEMORY)")
	f.StringVar(&namespace, "namespace", "user", "the memory namespace recalled and written (skills go to NAMESPACE/skills)")
	f.BoolVar(&noMemory, "no-memory", false, "neither recall from nor write to memory")
	f.StringSliceVar(&memoryRead, "memory-read", nil, "more memory namespaces to recall from (e.g. a frozen one another model wrote); repeatable")
	f.BoolVar(&memoryInfer, "memory-infer", false, "consolidate what runs teach with the model deciding ADD, UPDATE, DELETE or NOOP (default: deterministic)")
	f.StringVar(&data, "data", "", "data directory holding runs.db (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	sf.add(cmd)
	return cmd
}

type eventPrinter interface {
	event(ev *agent.Event) error
}

type jsonEvents struct{ enc *json.Encoder }

func (p *jsonEvents) event(ev *agent.Event) error { return p.enc.Encode(ev) }

// textEvents prints a run as a person follows it: progress on stderr, the answer on stdout.
type textEvents struct {
	stdout, stderr io.Writer
}

func (p *textEvents) event(ev *agent.Event) error {
	w := p.stderr
	switch ev.Type {
	case agent.EventStart:
		verb := "run"
		if ev.Start.Resumed {
			verb = "resuming run"
		}
		fmt.Fprintf(w, "labmate: %s %s with %s (%s, %s kernel)\n", verb, ev.RunID, ev.Start.Model, ev.Start.Task.Mode, ev.Start.Task.Kernel)
	case agent.EventMemory:
		fmt.Fprintf(w, "memory: %s\n", firstLine(ev.Memory))
	case agent.EventPlan:
		fmt.Fprintf(w, "plan: %s\n", ev.Plan.Goal)
		for i, s := range ev.Plan.Steps {
			fmt.Fprintf(w, "  %d. %s [%s] — check: %s\n", i+1, s.Title, s.Tool, s.Checkpoint)
		}
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
			fmt.Fprintf(w, "  %s after %.2fs: %s\n", t.Operation.Reason, t.Operation.DurationS, firstLine(t.Operation.Error))
		case t.IsError:
			fmt.Fprintf(w, "  %s rejected: %s\n", t.Name, firstLine(t.Content))
		}
	case agent.EventKernelState:
		fmt.Fprintf(w, "kernel state: %s\n", ev.KernelState.Summary())
	case agent.EventReflection:
		f := ev.Reflection
		fmt.Fprintf(w, "reflect: step %d: %s — %s\n", ev.Step+1, f.Decision, firstLine(f.Reasons))
	case agent.EventAnswer:
		fmt.Fprintln(p.stdout, ev.Answer.Text)
	case agent.EventStop:
		s := ev.Stop
		switch s.Reason {
		case agent.StopAnswered:
			fmt.Fprintf(w, "labmate: answered in %s (%d model calls, %d operations, %d hot-fixes, %d re-plans)\n",
				s.Stats.Elapsed.Round(time.Millisecond), s.Stats.Turns, s.Stats.Operations, s.Stats.HotFixes, s.Stats.Replans)
		case agent.StopCancelled:
			fmt.Fprintf(w, "labmate: interrupted; continue with: labmate run --resume %s\n", ev.RunID)
		default:
			fmt.Fprintf(w, "labmate: stopped (%s)", s.Reason)
			if s.Error != "" {
				fmt.Fprintf(w, ": %s", s.Error)
			}
			fmt.Fprintln(w)
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

// printStats prints tokens and calls per module.
func printStats(w io.Writer, s agent.Stats, asJSON bool) {
	if asJSON {
		json.NewEncoder(w).Encode(map[string]any{"stats": s})
		return
	}
	var total int64
	for _, m := range s.Modules {
		total += m.Total()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODULE\tCALLS\tINPUT\tOUTPUT\tTOTAL\t%\t")
	var calls int
	var in, outT int64
	for _, m := range s.Modules {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(m.Total()) / float64(total)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t\n", m.Module, m.Calls, m.InputTokens, m.OutputTokens, m.Total(), pct)
		calls += m.Calls
		in += m.InputTokens
		outT += m.OutputTokens
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t100.0\t\n", calls, in, outT, total)
	tw.Flush()
	fmt.Fprintf(w, "operations %d, hot-fixes %d, repairs %d, re-plans %d, cells stopped by memory's guardrails %d, wall time %s\n",
		s.Operations, s.HotFixes, s.Repairs, s.Replans, s.Guarded, s.Elapsed.Round(time.Millisecond))
}

// runWorkspace makes (or finds, on resume) the workspace of agent run id: DATA/workspaces/run-ID,
// readable by its owner only.
func runWorkspace(data, id string) (string, error) {
	ws := filepath.Join(data, "workspaces", "run-"+id)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return ws, nil
}

// agentRuns is labmate serve's server.RunFunc: each run gets a fresh agent with its own
// workspace, DATA/workspaces/run-ID, the server's memory (namespace user) and documentation
// index with the same tools as labmate run, and is checkpointed in store. It is nil when no model is
// configured (--model, $LABMATE_MODEL or the config file): the server then runs no agent.
func agentRuns(ctx context.Context, spec string, sb kernel.Sandbox, data string, store agent.Store, mem memory.Store, docs knowledge.Index) (server.RunFunc, error) {
	if spec == "" && os.Getenv("LABMATE_MODEL") == "" {
		cfg, err := loadConfig()
		if err != nil {
			return nil, err
		}
		if cfg.Model == "" {
			return nil, nil
		}
	}
	model, err := newModel(ctx, spec)
	if err != nil {
		return nil, err
	}
	kcfg, err := knowledgeFromEnv(docs)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
		var mem2 agent.Memory
		var mt []tool.Tool
		if mem != nil {
			lm := learn.New(mem, &learn.Options{Namespace: "user", Model: model.Name()})
			mem2, mt = lm, lm.Tools()
		}
		tools, err := tool.NewSet(append(mt, ktools.New(kcfg)...)...)
		if err != nil {
			return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
		}
		a, err := agent.New(model, &agent.Options{
			Memory: mem2,
			Tools:  tools,
			StartKernel: func(ctx context.Context, name string) (kernel.Kernel, error) {
				kk, err := findKernel(name)
				if err != nil {
					return nil, err
				}
				ws, err := runWorkspace(data, task.ID)
				if err != nil {
					return nil, err
				}
				return kk.start(ctx, &kernel.Options{Sandbox: sb, Workspace: ws})
			},
			Store: store,
		})
		if err != nil {
			return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
		}
		return a.Run(ctx, task)
	}, nil
}
