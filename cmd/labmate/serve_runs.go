package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/job"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/knowledge"
	ktools "github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/tool"
)

// runWorkspace makes (or finds, on resume) the workspace of agent run id: DATA/workspaces/run-ID,
// readable by its owner only.
func runWorkspace(data, id string) (string, error) {
	ws := runWorkspaceDir(data, id)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return ws, nil
}

// runWorkspaceDir is the workspace of agent run id: DATA/workspaces/run-ID.
func runWorkspaceDir(data, id string) string { return filepath.Join(data, "workspaces", "run-"+id) }

// serveAgent runs labmate serve's agent runs (runner.Agents): each run gets
// an agent of its own, built by one construction whether it starts or resumes, with the run's
// workspace, DATA/workspaces/run-ID, the server's memory (namespace user) and documentation
// index with the same tools as labmate run, checkpointed in the run store.
type serveAgent struct {
	model llm.Model
	kcfg  *ktools.Config
	sb    kernel.Sandbox
	data  string
	store agent.Store
	mem   memory.Store
	// jobs, when set, give each run the job tools, its jobs confined to its workspace, and
	// wait_job, which parks the run until the job ends (the server resumes it then).
	jobs job.Schedulers
	// srv, once the server is up, gives a run's job tools its schedulers (server.Server.JobsIn):
	// the jobs are then operations of the log, watched by perception. Before (runs the server
	// resumes as it starts), they are submitted directly and the server adopts them.
	srv atomic.Pointer[server.Server]
	// artifacts keeps the artifacts of the runs' cells (the server's store); nil: none kept.
	artifacts *artifact.Store
	// up is closed once srv is set: the runs' cells are operations of the server's runner
	// (runner.Runner.Cells), and a run the server resumes as it starts waits for it.
	up     chan struct{}
	upOnce sync.Once
}

// serving records the server the runs run their cells in.
func (s *serveAgent) serving(srv *server.Server) {
	s.srv.Store(srv)
	s.upOnce.Do(func() { close(s.up) })
}

// cells is the server's runner as agent.Cells, once the server is up.
type cells struct{ s *serveAgent }

func (c cells) runner(ctx context.Context) (agent.Cells, error) {
	select {
	case <-c.s.up:
		return c.s.srv.Load().Cells(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("the server did not start: %w", ctx.Err())
	}
}

func (c cells) Exec(ctx context.Context, cell *agent.CellRun) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		r, err := c.runner(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		for m, err := range r.Exec(ctx, cell) {
			if !yield(m, err) {
				return
			}
		}
	}
}

func (c cells) Kernel(ctx context.Context, session, workspace, name string) (kernel.Kernel, error) {
	r, err := c.runner(ctx)
	if err != nil {
		return nil, err
	}
	return r.Kernel(ctx, session, workspace, name)
}

// keeper is the runs' artifact store as an operation.Keeper: nil when there is none.
func (s *serveAgent) keeper() operation.Keeper {
	if s.artifacts == nil {
		return nil
	}
	return s.artifacts
}

// agentRuns is labmate serve's agent. It is nil when no model is configured (--model,
// $LABMATE_MODEL or the config file): the server then runs no agent.
func agentRuns(ctx context.Context, spec string, sb kernel.Sandbox, data string, store agent.Store, mem memory.Store, docs knowledge.Index) (*serveAgent, error) {
	model, err := providers.OptionalModel(ctx, spec, os.Stderr)
	if model == nil || err != nil {
		return nil, err
	}
	kcfg, err := knowledgeFromEnv(docs)
	if err != nil {
		return nil, err
	}
	return &serveAgent{model: model, kcfg: kcfg, sb: sb, data: data, store: store, mem: mem, up: make(chan struct{})}, nil
}

// Model names the runs' model.
func (s *serveAgent) Model() string { return s.model.Name() }

// Run runs task in its workspace, DATA/workspaces/run-ID.
func (s *serveAgent) Run(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
	// Kept with the checkpoint: labmate run --resume continues the run where its files are.
	task.Workspace = runWorkspaceDir(s.data, task.ID)
	if _, err := runWorkspace(s.data, task.ID); err != nil {
		return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
	}
	a, err := s.agent(task.ID)
	if err != nil {
		return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
	}
	return a.Run(ctx, task) // the run's session serves the bench where its kernels work
}

// Resume continues run id from its checkpoint, in its workspace, with
// the server's model.
func (s *serveAgent) Resume(ctx context.Context, id string) iter.Seq2[*agent.Event, error] {
	a, err := s.agent(id)
	if err != nil {
		return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
	}
	return a.Resume(ctx, id)
}

// agent builds the agent of run id.
func (s *serveAgent) agent(id string) (*agent.Agent, error) {
	var mem agent.Memory
	var mt []tool.Tool
	if s.mem != nil {
		lm := learn.New(s.mem, &learn.Options{Namespace: "user", Model: s.model.Name()})
		mem, mt = lm, lm.Tools()
	}
	bt := benchTools(s.sb, func() (string, error) { return runWorkspace(s.data, id) })
	tools, err := tool.NewSet(append(append(mt, ktools.New(s.kcfg)...), bt...)...)
	if err != nil {
		return nil, err
	}
	if s.jobs != nil {
		ws, err := runWorkspace(s.data, id)
		if err != nil {
			return nil, err
		}
		jobs := s.jobs
		if srv := s.srv.Load(); srv != nil {
			jobs = srv.JobsIn(ws)
		}
		if err := tools.Add(jobtools.Tools(jobs, &jobtools.Options{Workspace: ws, Confine: true})...); err != nil {
			return nil, err
		}
	}
	return agent.New(s.model, &agent.Options{
		Memory:    mem,
		Tools:     tools,
		Cells:     cells{s}, // in the run's session, DATA/workspaces/run-ID its workspace (Task.Workspace)
		Store:     s.store,
		Jobs:      s.jobs,
		Artifacts: s.keeper(),
	})
}
