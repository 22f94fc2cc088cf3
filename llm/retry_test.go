package llm_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/anthropic"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

// flaky fails its first calls with errs[i], then answers. It stays in the process so the timing
// can run on synctest's clock; the retries over real HTTP are tested below against llmtest.
type flaky struct {
	errs  []error
	calls atomic.Int32
	// midStream, when set, yields a delta before failing.
	midStream bool
	// hang blocks each failing call until its context ends.
	hang bool
}

func (*flaky) Name() string { return "flaky:test" }

func (f *flaky) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[*llm.Chunk, error] {
	return func(yield func(*llm.Chunk, error) bool) {
		n := int(f.calls.Add(1)) - 1
		if n < len(f.errs) {
			if f.hang {
				<-ctx.Done()
				yield(nil, ctx.Err())
				return
			}
			if f.midStream && !yield(&llm.Chunk{Text: "partial"}, nil) {
				return
			}
			yield(nil, f.errs[n])
			return
		}
		if yield(&llm.Chunk{Text: "ok"}, nil) {
			yield(&llm.Chunk{Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}}}, nil)
		}
	}
}

func rateLimited(after time.Duration) error {
	return &llm.APIError{Kind: llm.ErrRateLimited, Provider: "test", Status: 429, RetryAfter: after}
}

var down = &llm.APIError{Kind: llm.ErrUnavailable, Provider: "test", Status: 503}

func TestRetryTiming(t *testing.T) {
	for _, tc := range []struct {
		name           string
		model          *flaky
		opts           *llm.RetryOptions
		wantErr        error
		calls          int
		minWait, maxWt time.Duration
	}{
		{"Retry-After honoured", &flaky{errs: []error{rateLimited(3 * time.Second)}}, nil, nil, 2, 3 * time.Second, 3 * time.Second},
		{"Retry-After capped", &flaky{errs: []error{rateLimited(time.Hour)}}, &llm.RetryOptions{MaxRetryAfter: 5 * time.Second}, nil, 2, 5 * time.Second, 5 * time.Second},
		// backoff 1s, 2s, 4s, each jittered into [d/2, d]
		{"exponential backoff then give up", &flaky{errs: []error{down, down, down, down}}, nil, llm.ErrUnavailable, 4, 3500 * time.Millisecond, 7 * time.Second},
		{"backoff capped", &flaky{errs: []error{down, down, down}}, &llm.RetryOptions{BaseDelay: 10 * time.Second, MaxDelay: 12 * time.Second}, nil, 4, 17 * time.Second, 34 * time.Second},
		{"not retryable", &flaky{errs: []error{&llm.APIError{Kind: llm.ErrAuth, Status: 401}}}, nil, llm.ErrAuth, 1, 0, 0},
		{"failed after the answer started", &flaky{errs: []error{down}, midStream: true}, nil, llm.ErrUnavailable, 1, 0, 0},
		{"attempt timeout", &flaky{errs: []error{nil}, hang: true}, &llm.RetryOptions{Timeout: 20 * time.Second}, nil, 2, 20*time.Second + 500*time.Millisecond, 21 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := llm.WithRetry(tc.model, tc.opts)
				start := time.Now()
				resp, err := llm.Generate(context.Background(), m, &llm.Request{})
				took := time.Since(start)
				if tc.wantErr == nil && (err != nil || resp.Message.Content != "ok") {
					t.Fatalf("err = %v; want the answer after retrying", err)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v; want %v", err, tc.wantErr)
				}
				if got := int(tc.model.calls.Load()); got != tc.calls {
					t.Errorf("%d calls; want %d", got, tc.calls)
				}
				if took < tc.minWait || took > tc.maxWt {
					t.Errorf("took %v; want between %v and %v", took, tc.minWait, tc.maxWt)
				}
			})
		})
	}
}

func TestRetryGivesUpWithAClearError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := llm.Generate(context.Background(), llm.WithRetry(&flaky{errs: []error{down, down}}, &llm.RetryOptions{MaxAttempts: 2}), &llm.Request{})
		if err == nil || !strings.Contains(err.Error(), "gave up after 2 attempts") || !strings.Contains(err.Error(), "HTTP 503") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestRetryStopsWaitingOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err := llm.Generate(ctx, llm.WithRetry(&flaky{errs: []error{rateLimited(time.Minute)}}, nil), &llm.Request{})
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, llm.ErrRateLimited) {
			t.Errorf("err = %v; want the deadline, naming the rate limit it was waiting out", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("gave up after %v; want 2s", d)
		}
	})
}

// fast retries quickly so the HTTP tests take milliseconds.
var fast = &llm.RetryOptions{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

// TestRetryOverHTTP runs the retry policy against the fake provider in both wire formats.
func TestRetryOverHTTP(t *testing.T) {
	hi := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for _, f := range []llmtest.Format{llmtest.OpenAI, llmtest.Anthropic} {
		newModel := func(srv *llmtest.Server) llm.Model {
			if f == llmtest.OpenAI {
				return openai.New("gpt-test", &openai.Options{BaseURL: srv.OpenAIBaseURL()})
			}
			return anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL()})
		}
		t.Run(string(f), func(t *testing.T) {
			t.Run("429 then success", func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.Turn{Status: 429, ErrorMessage: "slow down", RetryAfter: 80 * time.Millisecond}, llmtest.Text("answer"))
				start := time.Now()
				resp, err := llm.Generate(context.Background(), llm.WithRetry(newModel(srv), fast), hi)
				if err != nil || resp.Message.Content != "answer" {
					t.Fatalf("resp %v, err %v", resp, err)
				}
				if d := time.Since(start); d < 80*time.Millisecond {
					t.Errorf("retried after %v; the provider asked for 80ms", d)
				}
				if n := len(srv.Calls()); n != 2 {
					t.Errorf("%d calls", n)
				}
			})
			t.Run("500s until give-up", func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.Fail(500, "boom"), llmtest.Fail(502, "boom"), llmtest.Turn{Drop: llmtest.DropBeforeReply}, llmtest.Fail(503, "boom"))
				_, err := llm.Generate(context.Background(), llm.WithRetry(newModel(srv), fast), hi)
				if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "gave up after 4 attempts") {
					t.Errorf("err = %v", err)
				}
				if srv.Remaining() != 0 {
					t.Errorf("%d turns unused", srv.Remaining())
				}
			})
			t.Run("provider down", func(t *testing.T) {
				srv := llmtest.NewServer(t)
				m := llm.WithRetry(newModel(srv), fast)
				srv.Close()
				_, err := llm.Generate(context.Background(), m, hi)
				if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "gave up after 4 attempts") || !strings.Contains(err.Error(), "refused") {
					t.Errorf("err = %v; want a clear unavailable error", err)
				}
			})
			t.Run("bad key not retried", func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.Fail(401, "invalid x-api-key"))
				_, err := llm.Generate(context.Background(), llm.WithRetry(newModel(srv), fast), hi)
				if !errors.Is(err, llm.ErrAuth) || len(srv.Calls()) != 1 {
					t.Errorf("err = %v after %d calls", err, len(srv.Calls()))
				}
			})
			t.Run("cut stream not retried", func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.Turn{Text: strings.Repeat("long answer ", 8), Drop: llmtest.DropMidStream}, llmtest.Text("never"))
				_, err := llm.Generate(context.Background(), llm.WithRetry(newModel(srv), fast), hi)
				if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "not retried") || len(srv.Calls()) != 1 {
					t.Errorf("err = %v after %d calls", err, len(srv.Calls()))
				}
			})
		})
	}
}
