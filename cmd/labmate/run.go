package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/agent/report"
	"github.com/labmate/labmate/job"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/memory/builtin"
	"github.com/labmate/labmate/runner/locallog"
	"github.com/labmate/labmate/tool"
)

func newRunCmd() *cobra.Command {
	var (
		modelSpec, kernelName, mode, resume, workspace, data string
		memoryStore, namespace                               string
		memoryRead                                           []string
		asJSON, stats, noMemory, memoryInfer, waitJobs       bool
		maxTurns, maxRepairs, maxReplans                     int
		budget                                               int64
		timeout, cellTimeout                                 time.Duration
		sf                                                   sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   `run [flags] "TASK" | run --resume ID`,
		Short: "Solve a task with the agent: plan, run code in live kernels, watch, repair, reflect, answer",
		Long:  runLong,
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
			ctx, stop := interruptible(cmd)
			defer stop()
			dir, err := dataDir(data)
			if err != nil {
				return err
			}
			runID := resume
			if runID == "" {
				runID = uuid.NewString()
			}
			rl, release, err := locallog.OwnRun(dir, runID, locallog.ResumeCommand(dir, runID), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer release()
			importOld(ctx, dir, rl.Log(), cmd.ErrOrStderr())
			// The run's checkpoints are events of its stream.
			store := agent.NewCheckpoints(rl.Log())
			var parkedOn string // the job a resumed run is parked on
			if resume != "" {
				st, err := store.Load(ctx, resume)
				if err != nil {
					return err
				}
				if st.Parked != nil && st.Stop != nil && st.Stop.Reason == agent.StopParked {
					parkedOn = st.Parked.Job
				}
				if workspace == "" { // the resumed run works where it worked before: its files are there
					workspace = st.Task.Workspace
				}
				if modelSpec == "" { // and with the model it worked with
					modelSpec = st.Model
				}
			}
			model, err := providers.NewModel(ctx, modelSpec)
			if err != nil {
				return err
			}
			if workspace == "" {
				// Code a model writes works in a directory of its own, never the user's.
				if workspace, err = runWorkspace(dir, runID); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate run: workspace %s\n", workspace)
			}
			var sb kernel.Sandbox
			var cells agent.Cells // the run's cells are operations of its session (runCells)
			out := report.NewText(cmd.OutOrStdout(), cmd.ErrOrStderr())
			if asJSON {
				out = report.NewJSON(cmd.OutOrStdout())
			}
			if mode != string(agent.ModeDirect) {
				s, err := sf.open()
				if err != nil {
					return err
				}
				sb = s
				show := func(ev *agent.Event) {
					if err := out.Event(ev); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "labmate run: %v\n", err)
					}
				}
				c, done, err := runCells(ctx, rl, runID, s, dir, stop, show, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer done()
				cells = c
			}
			var mem agent.Memory
			var tools *tool.Set
			if !noMemory && mode == string(agent.ModeAgent) {
				ms, err := (&memoryFlags{store: memoryStore}).open(ctx)
				if err != nil {
					return err
				}
				defer ms.Close()
				if _, err := builtin.Ensure(ctx, ms, "labmate"); err != nil { // the library, on first use
					fmt.Fprintf(cmd.ErrOrStderr(), "labmate: the built-in skill library was not imported: %v\n", err)
				}
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
			var jobs job.Schedulers
			if mode == string(agent.ModeAgent) || parkedOn != "" {
				// Queued local jobs start while this holds the job directory open.
				js, closeJobs := (&jobDirs{data: dir}).serving(cmd, "run")
				defer closeJobs()
				if js != nil {
					jobs = js
					if tools == nil {
						tools = &tool.Set{}
					}
					if err := tools.Add(jobtools.Tools(jobs, &jobtools.Options{Workspace: workspace, Confine: true})...); err != nil {
						return err
					}
				}
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
				if err := tools.Add(append(kt, benchTools(sb, func() (string, error) { return workspace, nil })...)...); err != nil {
					return err
				}
			}
			a, err := agent.New(model, &agent.Options{
				Memory: mem,
				Tools:  tools,
				Cells:  cells,
				StartKernel: func(context.Context, string) (kernel.Kernel, error) {
					return nil, errors.New("no kernels in --mode direct")
				},
				Store:       store,
				Jobs:        jobs,
				MaxTurns:    maxTurns,
				MaxRepairs:  maxRepairs,
				MaxReplans:  maxReplans,
				Budget:      budget,
				Timeout:     timeout,
				CellTimeout: cellTimeout,
				Artifacts:   dataArtifacts(cmd.ErrOrStderr(), dir, "run"),
			})
			if err != nil {
				return err
			}
			var events func(func(*agent.Event, error) bool)
			if resume != "" {
				if err := waitForJob(ctx, cmd, jobs, parkedOn); err != nil {
					return err
				}
				events = rl.Logged(ctx, a.Resume(ctx, resume), true)
			} else {
				events = rl.Logged(ctx, a.Run(ctx, &agent.Task{ID: runID, Goal: args[0], Kernel: kernelName, Mode: agent.Mode(mode), Workspace: workspace}), false)
			}
			var last *agent.Stop
			for {
				last = nil
				for ev, err := range events {
					if err != nil {
						if last == nil { // failed before the run could start: nothing was printed
							return err
						}
						if stats { // what the run spent before it failed
							report.Stats(cmd.OutOrStdout(), last.Stats, asJSON)
						}
						return exitError{1} // the stop event said why
					}
					if err := out.Event(ev); err != nil {
						return err
					}
					if ev.Stop != nil {
						last = ev.Stop
					}
				}
				if last == nil {
					return exitError{2}
				}
				if last.Reason != agent.StopParked {
					break
				}
				if !waitJobs {
					fmt.Fprintf(cmd.ErrOrStderr(), "labmate run: run %s is parked until job %s ends; continue it with: labmate run --resume %s "+
						"(it waits for the job, then the run goes on with its outcome), or run with --wait-jobs to wait here\n", runID, last.Job, runID)
					return exitError{4}
				}
				if err := waitForJob(ctx, cmd, jobs, last.Job); err != nil {
					return err
				}
				events = rl.Logged(ctx, a.Resume(ctx, runID), true)
			}
			if stats {
				if err := report.Stats(cmd.OutOrStdout(), last.Stats, asJSON); err != nil {
					return err
				}
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
	f.BoolVar(&waitJobs, "wait-jobs", false, "when the run parks on a job it submitted, wait here for the job's end and go on (default: exit 4; --resume continues it)")
	f.StringVar(&resume, "resume", "", "continue the run with this id from its last checkpoint (with its model unless --model is given)")
	f.IntVar(&maxTurns, "max-turns", 40, "most model calls in the run")
	f.IntVar(&maxRepairs, "max-repairs", 3, "repairs of a failed or interrupted step before re-planning")
	f.IntVar(&maxReplans, "max-replans", 2, "re-plans before giving up")
	f.Int64Var(&budget, "budget", 0, "most tokens (input+output) the run may spend; 0: no limit")
	f.DurationVar(&timeout, "timeout", 0, "wall-time limit of the run, e.g. 10m; 0: none")
	f.DurationVar(&cellTimeout, "cell-timeout", 5*time.Minute, "default wall-time limit of one cell")
	f.StringVar(&workspace, "workspace", "", "the kernels' working directory, the only writable one (default: a new DATA/workspaces/run-ID, printed)")
	f.StringVar(&memoryStore, "memory-store", defaultMemoryStore(), "memory: a SQLite file or a postgres:// URL (env LABMATE_MEMORY)")
	f.StringVarP(&namespace, "namespace", "n", "user", "the memory namespace recalled and written (skills go to NAMESPACE/skills)")
	f.BoolVar(&noMemory, "no-memory", false, "neither recall from nor write to memory")
	f.StringSliceVar(&memoryRead, "memory-read", nil, "more memory namespaces to recall from (e.g. a frozen one another model wrote); repeatable")
	f.BoolVar(&memoryInfer, "memory-infer", false, "consolidate what runs teach with the model deciding ADD, UPDATE, DELETE or NOOP (default: deterministic)")
	f.StringVar(&data, "data", "", logDataHelp)
	sf.add(cmd)
	cmd.AddCommand(newRunListCmd(), newRunShowCmd())
	return cmd
}
