// Package llmtest serves a scripted fake language model over real HTTP, so adapters and agents are
// tested end to end without calling a real provider.
//
// A Server answers each model request with the next Turn of its script. It speaks two wire
// formats on the same address: the OpenAI chat-completions API (POST /v1/chat/completions,
// streaming SSE and plain JSON, tool calls, response_format json_schema, the final usage chunk)
// and the Anthropic Messages API (POST /v1/messages, SSE events message_start … message_stop,
// tool_use and tool_result blocks). The same script can be served in either format, so one agent
// scenario drives both adapters. GET /v1/models answers a preflight in the shape the caller
// expects, and POST /v1/embeddings returns deterministic hashed bag-of-words vectors (Embed)
// without consuming a turn.
//
// Every request is decoded back into llm types (Call.Request) so a test can assert what the model
// was told: the system prompt, the messages, the tools, the output schema.
//
// A Turn replies with text, tool calls (arguments kept verbatim, so malformed JSON can be
// scripted), a JSON answer, usage; or fails: an HTTP status with a provider-shaped error body and
// an optional Retry-After, a malformed body, a dropped connection, a delay. Turn.Reply picks the
// reply from the request. When the script runs out, the server fails the test and answers 500.
//
// A typical agent test:
//
//	srv := llmtest.NewServer(t,
//		llmtest.JSON(plan),                              // the plan module answers with JSON
//		llmtest.CallTool("run_code", `{"code": "x = 1"}`), // the code module calls a tool
//		llmtest.Fail(429, "slow down"),                  // the provider refuses once
//		llmtest.Text("x is 1"),                          // and then answers
//	)
//	m := openai.New("gpt-test", &openai.Options{BaseURL: srv.OpenAIBaseURL()})
//	// or: anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL()})
//	... run the agent on m ...
//	got := srv.Calls()[1].Request // what the code module was told
//
// TestModel is the suite every adapter passes. Recorder records real provider traffic to a
// cassette in testdata (keys and auth headers never stored) when LLMTEST_RECORD=1, and replays
// it offline otherwise; TestReplay runs a recorded tool session through an adapter.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/llm"
)

// Format is a wire format.
type Format string

const (
	OpenAI    Format = "openai"    // chat completions
	Anthropic Format = "anthropic" // messages
)

// Drop says where a Turn drops the connection.
type Drop int

const (
	NoDrop          Drop = iota
	DropBeforeReply      // close the connection without answering: the client sees a reset/EOF
	DropMidStream        // stream half of the text, then close the connection
	// ErrorMidStream streams half of the text, then an error event (the provider failing
	// mid-answer, e.g. Anthropic's overloaded_error) built from Status (default 529) and
	// ErrorMessage, and ends the stream. A non-streaming request gets the error status instead.
	ErrorMidStream
)

// Turn is one scripted reply. The zero Turn answers an empty text.
type Turn struct {
	// Text is the answer (a JSON document when the request asked for an output schema).
	Text string
	// ToolCalls are tool calls the model makes; Arguments are sent verbatim, valid JSON or not.
	// An empty ID gets a generated one.
	ToolCalls []llm.ToolCall
	// Usage is reported with the answer; zero means llm.EstimateUsage of the request and the
	// answer (about four bytes a token), so token counts stay meaningful.
	Usage llm.Usage
	// NoUsage leaves usage out of the answer, as some older OpenAI-compatible servers do.
	NoUsage bool
	// Stop overrides the stop reason (StopMaxTokens to simulate a cut answer).
	Stop llm.StopReason

	// Status, when set, fails the call with this HTTP status and a provider-shaped error body
	// carrying ErrorMessage; RetryAfter, when set, is sent as Retry-After (whole seconds,
	// rounded up) and retry-after-ms.
	Status       int
	ErrorMessage string
	RetryAfter   time.Duration
	// Malformed answers 200 with a body the client cannot parse.
	Malformed bool
	// Drop closes the connection before or during the answer.
	Drop Drop
	// Delay waits before answering (or until the client gives up).
	Delay time.Duration

	// Reply, when set, is called with the request and its result is served instead of this
	// Turn (Reply on the result is ignored). Use it to answer depending on what the model was
	// sent, or to check the request (t.Errorf inside is fine).
	Reply func(*Call) Turn
}

// Text returns a Turn that answers s.
func Text(s string) Turn { return Turn{Text: s} }

// JSON returns a Turn that answers v encoded as JSON (for requests with an output schema).
func JSON(v any) Turn {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest.JSON: %v", err))
	}
	return Turn{Text: string(b)}
}

// CallTool returns a Turn that calls one tool with args (a JSON string, sent verbatim).
func CallTool(name, args string) Turn {
	return Turn{ToolCalls: []llm.ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}
}

// Fail returns a Turn that fails with an HTTP status and a message.
func Fail(status int, msg string) Turn { return Turn{Status: status, ErrorMessage: msg} }

// Call is one request the server received.
type Call struct {
	N       int    // 1-based index among model calls
	Format  Format // the wire format used
	Path    string
	Header  http.Header
	Body    []byte // the raw request body
	Model   string // the model the request named
	Stream  bool
	Request *llm.Request // the request decoded back into llm types
}

// Server is a scripted fake model on a loopback httptest server. Its methods are safe for
// concurrent use.
type Server struct {
	t    testing.TB
	http *httptest.Server

	mu     sync.Mutex
	key    string
	models []string
	turns  []Turn
	next   int
	calls  []*Call
}

// NewServer starts a server that answers with turns, in order, and stops it when the test ends.
func NewServer(t testing.TB, turns ...Turn) *Server {
	s := &Server{t: t, turns: turns, models: []string{"llmtest"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveOpenAI)
	mux.HandleFunc("POST /v1/messages", s.serveAnthropic)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("POST /v1/embeddings", s.serveEmbeddings)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("llmtest: unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, "llmtest: no such endpoint", http.StatusNotFound)
	})
	s.http = httptest.NewServer(s.auth(mux))
	t.Cleanup(s.Close)
	return s
}

// URL is the server's root, such as http://127.0.0.1:41234; the Anthropic SDK takes it as its
// base URL.
func (s *Server) URL() string { return s.http.URL }

// OpenAIBaseURL is URL()+"/v1", the base URL an OpenAI-compatible client takes.
func (s *Server) OpenAIBaseURL() string { return s.http.URL + "/v1" }

// Close stops the server; later requests fail to connect (a provider that is down).
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
}

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// SetKey makes the server require key (as a bearer token or x-api-key, as the providers take
// it): a request without it gets 401 with a provider-shaped body, and consumes no turn.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		key := s.key
		s.mu.Unlock()
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("X-Api-Key") != key {
			f := OpenAI
			if r.Header.Get("Anthropic-Version") != "" {
				f = Anthropic
			}
			writeError(w, f, http.StatusUnauthorized, "invalid API key", 0)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SetModels sets the model ids GET /v1/models lists (default: "llmtest").
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = ids
}

// Calls returns the model requests received so far.
func (s *Server) Calls() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Call(nil), s.calls...)
}

// Remaining is the number of turns not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// take records a call and returns its turn, or false when the script is exhausted.
func (s *Server) take(c *Call) (Turn, bool) {
	s.mu.Lock()
	c.N = len(s.calls) + 1
	s.calls = append(s.calls, c)
	if s.next >= len(s.turns) {
		n := len(s.turns)
		s.mu.Unlock()
		last := "(no messages)"
		if m := c.Request.Messages; len(m) > 0 {
			last = fmt.Sprintf("%s: %.200q", m[len(m)-1].Role, m[len(m)-1].Content)
		}
		s.t.Errorf("llmtest: model call %d (%s) arrived but the script has only %d turns; its last message was %s", c.N, c.Format, n, last)
		return Turn{}, false
	}
	turn := s.turns[s.next]
	s.next++
	s.mu.Unlock()
	if turn.Reply != nil {
		turn = turn.Reply(c)
		turn.Reply = nil
	}
	return turn, true
}

// readCall reads and decodes a request; on failure it answers 400 and returns nil.
func (s *Server) readCall(w http.ResponseWriter, r *http.Request, f Format, decode func([]byte) (*llm.Request, string, bool, error)) *Call {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil
	}
	req, model, stream, err := decode(body)
	if err != nil {
		s.t.Errorf("llmtest: %s request to %s cannot be decoded: %v\n%s", f, r.URL.Path, err, body)
		writeError(w, f, http.StatusBadRequest, "llmtest: "+err.Error(), 0)
		return nil
	}
	return &Call{Format: f, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Model: model, Stream: stream, Request: req}
}

// prepare applies a turn's delay, failure and drop-before-reply; it reports whether the turn
// still has to be answered.
func prepare(w http.ResponseWriter, r *http.Request, c *Call, turn Turn) bool {
	f := c.Format
	if turn.Delay > 0 {
		select {
		case <-time.After(turn.Delay):
		case <-r.Context().Done():
			return false
		}
	}
	if turn.Drop == DropBeforeReply {
		hijackClose(w)
		return false
	}
	if turn.Drop == ErrorMidStream && turn.Status == 0 {
		turn.Status = 529
	}
	if turn.Status != 0 && (turn.Drop != ErrorMidStream || !c.Stream) {
		msg := turn.ErrorMessage
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		writeError(w, f, turn.Status, msg, turn.RetryAfter)
		return false
	}
	if turn.Malformed {
		if c.Stream {
			newSSE(w).event(map[Format]string{Anthropic: "message_start"}[f], `{"id": "broken", "choices": [ {"delta": `)
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id": "broken", "choices": [ {"message": `)
		return false
	}
	return true
}

// cut ends a stream at the point the turn says: it drops the connection or sends an error event.
func (s *sse) cut(f Format, turn Turn) {
	if turn.Drop == DropMidStream {
		hijackClose(s.w)
		return
	}
	status := turn.Status
	if status == 0 {
		status = 529
	}
	msg := turn.ErrorMessage
	if msg == "" {
		msg = "Overloaded"
	}
	if f == Anthropic {
		s.event("error", map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}})
		return
	}
	s.event("", map[string]any{"error": map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil}})
}

func hijackClose(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(fmt.Sprintf("llmtest: hijack: %v", err))
	}
	conn.Close()
}

// writeError writes a provider-shaped error body.
func writeError(w http.ResponseWriter, f Format, status int, msg string, retryAfter time.Duration) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int((retryAfter+time.Second-1)/time.Second)))
		w.Header().Set("Retry-After-Ms", fmt.Sprint(retryAfter.Milliseconds()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var body any
	switch f {
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil}}
	}
	json.NewEncoder(w).Encode(body)
}

func openAIErrorType(status int) string {
	switch {
	case status == 401:
		return "invalid_request_error"
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func anthropicErrorType(status int) string {
	switch status {
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// usage is the turn's usage, or llm.EstimateUsage of the request and the answer (at least one
// token each way).
func usage(turn Turn, req *llm.Request) llm.Usage {
	if turn.Usage != (llm.Usage{}) {
		return turn.Usage
	}
	u := llm.EstimateUsage(req, &llm.Message{Content: turn.Text, ToolCalls: turn.ToolCalls})
	return llm.Usage{InputTokens: max(1, u.InputTokens), OutputTokens: max(1, u.OutputTokens)}
}

func stopReason(turn Turn) llm.StopReason {
	switch {
	case turn.Stop != "":
		return turn.Stop
	case len(turn.ToolCalls) > 0:
		return llm.StopToolUse
	}
	return llm.StopEnd
}

// pieces splits s into a few streamed deltas (at most about 16 bytes each, on rune boundaries).
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(len(s), 16)
		for n < len(s) && !utf8Start(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w, f}
}

func (s *sse) event(name string, v any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	switch v := v.(type) {
	case string:
		fmt.Fprintf(&b, "data: %s\n\n", v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	s.w.Write(b.Bytes())
	if s.f != nil {
		s.f.Flush()
	}
}

// textContent reads an OpenAI or Anthropic content field: a string or an array of text parts.
func textContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts: %s", raw)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q: only text is supported", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	data := make([]any, len(ids))
	if r.Header.Get("Anthropic-Version") != "" {
		for i, id := range ids {
			data[i] = map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2026-01-01T00:00:00Z"}
		}
		first, last := "", ""
		if len(ids) > 0 {
			first, last = ids[0], ids[len(ids)-1]
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
		return
	}
	for i, id := range ids {
		data[i] = map[string]any{"id": id, "object": "model", "created": 1767225600, "owned_by": "llmtest"}
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}
