// Package openai adapts any OpenAI-compatible chat-completions server to llm.Model, on the
// official github.com/openai/openai-go SDK: OpenAI itself and, with a base URL, Ollama, vLLM, the
// llama.cpp server, LM Studio and OpenRouter.
//
// Requests always stream, with stream_options.include_usage so every Response carries usage; a
// server that ignores it gets its usage estimated with llm.EstimateUsage (about four bytes a
// token) rather than none.
// Tools become function tools, an llm.OutputSchema becomes response_format json_schema, and tool
// results become tool messages. The chat-completions wire has no error flag on a tool result, so
// a failed call's content is sent prefixed with "Error: ". Provider errors come back as
// *llm.APIError with the matching sentinel and Retry-After. The SDK's own retries are off:
// labmate retries with llm.WithRetry.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/labmate/labmate/llm"
	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Model or an Embedder. The zero value talks to OpenAI with no key.
type Options struct {
	// Provider names the server in Name() and in errors: "openai", "ollama", "vllm" …
	// Default "openai".
	Provider string
	// BaseURL is the API root including /v1, such as http://localhost:11434/v1 for Ollama.
	// Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; local servers usually need none.
	APIKey string
	// HTTPClient carries the requests (a recording transport in tests). Default
	// http.DefaultClient.
	HTTPClient *http.Client
	// MaxTokensField is the request field that limits the answer: "max_completion_tokens"
	// (OpenAI's current name, required by its reasoning models) or "max_tokens" (what most
	// compatible servers read). Default: max_completion_tokens for provider openai, max_tokens
	// otherwise.
	MaxTokensField string
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Provider == "" {
		v.Provider = "openai"
	}
	if v.BaseURL == "" {
		v.BaseURL = DefaultBaseURL
	}
	if v.HTTPClient == nil {
		v.HTTPClient = http.DefaultClient
	}
	if v.MaxTokensField == "" {
		v.MaxTokensField = "max_tokens"
		if v.Provider == "openai" {
			v.MaxTokensField = "max_completion_tokens"
		}
	}
	return v
}

func (o *Options) client() oa.Client {
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(o.BaseURL, "/") + "/"),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0), // labmate retries (llm.WithRetry)
	}
	// Always set, even empty: the SDK would otherwise read OPENAI_API_KEY itself and send it to
	// whatever server was chosen. An empty key sends no Authorization header.
	opts = append(opts, option.WithAPIKey(o.APIKey))
	return oa.NewClient(opts...)
}

// Model is a chat model on an OpenAI-compatible server.
type Model struct {
	model  string
	opts   Options
	client oa.Client
}

// New returns the model named model (as the server names it: "gpt-4.1", "qwen3:8b" …).
func New(model string, opts *Options) *Model {
	o := opts.withDefaults()
	return &Model{model: model, opts: o, client: o.client()}
}

// Name implements llm.Model: provider:model.
func (m *Model) Name() string { return m.opts.Provider + ":" + m.model }

// Stream implements llm.Model.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[*llm.Chunk, error] {
	return func(yield func(*llm.Chunk, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()

		var (
			text     strings.Builder
			calls    []*llm.ToolCall // by index
			finish   string
			usage    llm.Usage
			gotUsage bool
			model    string
		)
		for stream.Next() {
			c := stream.Current()
			if c.Model != "" {
				model = c.Model
			}
			if c.JSON.Usage.Valid() {
				usage = llm.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
				gotUsage = true
			}
			for _, ch := range c.Choices {
				if ch.Index != 0 {
					continue
				}
				if ch.FinishReason != "" {
					finish = ch.FinishReason
				}
				for _, d := range ch.Delta.ToolCalls {
					i := int(d.Index)
					if i < 0 || i > len(calls) {
						yield(nil, &llm.APIError{Kind: llm.ErrProvider, Provider: m.opts.Provider, Message: fmt.Sprintf("tool call delta with index %d after %d calls", i, len(calls))})
						return
					}
					// Some compatible servers number every call 0; a new id means a new call.
					if i < len(calls) && d.ID != "" && calls[i].ID != "" && d.ID != calls[i].ID {
						i = len(calls)
					}
					if i == len(calls) {
						calls = append(calls, &llm.ToolCall{})
					}
					tc := calls[i]
					if tc.ID == "" {
						tc.ID = d.ID
					}
					if tc.Name == "" { // sent once by OpenAI, repeated by some servers
						tc.Name = d.Function.Name
					}
					tc.Arguments = append(tc.Arguments, d.Function.Arguments...)
				}
				if d := ch.Delta.Content; d != "" {
					text.WriteString(d)
					if !yield(&llm.Chunk{Text: d}, nil) {
						return
					}
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, m.mapError(ctx, err))
			return
		}
		if finish == "" {
			yield(nil, &llm.APIError{Kind: llm.ErrUnavailable, Provider: m.opts.Provider, Message: "the stream ended before the answer finished"})
			return
		}
		resp := &llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: text.String()},
			Usage:   usage,
			Model:   model,
		}
		for i, tc := range calls {
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d", i)
			}
			if len(tc.Arguments) == 0 {
				tc.Arguments = json.RawMessage("{}")
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, *tc)
		}
		if !gotUsage {
			// An older server that ignores stream_options.include_usage: estimate, so that
			// budgets and per-module counts still mean something.
			resp.Usage = llm.EstimateUsage(req, &resp.Message)
		}
		switch {
		case finish == "length":
			resp.StopReason = llm.StopMaxTokens
		case len(calls) > 0:
			resp.StopReason = llm.StopToolUse
		default:
			resp.StopReason = llm.StopEnd
		}
		yield(&llm.Chunk{Response: resp}, nil)
	}
}

// params translates req into the SDK's request.
func (m *Model) params(req *llm.Request) (oa.ChatCompletionNewParams, error) {
	p := oa.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.model),
		StreamOptions: oa.ChatCompletionStreamOptionsParam{IncludeUsage: oa.Bool(true)},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oa.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			p.Messages = append(p.Messages, oa.UserMessage(msg.Content))
		case llm.RoleAssistant:
			a := oa.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(msg.Content)
			}
			for _, tc := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Arguments)},
					},
				})
			}
			p.Messages = append(p.Messages, oa.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			content := msg.Content
			if msg.IsError {
				content = "Error: " + content
			}
			p.Messages = append(p.Messages, oa.ToolMessage(content, msg.ToolCallID))
		default:
			return p, fmt.Errorf("%w: %s: messages[%d] has role %q", llm.ErrBadRequest, m.Name(), i, msg.Role)
		}
	}
	for i, t := range req.Tools {
		var schema map[string]any
		if len(t.InputSchema) > 0 {
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				return p, fmt.Errorf("%w: %s: tools[%d] %q: input schema: %w", llm.ErrBadRequest, m.Name(), i, t.Name, err)
			}
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = oa.String(t.Description)
		}
		p.Tools = append(p.Tools, oa.ChatCompletionFunctionTool(fd))
	}
	if o := req.Output; o != nil {
		if !json.Valid(o.Schema) {
			return p, fmt.Errorf("%w: %s: output schema %q is not valid JSON", llm.ErrBadRequest, m.Name(), o.Name)
		}
		name := o.Name
		if name == "" {
			name = "answer"
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: o.Schema},
		}
	}
	if req.MaxTokens > 0 {
		if m.opts.MaxTokensField == "max_completion_tokens" {
			p.MaxCompletionTokens = oa.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = oa.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = oa.Float(*req.Temperature)
	}
	return p, nil
}

// mapError turns an SDK error into an *llm.APIError (or the caller's cancellation).
func (m *Model) mapError(ctx context.Context, err error) error {
	return mapError(ctx, m.opts.Provider, err)
}

func mapError(ctx context.Context, provider string, err error) error {
	var apiErr *oa.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		return llm.HTTPError(provider, apiErr.StatusCode, h, msg)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// An error event inside a 200 stream: the provider failed mid-answer.
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Code    any    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(se.Event.Data, &body)
		kind := llm.ErrProvider
		switch t := strings.ToLower(body.Error.Type + fmt.Sprint(body.Error.Code)); {
		case strings.Contains(t, "rate_limit"):
			kind = llm.ErrRateLimited
		case strings.Contains(t, "server_error"), strings.Contains(t, "overloaded"), strings.Contains(t, "unavailable"):
			kind = llm.ErrUnavailable
		}
		msg := body.Error.Message
		if msg == "" {
			msg = se.Message
		}
		return &llm.APIError{Kind: kind, Provider: provider, Message: msg}
	}
	return llm.TransportError(ctx, provider, err)
}

// Models lists the models the server offers (GET /models). labmate calls it as a preflight:
// it proves the server is reachable and the key accepted before any work starts.
func (m *Model) Models(ctx context.Context) ([]string, error) {
	page, err := m.client.Models.List(ctx)
	if err != nil {
		return nil, mapError(ctx, m.opts.Provider, err)
	}
	ids := make([]string, len(page.Data))
	for i, d := range page.Data {
		ids[i] = d.ID
	}
	return ids, nil
}
