package llm_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/labmate/labmate/llm"
)

// fixed answers every request with the same usage. It never leaves the process: the meter is
// pure bookkeeping, and the adapters are tested over real HTTP in their own packages.
type fixed struct{ usage llm.Usage }

func (fixed) Name() string { return "fixed:test" }

func (f fixed) Stream(context.Context, *llm.Request) iter.Seq2[*llm.Chunk, error] {
	return func(yield func(*llm.Chunk, error) bool) {
		if yield(&llm.Chunk{Text: "ok"}, nil) {
			yield(&llm.Chunk{Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}, Usage: f.usage}}, nil)
		}
	}
}

func TestMeter(t *testing.T) {
	m := llm.NewMeter(fixed{llm.Usage{InputTokens: 60, OutputTokens: 40}}, 250)
	ctx := context.Background()
	for i, module := range []string{"plan", "code", "code"} {
		_, err := llm.Generate(ctx, m, &llm.Request{Module: module})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// 300 tokens spent ≥ 250: the next call is refused before it reaches the model.
	if _, err := llm.Generate(ctx, m, &llm.Request{Module: "code"}); !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("call over budget: err = %v; want ErrBudget", err)
	}
	mods := m.Modules()
	if len(mods) != 2 || mods[0].Module != "code" || mods[0].Calls != 2 || mods[0].Total() != 200 || mods[1].Calls != 1 {
		t.Errorf("Modules = %+v", mods)
	}
	if m.Total().Total() != 300 || m.Remaining() != 0 {
		t.Errorf("Total = %v, Remaining = %d", m.Total(), m.Remaining())
	}
}

func TestAPIError(t *testing.T) {
	err := error(&llm.APIError{Kind: llm.ErrRateLimited, Provider: "openai", Status: 429, Message: "slow down"})
	if !llm.Retryable(err) || !errors.Is(err, llm.ErrRateLimited) {
		t.Errorf("a 429 is not retryable: %v", err)
	}
	if got, want := err.Error(), "llm: rate limited: openai (HTTP 429): slow down"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
	if llm.Retryable(&llm.APIError{Kind: llm.ErrAuth}) {
		t.Error("an auth failure is retryable")
	}
}
