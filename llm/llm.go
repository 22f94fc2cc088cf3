// Package llm is labmate's provider-neutral view of a language model: one small Model interface,
// labmate's own Message, ToolCall and Usage types (no vendor type leaks out of the adapters), a
// usage meter with a token budget, and typed errors that say what went wrong with the provider.
//
// Adapters live in sub-packages: openai (any OpenAI-compatible server: OpenAI, Ollama, vLLM,
// llama.cpp, LM Studio, OpenRouter) and anthropic. llmtest serves a scripted fake model over real
// HTTP in both wire formats, and records and replays real traffic.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Role says who wrote a Message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call, answering ToolCallID
)

// Message is one turn of a conversation. The system prompt is not a Message: it is Request.System.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the tools an assistant turn asks to run.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a RoleTool message answers; IsError marks a failed call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ToolCall is a model's request to run one tool. Arguments is the JSON the model wrote, kept
// verbatim even when it is not valid JSON, so the caller can tell the model what was wrong.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec declares a tool the model may call; InputSchema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// OutputSchema asks the model to answer with JSON that matches Schema (a JSON Schema object).
type OutputSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// Request is one call to a model. Tools and the output schema travel with every request: a Model
// holds no mutable setup.
type Request struct {
	// Module names the caller (plan, code, reflect, judge, memory …); usage is counted per module.
	Module      string
	System      string
	Messages    []Message
	Tools       []ToolSpec
	Output      *OutputSchema
	MaxTokens   int      // 0: the adapter's default
	Temperature *float64 // nil: the provider's default
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens}
}

// StopReason says why a response ended.
type StopReason string

const (
	StopEnd       StopReason = "end"        // the model finished its turn
	StopToolUse   StopReason = "tool_use"   // the model asks for tool calls
	StopMaxTokens StopReason = "max_tokens" // the answer was cut at MaxTokens
)

// Response is a complete answer: an assistant Message, its usage and why it stopped.
type Response struct {
	Message    Message    `json:"message"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
	Model      string     `json:"model,omitempty"` // the model that answered, as the provider names it
}

// Chunk is one piece of a streamed answer: a text delta, and on the last chunk only, the complete
// Response (whose Message holds all the text and the tool calls).
type Chunk struct {
	Text     string
	Response *Response
}

// Model is a language model. Stream yields text deltas as they arrive and ends with exactly one
// chunk whose Response is set, or with an error. Implementations are safe for concurrent use.
type Model interface {
	// Name is the model's spec, such as "openai:gpt-4.1" or "ollama:qwen3:8b".
	Name() string
	Stream(ctx context.Context, req *Request) iter.Seq2[*Chunk, error]
}

// Generate runs req to completion and returns the whole Response.
func Generate(ctx context.Context, m Model, req *Request) (*Response, error) {
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if c.Response != nil {
			return c.Response, nil
		}
	}
	return nil, fmt.Errorf("%w: %s: the stream ended without a response", ErrProvider, m.Name())
}

// Embedder turns texts into vectors (one per text, all of the same length).
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Errors an adapter returns, wrapped in an *APIError when the provider answered.
var (
	ErrAuth        = errors.New("llm: authentication failed")    // 401/403, or no key: not retried
	ErrRateLimited = errors.New("llm: rate limited")             // 429: retried after RetryAfter
	ErrUnavailable = errors.New("llm: provider unavailable")     // 5xx, connection refused or reset: retried
	ErrBadRequest  = errors.New("llm: request rejected")         // other 4xx: not retried
	ErrProvider    = errors.New("llm: malformed provider reply") // a reply the adapter cannot read
	ErrBudget      = errors.New("llm: token budget exhausted")   // Meter refused the call
)

// APIError is a failed call as the provider reported it.
type APIError struct {
	Kind       error  // one of the sentinels above
	Provider   string // "openai", "anthropic", "ollama" …
	Status     int    // HTTP status, 0 when no answer arrived
	RetryAfter time.Duration
	Message    string
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Provider != "" {
		fmt.Fprintf(&b, ": %s", e.Provider)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Kind }

// Retryable reports whether err is worth another attempt (rate limits and unavailability).
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable)
}
