package eval_test

import (
	"context"
	"iter"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
)

// instant is a model in process that answers every request at once: what a trial costs
// with it is the harness's cost.
type instant struct{}

func (instant) Name() string { return "instant:42" }

func (instant) Stream(ctx context.Context, req *llm.Request) iter.Seq2[*llm.Chunk, error] {
	return func(yield func(*llm.Chunk, error) bool) {
		yield(&llm.Chunk{Text: "42", Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "42"},
			Usage: llm.Usage{InputTokens: 12, OutputTokens: 1}, StopReason: llm.StopEnd}}, nil)
	}
}

// BenchmarkTrialOverhead is the harness's cost per trial, the model excluded: harness runs
// b.N trials of one item in direct mode with the instant model — a fresh agent run each,
// graded, appended and synced to trials.jsonl, the summary and its plots written once at the
// end —; model calls the same model directly, b.N times. Both report ns per trial.
func BenchmarkTrialOverhead(b *testing.B) {
	ctx := context.Background()
	q := &quiz{items: []eval.Item{{ID: "q6", Goal: "What is 6 * 7?"}}}
	b.Run("harness", func(b *testing.B) {
		opts := &eval.Options{Model: instant{}, Mode: agent.ModeDirect, Out: b.TempDir(), K: b.N}
		b.ResetTimer()
		s, err := eval.Run(ctx, q, opts)
		if err != nil || s.All.Trials != b.N || s.All.PassRate != 1 {
			b.Fatalf("%v: %+v", err, s)
		}
	})
	b.Run("model", func(b *testing.B) {
		req := &llm.Request{Module: "direct", Messages: []llm.Message{{Role: llm.RoleUser, Content: q.items[0].Goal}}}
		for range b.N {
			if _, err := llm.Generate(ctx, instant{}, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
