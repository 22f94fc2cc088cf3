package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

func newModel(srv *llmtest.Server, key string) *openai.Model {
	return openai.New("gpt-test", &openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: key})
}

// collect drains a stream: the text deltas, the response, the error.
func collect(t *testing.T, m llm.Model, req *llm.Request) ([]string, *llm.Response, error) {
	t.Helper()
	var deltas []string
	var resp *llm.Response
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return deltas, resp, err
		}
		if c.Response != nil {
			if resp != nil {
				t.Fatal("two chunks carry a Response")
			}
			resp = c.Response
			continue
		}
		deltas = append(deltas, c.Text)
	}
	return deltas, resp, nil
}

func TestStreamText(t *testing.T) {
	const answer = "The pendulum's period is 2.006 s — within 0.3 % of theory."
	srv := llmtest.NewServer(t, llmtest.Turn{Text: answer, Usage: llm.Usage{InputTokens: 120, OutputTokens: 17}})
	m := newModel(srv, "sk-test")
	if m.Name() != "openai:gpt-test" {
		t.Errorf("Name() = %q", m.Name())
	}
	deltas, resp, err := collect(t, m, &llm.Request{System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Content: "period?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 {
		t.Errorf("got %d deltas; want the answer streamed in pieces", len(deltas))
	}
	if got := strings.Join(deltas, ""); got != answer {
		t.Errorf("deltas join to %q; want %q", got, answer)
	}
	want := &llm.Response{
		Message:    llm.Message{Role: llm.RoleAssistant, Content: answer},
		Usage:      llm.Usage{InputTokens: 120, OutputTokens: 17},
		StopReason: llm.StopEnd,
		Model:      "gpt-test",
	}
	if d := cmp.Diff(want, resp); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("server saw %d calls", len(calls))
	}
	c := calls[0]
	if !c.Stream || !strings.Contains(string(c.Body), `"include_usage":true`) {
		t.Errorf("request did not stream with include_usage: %s", c.Body)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

// TestRequestRoundTrip checks that everything in a Request reaches the server: the server decodes
// the wire back into llm types.
func TestRequestRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text(`{"ok":true}`))
	temp := 0.2
	schema := json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`)
	req := &llm.Request{
		Module: "code",
		System: "You are a lab partner.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "integrate y'=-y"},
			{Role: llm.RoleAssistant, Content: "Running it.", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "run", Arguments: json.RawMessage(`{"code":"ode45(@(t,y)-y,[0 1],1)"}`)},
				{ID: "c2", Name: "search", Arguments: json.RawMessage(`{"q":"ode45"}`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "y(1)=0.3679"},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: "no memory", IsError: true},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c3", Name: "run", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolCallID: "c3", Content: "ok"},
		},
		Tools:       []llm.ToolSpec{{Name: "run", Description: "Run code.", InputSchema: schema}},
		Output:      &llm.OutputSchema{Name: "answer", Schema: schema},
		MaxTokens:   300,
		Temperature: &temp,
	}
	if _, _, err := collect(t, newModel(srv, ""), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Calls()[0]
	want := *req
	want.Module = "" // not on the wire
	want.Messages = append([]llm.Message(nil), req.Messages...)
	want.Messages[3] = llm.Message{Role: llm.RoleTool, ToolCallID: "c2", Content: "Error: no memory"}
	if d := cmp.Diff(&want, got.Request, cmp.Comparer(jsonEqual)); d != "" {
		t.Errorf("request as the server decoded it (-want +got):\n%s", d)
	}
	if !strings.Contains(string(got.Body), `"max_completion_tokens":300`) {
		t.Errorf("OpenAI requests limit with max_completion_tokens: %s", got.Body)
	}
	if h := got.Header.Get("Authorization"); h != "" {
		t.Errorf("no key configured, yet Authorization = %q", h)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func TestMaxTokensFieldForCompatibleServers(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("hi"))
	m := openai.New("qwen3:8b", &openai.Options{Provider: "ollama", BaseURL: srv.OpenAIBaseURL()})
	if m.Name() != "ollama:qwen3:8b" {
		t.Errorf("Name() = %q", m.Name())
	}
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Calls()[0].Body); !strings.Contains(body, `"max_tokens":50`) {
		t.Errorf("a compatible server gets max_tokens: %s", body)
	}
}

func TestNoKeyLeaksFromEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	srv := llmtest.NewServer(t, llmtest.Text("hi"))
	m := openai.New("llama3", &openai.Options{Provider: "llamacpp", BaseURL: srv.OpenAIBaseURL()})
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if h := srv.Calls()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("OPENAI_API_KEY sent to a llama.cpp server: Authorization = %q", h)
	}
}

func TestToolCalls(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{
		Text: "Let me run it.",
		ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "run", Arguments: json.RawMessage(`{"code": "x = linspace(0, 1, 11);"}`)},
			{Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)}, // malformed, kept verbatim
		},
	})
	resp, err := llm.Generate(context.Background(), newModel(srv, ""), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}},
		Tools:    []llm.ToolSpec{{Name: "run", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Message{Role: llm.RoleAssistant, Content: "Let me run it.", ToolCalls: []llm.ToolCall{
		{ID: "call_a", Name: "run", Arguments: json.RawMessage(`{"code": "x = linspace(0, 1, 11);"}`)},
		{ID: "call_1_1", Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)},
	}}
	if d := cmp.Diff(want, resp.Message); d != "" {
		t.Errorf("message (-want +got):\n%s", d)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("StopReason = %q", resp.StopReason)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage not reported: %+v", resp.Usage)
	}
}

func TestMaxTokensStop(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Text: "The answer is", Stop: llm.StopMaxTokens})
	resp, err := llm.Generate(context.Background(), newModel(srv, ""), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != llm.StopMaxTokens {
		t.Errorf("StopReason = %q; want max_tokens", resp.StopReason)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		turn       llmtest.Turn
		kind       error
		status     int
		retryAfter time.Duration
		msg        string
	}{
		{"rate limited", llmtest.Turn{Status: 429, ErrorMessage: "Rate limit reached for gpt-test", RetryAfter: 2 * time.Second}, llm.ErrRateLimited, 429, 2 * time.Second, "Rate limit reached"},
		{"bad key", llmtest.Fail(401, "Incorrect API key provided"), llm.ErrAuth, 401, 0, "Incorrect API key"},
		{"bad request", llmtest.Fail(400, "Invalid schema for function 'run'"), llm.ErrBadRequest, 400, 0, "Invalid schema"},
		{"server error", llmtest.Fail(500, "The server had an error"), llm.ErrUnavailable, 500, 0, "server had an error"},
		{"overloaded", llmtest.Fail(503, "overloaded"), llm.ErrUnavailable, 503, 0, "overloaded"},
		{"malformed body", llmtest.Turn{Malformed: true}, llm.ErrProvider, 0, 0, ""},
		{"connection dropped", llmtest.Turn{Drop: llmtest.DropBeforeReply}, llm.ErrUnavailable, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.turn)
			_, _, err := collect(t, newModel(srv, ""), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T); want *llm.APIError", err, err)
			}
			if !errors.Is(err, tc.kind) || ae.Status != tc.status || ae.RetryAfter != tc.retryAfter || ae.Provider != "openai" {
				t.Errorf("err = %#v; want kind %v, status %d, retry after %v", ae, tc.kind, tc.status, tc.retryAfter)
			}
			if !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", ae.Message, tc.msg)
			}
		})
	}
}

func TestDropMidStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Text: strings.Repeat("a long answer ", 10), Drop: llmtest.DropMidStream})
	deltas, resp, err := collect(t, newModel(srv, ""), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if len(deltas) == 0 || resp != nil {
		t.Errorf("got %d deltas and response %v; want some text then an error", len(deltas), resp)
	}
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("err = %v; want ErrUnavailable", err)
	}
}

func TestProviderDown(t *testing.T) {
	srv := llmtest.NewServer(t)
	m := newModel(srv, "")
	srv.Close()
	_, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, llm.ErrUnavailable) || !llm.Retryable(err) {
		t.Errorf("err = %v; want a retryable ErrUnavailable", err)
	}
}

func TestCancel(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Text: "late", Delay: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := llm.Generate(ctx, newModel(srv, ""), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want the caller's deadline", err)
	}
	var ae *llm.APIError
	if errors.As(err, &ae) {
		t.Errorf("the caller's own deadline came back as a provider error: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestBadRequestBeforeSending(t *testing.T) {
	srv := llmtest.NewServer(t)
	_, err := llm.Generate(context.Background(), newModel(srv, ""), &llm.Request{
		Tools: []llm.ToolSpec{{Name: "run", InputSchema: json.RawMessage(`{"type":`)}},
	})
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), `tools[0] "run"`) {
		t.Errorf("err = %v; want ErrBadRequest naming tools[0] \"run\"", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("a bad request reached the server (%d calls)", n)
	}
}
