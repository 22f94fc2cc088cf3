package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/knowledge"
	ktools "github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/memory"
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

// resumeCommand is the command that continues agent run id of labmate serve from its
// checkpoint, in its workspace (server.Config.ResumeCommand).
func resumeCommand(data, id string) string {
	return fmt.Sprintf("labmate run --resume %s --data %s", id, data)
}

// agentRuns is labmate serve's server.RunFunc: each run gets a fresh agent with its own
// workspace, DATA/workspaces/run-ID, the server's memory (namespace user) and documentation
// index with the same tools as labmate run, and is checkpointed in store. It is nil when no model is
// configured (--model, $LABMATE_MODEL or the config file): the server then runs no agent.
func agentRuns(ctx context.Context, spec string, sb kernel.Sandbox, data string, store agent.Store, mem memory.Store, docs knowledge.Index) (server.RunFunc, string, error) {
	model, err := providers.OptionalModel(ctx, spec)
	if model == nil || err != nil {
		return nil, "", err
	}
	kcfg, err := knowledgeFromEnv(docs)
	if err != nil {
		return nil, "", err
	}
	return func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
		// Kept with the checkpoint: labmate run --resume continues the run where its files are.
		task.Workspace = runWorkspaceDir(data, task.ID)
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
				ws, err := runWorkspace(data, task.ID)
				if err != nil {
					return nil, err
				}
				return startKernel(ctx, name, sb, ws)
			},
			Store: store,
		})
		if err != nil {
			return func(yield func(*agent.Event, error) bool) { yield(nil, err) }
		}
		return a.Run(ctx, task)
	}, model.Name(), nil
}
