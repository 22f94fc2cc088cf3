package eval_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
)

// recalling is agent/learn's memory, counting its recalls.
type recalling struct {
	*learn.Memory
	n atomic.Int32
}

func (r *recalling) Recall(ctx context.Context, q *agent.RecallQuery) (*agent.Recollection, error) {
	r.n.Add(1)
	return r.Memory.Recall(ctx, q)
}

// Trials in agent mode on a real, sandboxed Python kernel: with memory (recalled before the
// plan and the step); without memory and reflection (no recall, no reflect call); and the
// codeact baseline, stopped at its 5 turns and not graded.
func TestAgentModes(t *testing.T) {
	q := &quiz{items: []eval.Item{{ID: "q6", Group: "even", Goal: "What is 6 * 7?", Kernel: "python"}}}
	kernels := testutil.Kernels(t)
	var runs []string
	start := func(ctx context.Context, runID, name string) (kernel.Kernel, error) {
		runs = append(runs, runID)
		return kernels(ctx, name)
	}
	store, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mem := &recalling{Memory: learn.New(store, nil)}
	plan := agenttest.Plan("compute", "compute 6 * 7 and print it", "the product is printed")
	cell := agenttest.RunCode("print(6 * 7)")
	accept := llmtest.JSON(map[string]string{"decision": "accept", "reasons": "42 is printed", "summary": "6 * 7 = 42"})
	for _, tc := range []struct {
		name, mode string
		opts       eval.Options
		script     []llmtest.Turn
		modules    []string
		check      func(t *testing.T, tr *eval.Trial)
	}{
		{"memory", "agent", eval.Options{Memory: mem}, []llmtest.Turn{plan, cell, accept, agenttest.FinalAnswer("42")}, []string{"plan", "code", "reflect"},
			func(t *testing.T, tr *eval.Trial) {
				if mem.n.Load() != 2 {
					t.Errorf("%d recalls, want 2 (before the plan and its step)", mem.n.Load())
				}
			}},
		{"ablations", "agent+no-reflect+no-memory", eval.Options{Memory: mem, NoMemory: true, NoReflect: true}, []llmtest.Turn{plan, cell, agenttest.FinalAnswer("42")}, []string{"plan", "code"},
			func(t *testing.T, tr *eval.Trial) {
				if mem.n.Load() != 2 {
					t.Errorf("%d recalls, want the first run's 2 only", mem.n.Load())
				}
			}},
		{"codeact", "codeact", eval.Options{Mode: agent.ModeCodeAct}, []llmtest.Turn{cell, cell, cell, cell, cell}, []string{"codeact"},
			func(t *testing.T, tr *eval.Trial) {
				if tr.Stop != string(agent.StopTurns) || tr.Turns != 5 || tr.Operations != 5 || tr.Passed || tr.Details["error"] == nil {
					t.Errorf("codeact trial %+v, want stopped after 5 turns of 5 cells, not graded", tr)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.script...)
			opts := tc.opts
			opts.Model = openai.New("agentic", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()})
			opts.Out, opts.StartKernel = t.TempDir(), start
			runs = nil
			s, err := eval.Run(context.Background(), q, &opts)
			if err != nil {
				t.Fatal(err)
			}
			trials, _, err := eval.ReadTrials(opts.Out)
			if err != nil || len(trials) != 1 {
				t.Fatalf("%d trials, %v", len(trials), err)
			}
			tr := trials[0]
			var mods []string
			var tokens int64
			for _, m := range tr.Modules {
				mods = append(mods, m.Module)
				tokens += m.Total()
			}
			if tr.Mode != tc.mode || s.Mode != tc.mode || !slices.Equal(mods, tc.modules) || tr.Tokens != tokens || tr.Tokens == 0 {
				t.Errorf("mode %q, modules %v, tokens %d (of %d); want %q, %v", tr.Mode, mods, tr.Tokens, tokens, tc.mode, tc.modules)
			}
			if len(runs) != 1 || runs[0] != tr.RunID {
				t.Errorf("kernels started for runs %v; the trial's run is %s", runs, tr.RunID)
			}
			if tc.mode != "codeact" && (!tr.Passed || tr.Operations != 1 || tr.Stop != string(agent.StopAnswered) || tr.Answer != "42") {
				t.Errorf("trial %+v, want one operation and 42, passed", tr)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted turns left", srv.Remaining())
			}
			tc.check(t, tr)
		})
	}
}
