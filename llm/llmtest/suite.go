package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/llm"
)

// TestModel is the test suite every llm.Model adapter passes: it runs newModel against a Server
// speaking format and checks streaming, usage, the request as the server decoded it, tool calls
// (malformed arguments kept verbatim), stop reasons, error mapping (status, sentinel,
// Retry-After), dropped connections, a provider that is down, cancellation, and a bad request
// refused before it is sent.
func TestModel(t *testing.T, format Format, newModel func(*Server) llm.Model) {
	t.Run("StreamText", func(t *testing.T) { testStreamText(t, newModel) })
	t.Run("RequestRoundTrip", func(t *testing.T) { testRoundTrip(t, format, newModel) })
	t.Run("ToolCalls", func(t *testing.T) { testToolCalls(t, format, newModel) })
	t.Run("OutputSchema", func(t *testing.T) { testOutput(t, newModel) })
	t.Run("MaxTokensStop", func(t *testing.T) { testMaxTokensStop(t, newModel) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, newModel) })
	t.Run("DropMidStream", func(t *testing.T) {
		testDropMidStream(t, newModel, Turn{Text: strings.Repeat("a long answer ", 10), Drop: DropMidStream}, llm.ErrUnavailable)
	})
	t.Run("OverloadedMidStream", func(t *testing.T) {
		testDropMidStream(t, newModel, Turn{Text: strings.Repeat("a long answer ", 10), Drop: ErrorMidStream, Status: 529, ErrorMessage: "Overloaded"}, llm.ErrUnavailable)
	})
	t.Run("RateLimitedMidStream", func(t *testing.T) {
		testDropMidStream(t, newModel, Turn{Text: strings.Repeat("a long answer ", 10), Drop: ErrorMidStream, Status: 429, ErrorMessage: "slow down"}, llm.ErrRateLimited)
	})
	t.Run("ProviderDown", func(t *testing.T) { testProviderDown(t, newModel) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newModel) })
	t.Run("BadRequestBeforeSending", func(t *testing.T) { testBadRequest(t, newModel) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newModel) })
}

// testConcurrent shares one Model between goroutines (run it with -race).
func testConcurrent(t *testing.T, newModel func(*Server) llm.Model) {
	const n = 8
	srv := NewServer(t)
	for range n {
		srv.Add(Text("the same answer for everyone"))
	}
	m := newModel(srv)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := llm.Generate(context.Background(), m, hi())
			if err == nil && resp.Message.Content != "the same answer for everyone" {
				err = errors.New("wrong answer: " + resp.Message.Content)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := len(srv.Calls()); got != n {
		t.Errorf("%d calls; want %d", got, n)
	}
}

// Collect drains a stream: the text deltas, the response, the error. It fails the test if more
// than one chunk carries a Response.
func Collect(t testing.TB, m llm.Model, req *llm.Request) ([]string, *llm.Response, error) {
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
		if resp != nil {
			t.Fatal("a text chunk after the Response")
		}
		deltas = append(deltas, c.Text)
	}
	if resp == nil {
		t.Fatal("the stream ended without a Response or an error")
	}
	return deltas, resp, nil
}

func hi() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func testStreamText(t *testing.T, newModel func(*Server) llm.Model) {
	const answer = "The pendulum's period is 2.006 s — within 0.3 % of theory."
	srv := NewServer(t, Turn{Text: answer, Usage: llm.Usage{InputTokens: 120, OutputTokens: 17}})
	deltas, resp, err := Collect(t, newModel(srv), &llm.Request{System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Content: "period?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 {
		t.Errorf("got %d deltas; want the answer streamed in pieces", len(deltas))
	}
	if got := strings.Join(deltas, ""); got != answer {
		t.Errorf("deltas join to %q; want %q", got, answer)
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("server saw %d calls", len(calls))
	}
	want := &llm.Response{
		Message:    llm.Message{Role: llm.RoleAssistant, Content: answer},
		Usage:      llm.Usage{InputTokens: 120, OutputTokens: 17},
		StopReason: llm.StopEnd,
		Model:      calls[0].Model,
	}
	if d := cmp.Diff(want, resp); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if !calls[0].Stream {
		t.Errorf("the request did not stream: %s", calls[0].Body)
	}
}

// testRoundTrip checks that everything in a Request reaches the server: the server decodes the
// wire back into llm types.
func testRoundTrip(t *testing.T, format Format, newModel func(*Server) llm.Model) {
	srv := NewServer(t, Text(`{"code":"x"}`))
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
			{Role: llm.RoleUser, Content: "now answer"},
		},
		Tools:       []llm.ToolSpec{{Name: "run", Description: "Run code.", InputSchema: schema}},
		Output:      &llm.OutputSchema{Name: "answer", Schema: schema},
		MaxTokens:   300,
		Temperature: &temp,
	}
	if _, _, err := Collect(t, newModel(srv), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Calls()[0]
	want := *req
	want.Module = "" // not on the wire
	want.Messages = append([]llm.Message(nil), req.Messages...)
	if format == OpenAI {
		// chat completions has no error flag on a tool message
		want.Messages[3] = llm.Message{Role: llm.RoleTool, ToolCallID: "c2", Content: "Error: no memory"}
	}
	if d := cmp.Diff(&want, got.Request, cmp.Comparer(jsonEqual)); d != "" {
		t.Errorf("request as the server decoded it (-want +got):\n%s", d)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func testToolCalls(t *testing.T, format Format, newModel func(*Server) llm.Model) {
	srv := NewServer(t, Turn{
		Text: "Let me run it.",
		ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "run", Arguments: json.RawMessage(`{"code": "x = linspace(0, 1, 11);"}`)},
			{Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)}, // malformed, kept verbatim
		},
	})
	_, resp, err := Collect(t, newModel(srv), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}},
		Tools:    []llm.ToolSpec{{Name: "run", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	genID := map[Format]string{OpenAI: "call_1_1", Anthropic: "toolu_1_1"}[format]
	want := llm.Message{Role: llm.RoleAssistant, Content: "Let me run it.", ToolCalls: []llm.ToolCall{
		{ID: "call_a", Name: "run", Arguments: json.RawMessage(`{"code": "x = linspace(0, 1, 11);"}`)},
		{ID: genID, Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)},
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

func testOutput(t *testing.T, newModel func(*Server) llm.Model) {
	srv := NewServer(t, JSON(map[string]any{"verdict": "accept", "reasons": []string{"converged"}}))
	deltas, resp, err := Collect(t, newModel(srv), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "judge"}},
		Output:   &llm.OutputSchema{Name: "verdict", Schema: json.RawMessage(`{"type":"object","properties":{"verdict":{"enum":["accept","replan"]},"reasons":{"type":"array","items":{"type":"string"}}},"required":["verdict"]}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Verdict string
		Reasons []string
	}
	if err := json.Unmarshal([]byte(resp.Message.Content), &got); err != nil || got.Verdict != "accept" || len(got.Reasons) != 1 {
		t.Errorf("content %q decodes to %+v, %v", resp.Message.Content, got, err)
	}
	if strings.Join(deltas, "") != resp.Message.Content {
		t.Errorf("deltas %q do not add up to the content %q", deltas, resp.Message.Content)
	}
	if len(resp.Message.ToolCalls) != 0 || resp.StopReason != llm.StopEnd {
		t.Errorf("a structured answer came back as tool calls %v, stop %q", resp.Message.ToolCalls, resp.StopReason)
	}
	if o := srv.Calls()[0].Request.Output; o == nil || o.Name != "verdict" {
		t.Errorf("the server saw output schema %+v", o)
	}
}

func testMaxTokensStop(t *testing.T, newModel func(*Server) llm.Model) {
	srv := NewServer(t, Turn{Text: "The answer is", Stop: llm.StopMaxTokens})
	_, resp, err := Collect(t, newModel(srv), hi())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != llm.StopMaxTokens {
		t.Errorf("StopReason = %q; want max_tokens", resp.StopReason)
	}
}

func testErrors(t *testing.T, newModel func(*Server) llm.Model) {
	for _, tc := range []struct {
		name       string
		turn       Turn
		kind       error
		status     int
		retryAfter time.Duration
		msg        string
	}{
		{"rate limited", Turn{Status: 429, ErrorMessage: "Rate limit reached", RetryAfter: 2 * time.Second}, llm.ErrRateLimited, 429, 2 * time.Second, "Rate limit reached"},
		{"bad key", Fail(401, "Incorrect API key provided"), llm.ErrAuth, 401, 0, "Incorrect API key"},
		{"forbidden", Fail(403, "no access to this model"), llm.ErrAuth, 403, 0, "no access"},
		{"bad request", Fail(400, "Invalid schema for function 'run'"), llm.ErrBadRequest, 400, 0, "Invalid schema"},
		{"server error", Fail(500, "The server had an error"), llm.ErrUnavailable, 500, 0, "server had an error"},
		{"overloaded", Fail(529, "Overloaded"), llm.ErrUnavailable, 529, 0, "Overloaded"},
		{"malformed body", Turn{Malformed: true}, llm.ErrProvider, 0, 0, ""},
		{"connection dropped", Turn{Drop: DropBeforeReply}, llm.ErrUnavailable, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewServer(t, tc.turn)
			var err error
			for _, e := range newModel(srv).Stream(context.Background(), hi()) {
				if e != nil {
					err = e
				}
			}
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T); want *llm.APIError", err, err)
			}
			if !errors.Is(err, tc.kind) || ae.Status != tc.status || ae.RetryAfter != tc.retryAfter || ae.Provider == "" {
				t.Errorf("err = %#v; want kind %v, status %d, retry after %v, a provider", ae, tc.kind, tc.status, tc.retryAfter)
			}
			if !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", ae.Message, tc.msg)
			}
		})
	}
}

func testDropMidStream(t *testing.T, newModel func(*Server) llm.Model, turn Turn, kind error) {
	srv := NewServer(t, turn)
	var deltas []string
	var err error
	for c, e := range newModel(srv).Stream(context.Background(), hi()) {
		if e != nil {
			err = e
			break
		}
		if c.Response != nil {
			t.Fatal("a Response from a cut stream")
		}
		deltas = append(deltas, c.Text)
	}
	if len(deltas) == 0 {
		t.Error("no text before the cut")
	}
	if !errors.Is(err, kind) {
		t.Errorf("err = %v; want %v", err, kind)
	}
	if turn.ErrorMessage != "" && !strings.Contains(err.Error(), turn.ErrorMessage) {
		t.Errorf("err = %v; want the provider's message %q", err, turn.ErrorMessage)
	}
}

func testProviderDown(t *testing.T, newModel func(*Server) llm.Model) {
	srv := NewServer(t)
	m := newModel(srv)
	srv.Close()
	_, err := llm.Generate(context.Background(), m, hi())
	if !errors.Is(err, llm.ErrUnavailable) || !llm.Retryable(err) {
		t.Errorf("err = %v; want a retryable ErrUnavailable", err)
	}
}

func testCancel(t *testing.T, newModel func(*Server) llm.Model) {
	srv := NewServer(t, Turn{Text: "late", Delay: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := llm.Generate(ctx, newModel(srv), hi())
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

func testBadRequest(t *testing.T, newModel func(*Server) llm.Model) {
	srv := NewServer(t)
	_, err := llm.Generate(context.Background(), newModel(srv), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Tools:    []llm.ToolSpec{{Name: "run", InputSchema: json.RawMessage(`{"type":`)}},
	})
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), `tools[0] "run"`) {
		t.Errorf("err = %v; want ErrBadRequest naming tools[0] \"run\"", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("a bad request reached the server (%d calls)", n)
	}
}

// ReplayBaseURL is the base URL adapters get when replaying: nothing listens there.
const ReplayBaseURL = "http://replay.invalid"

// TestReplay runs a two-call tool session through a Recorder on the cassette at path: in replay
// mode (the default) with no server at all, in record mode (RecordEnv=1) against a Server
// speaking format. newModel gets the base URL (the root; OpenAI adapters append /v1) and the
// recording client.
func TestReplay(t *testing.T, format Format, path string, newModel func(baseURL string, hc *http.Client) llm.Model) {
	rec := NewRecorder(t, path)
	base := ReplayBaseURL
	if rec.Recording() {
		srv := NewServer(t,
			Turn{Text: "I'll compute it.", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "run", Arguments: json.RawMessage(`{"code":"sqrt(2)"}`)}}, Usage: llm.Usage{InputTokens: 52, OutputTokens: 14}},
			Turn{Text: "√2 ≈ 1.4142.", Usage: llm.Usage{InputTokens: 81, OutputTokens: 9}},
		)
		base = srv.URL()
	}
	m := newModel(base, rec.Client())
	req := &llm.Request{
		System:   "You are a lab partner.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is sqrt(2)?"}},
		Tools:    []llm.ToolSpec{{Name: "run", Description: "Run Octave code.", InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`)}},
	}
	ctx := context.Background()
	first, err := llm.Generate(ctx, m, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Message.ToolCalls) != 1 || first.Message.ToolCalls[0].Name != "run" || first.StopReason != llm.StopToolUse || first.Usage != (llm.Usage{InputTokens: 52, OutputTokens: 14}) {
		t.Fatalf("first answer = %+v", first)
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, ToolCallID: first.Message.ToolCalls[0].ID, Content: "ans = 1.4142"})
	second, err := llm.Generate(ctx, m, req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Message.Content != "√2 ≈ 1.4142." || second.StopReason != llm.StopEnd || second.Usage != (llm.Usage{InputTokens: 81, OutputTokens: 9}) {
		t.Errorf("second answer = %+v", second)
	}
}

// BenchmarkModel measures one streamed call through an adapter over loopback HTTP: a request
// with a system prompt, a short history and two tools, answered with about 300 bytes of text
// in 16-byte deltas. The fake server's own work is included; model latency is not.
func BenchmarkModel(b *testing.B, newModel func(*Server) llm.Model) {
	srv := NewServer(b)
	m := newModel(srv)
	schema := json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"},"watch":{"type":"array","items":{"type":"string"}}},"required":["code"]}`)
	req := &llm.Request{
		System: strings.Repeat("You are a careful lab partner. ", 20),
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Integrate the pendulum for 10 s and report the period."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run", Arguments: json.RawMessage(`{"code":"[t,y]=ode45(@f,[0 10],[1 0]);"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: strings.Repeat("t = 0.1 y = 0.99\n", 20)},
		},
		Tools: []llm.ToolSpec{{Name: "run", Description: "Run code in the kernel.", InputSchema: schema}, {Name: "search", Description: "Search memory.", InputSchema: schema}},
	}
	answer := Text(strings.Repeat("The period is 2.006 s. ", 13))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		srv.Add(answer)
		b.StartTimer()
		if _, err := llm.Generate(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	}
}
