package llmtest_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	antopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func sdk(srv *llmtest.Server) oa.Client {
	return oa.NewClient(option.WithBaseURL(srv.OpenAIBaseURL()+"/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
}

// TestOpenAINonStreaming checks the plain-JSON answer with the official SDK's own decoder.
func TestOpenAINonStreaming(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Turn{Text: "4", Usage: llm.Usage{InputTokens: 9, OutputTokens: 1}},
		llmtest.CallTool("run", `{"code":"2+2"}`),
	)
	c := sdk(srv)
	ctx := context.Background()
	got, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "m", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("2+2?")}})
	if err != nil {
		t.Fatal(err)
	}
	if ch := got.Choices[0]; ch.Message.Content != "4" || ch.FinishReason != "stop" || got.Usage.PromptTokens != 9 || got.Usage.CompletionTokens != 1 {
		t.Errorf("answer = %s", got.RawJSON())
	}
	got, err = c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "m", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("run it")}})
	if err != nil {
		t.Fatal(err)
	}
	ch := got.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "run" || ch.Message.ToolCalls[0].Function.Arguments != `{"code":"2+2"}` {
		t.Errorf("answer = %s", got.RawJSON())
	}
	if got.Usage.PromptTokens == 0 {
		t.Errorf("no estimated usage: %s", got.RawJSON())
	}
	if calls := srv.Calls(); len(calls) != 2 || calls[1].Stream || calls[1].Request.Messages[0].Content != "run it" {
		t.Errorf("calls recorded wrong: %+v", calls)
	}
}

// recorder is a testing.TB that keeps failures instead of failing the test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestScriptExhaustedFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewServer(rec, llmtest.Text("only turn"))
	c := sdk(srv)
	ctx := context.Background()
	msg := []oa.ChatCompletionMessageParamUnion{oa.UserMessage("one more thing")}
	if _, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "m", Messages: msg}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "m", Messages: msg}); err == nil {
		t.Error("a call past the end of the script succeeded")
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "model call 2") || !strings.Contains(rec.errors[0], "only 1 turns") || !strings.Contains(rec.errors[0], "one more thing") {
		t.Errorf("failures = %q; want one naming call 2, the script length and the last message", rec.errors)
	}
}

func TestReplyDependsOnRequest(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		return llmtest.Text("you said: " + c.Request.Messages[0].Content)
	}})
	c := sdk(srv)
	got, err := c.Chat.Completions.New(context.Background(), oa.ChatCompletionNewParams{Model: "m", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Choices[0].Message.Content; s != "you said: hello" {
		t.Errorf("answer = %q", s)
	}
	if srv.Remaining() != 0 {
		t.Errorf("Remaining() = %d", srv.Remaining())
	}
}

func TestEmbeddings(t *testing.T) {
	srv := llmtest.NewServer(t)
	texts := []string{"ODE solver step size", "Solver: step size (ODE)", "pipetting volume"}
	c := sdk(srv)
	got, err := c.Embeddings.New(context.Background(), oa.EmbeddingNewParams{Model: "e", Input: oa.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != 3 {
		t.Fatalf("%d vectors", len(got.Data))
	}
	for i, d := range got.Data {
		want := llmtest.Embed(texts[i])
		if len(d.Embedding) != llmtest.EmbedDim {
			t.Fatalf("vector %d has %d dimensions", i, len(d.Embedding))
		}
		for j := range want {
			if float32(d.Embedding[j]) != want[j] {
				t.Fatalf("vector %d differs from Embed at %d", i, j)
			}
		}
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	same, other := cos(llmtest.Embed(texts[0]), llmtest.Embed(texts[1])), cos(llmtest.Embed(texts[0]), llmtest.Embed(texts[2]))
	if math.Abs(same-1) > 1e-5 || other > 0.5 {
		t.Errorf("cos(same words) = %v, cos(other words) = %v", same, other)
	}
	if len(srv.Calls()) != 0 {
		t.Error("embeddings counted as a model call")
	}
}

// TestAnthropicNonStreaming checks the plain-JSON Messages answer with the official SDK.
func TestAnthropicNonStreaming(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Text: "Checking.", ToolCalls: []llm.ToolCall{{Name: "run", Arguments: []byte(`{"code":"1+1"}`)}}})
	c := ant.NewClient(antopt.WithoutEnvironmentDefaults(), antopt.WithBaseURL(srv.URL()+"/"), antopt.WithMaxRetries(0))
	got, err := c.Messages.New(context.Background(), ant.MessageNewParams{
		Model: "claude-test", MaxTokens: 100,
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("1+1?"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 2 || got.Content[0].Text != "Checking." || got.Content[1].Name != "run" || got.StopReason != "tool_use" || got.Usage.InputTokens == 0 {
		t.Errorf("answer = %s", got.RawJSON())
	}
}

// TestRecorder records a session against the fake server, replays it offline, and checks that a
// request that changed since the recording fails the replay, naming the difference.
func TestRecorder(t *testing.T) {
	path := t.TempDir() + "/cassette.json"
	post := func(hc *http.Client, base, body string) (string, error) {
		resp, err := hc.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	var recorded string
	t.Run("record", func(t *testing.T) {
		t.Setenv(llmtest.RecordEnv, "1")
		t.Setenv("LLMTEST_SECRET_KEY", "sk-secret-123456")
		srv := llmtest.NewServer(t, llmtest.Text("hello sk-secret-123456"))
		rec := llmtest.NewRecorder(t, path)
		var err error
		if recorded, err = post(rec.Client(), srv.URL(), body); err != nil {
			t.Fatal(err)
		}
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-secret-123456") || !strings.Contains(string(data), "REDACTED") {
		t.Errorf("the key was not redacted from the cassette:\n%s", data)
	}
	t.Run("replay", func(t *testing.T) {
		rec := llmtest.NewRecorder(t, path)
		got, err := post(rec.Client(), llmtest.ReplayBaseURL, ` {"messages":[{"content":"hi","role":"user"}],"model":"m"}`)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(recorded, "sk-secret-123456", "REDACTED"); got != want {
			t.Errorf("replayed %q; recorded %q", got, want)
		}
	})
	t.Run("changed request", func(t *testing.T) {
		tb := &recorder{TB: t}
		rec := llmtest.NewRecorder(tb, path)
		if _, err := post(rec.Client(), llmtest.ReplayBaseURL, `{"model":"m","messages":[{"role":"user","content":"bye"}]}`); err == nil {
			t.Error("a changed request replayed")
		}
		if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], `"bye"`) || !strings.Contains(tb.errors[0], "request 1 body differs") {
			t.Errorf("failures = %q", tb.errors)
		}
	})
}
