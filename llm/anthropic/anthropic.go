// Package anthropic adapts Anthropic's Messages API to llm.Model on the official
// github.com/anthropics/anthropic-sdk-go SDK.
//
// Requests always stream. Tools become tool definitions; tool results become tool_result blocks in
// a user turn (consecutive RoleTool messages, and a user message right after them, share one
// turn, as the API requires). An llm.OutputSchema becomes a forced tool whose input_schema is the
// schema: the model's input to that tool is returned as the message text (and streamed as text
// deltas), so callers see the same thing as with OpenAI's json_schema. While an output schema is
// set the model can only answer through it. A tool call whose recorded arguments are not valid
// JSON (a malformed call from another model) is sent back as {"unparsed": "<the text>"}, since
// the API only takes objects. The system prompt and the tools are marked for Anthropic's prompt
// cache, so the part of the prompt that repeats on every call of a run is billed at the cached
// rate; cached tokens still count as input in Usage. Provider errors come back as *llm.APIError with the matching
// sentinel and Retry-After. The SDK's own retries are off: labmate retries with llm.WithRetry.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/labmate/labmate/llm"
)

// DefaultBaseURL is Anthropic's API (the SDK appends /v1/messages).
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens limits an answer when the Request does not (the API requires a limit).
const DefaultMaxTokens = 8192

// Options configure a Model. The zero value talks to Anthropic with no key.
type Options struct {
	// BaseURL is the API root, without /v1. Default DefaultBaseURL.
	BaseURL string
	// APIKey authenticates the calls.
	APIKey string
	// HTTPClient carries the requests (a recording transport in tests). Default
	// http.DefaultClient.
	HTTPClient *http.Client
	// MaxTokens limits answers when Request.MaxTokens is 0. Default DefaultMaxTokens.
	MaxTokens int
}

// Model is a Claude model.
type Model struct {
	model  string
	opts   Options
	client sdk.Client
}

// New returns the model named model, such as "claude-sonnet-4-5".
func New(model string, opts *Options) *Model {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // labmate resolves keys and URLs itself
		option.WithBaseURL(strings.TrimSuffix(o.BaseURL, "/") + "/"),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0), // labmate retries (llm.WithRetry)
	}
	if o.APIKey != "" {
		copts = append(copts, option.WithAPIKey(o.APIKey))
	}
	return &Model{model: model, opts: o, client: sdk.NewClient(copts...)}
}

// Name implements llm.Model: anthropic:model.
func (m *Model) Name() string { return "anthropic:" + m.model }

const provider = "anthropic"

// Stream implements llm.Model.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[*llm.Chunk, error] {
	return func(yield func(*llm.Chunk, error) bool) {
		params, outName, err := m.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		var ropts []option.RequestOption
		if req.Temperature != nil {
			ropts = append(ropts, option.WithJSONSet("temperature", *req.Temperature))
		}
		stream := m.client.Messages.NewStreaming(ctx, params, ropts...)
		defer stream.Close()

		type block struct {
			kind string // text or tool_use
			call llm.ToolCall
		}
		var (
			blocks  = map[int64]*block{}
			order   []int64
			text    strings.Builder
			usage   llm.Usage
			stop    string
			model   string
			stopped bool
		)
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "message_start":
				u := ev.Message.Usage
				usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
				usage.OutputTokens = u.OutputTokens
				model = string(ev.Message.Model)
			case "content_block_start":
				b := &block{kind: ev.ContentBlock.Type}
				if b.kind == "tool_use" {
					b.call = llm.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
				}
				if _, dup := blocks[ev.Index]; !dup {
					order = append(order, ev.Index)
				}
				blocks[ev.Index] = b
			case "content_block_delta":
				b := blocks[ev.Index]
				if b == nil {
					yield(nil, &llm.APIError{Kind: llm.ErrProvider, Provider: provider, Message: fmt.Sprintf("a delta for content block %d, which never started", ev.Index)})
					return
				}
				var delta string
				switch ev.Delta.Type {
				case "text_delta":
					delta = ev.Delta.Text
				case "input_json_delta":
					b.call.Arguments = append(b.call.Arguments, ev.Delta.PartialJSON...)
					if b.call.Name == outName {
						delta = ev.Delta.PartialJSON // the structured answer streams as text
					}
				}
				if delta != "" {
					text.WriteString(delta)
					if !yield(&llm.Chunk{Text: delta}, nil) {
						return
					}
				}
			case "message_delta":
				if ev.Delta.StopReason != "" {
					stop = string(ev.Delta.StopReason)
				}
				u := ev.Usage
				usage.OutputTokens = u.OutputTokens // cumulative
				if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > usage.InputTokens {
					usage.InputTokens = in
				}
			case "message_stop":
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, mapError(ctx, err))
			return
		}
		if !stopped {
			yield(nil, &llm.APIError{Kind: llm.ErrUnavailable, Provider: provider, Message: "the stream ended before message_stop"})
			return
		}
		resp := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text.String()}, Usage: usage, Model: model}
		for _, i := range order {
			b := blocks[i]
			if b.kind != "tool_use" || b.call.Name == outName {
				continue
			}
			if len(b.call.Arguments) == 0 {
				b.call.Arguments = json.RawMessage("{}")
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, b.call)
		}
		switch {
		case stop == "max_tokens":
			resp.StopReason = llm.StopMaxTokens
		case len(resp.Message.ToolCalls) > 0:
			resp.StopReason = llm.StopToolUse
		default:
			resp.StopReason = llm.StopEnd
		}
		yield(&llm.Chunk{Response: resp}, nil)
	}
}

// params translates req; outName is the forced output tool's name, "" without an output schema.
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, string, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.model), MaxTokens: int64(m.opts.MaxTokens)}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		// The system prompt and the tools repeat on every call of a run: mark them for the
		// prompt cache (the API ignores the mark below its minimum length).
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	// user collects the blocks of the user turn being built (tool results, then text).
	var user []sdk.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			p.Messages = append(p.Messages, sdk.NewUserMessage(user...))
			user = nil
		}
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleTool:
			if msg.ToolCallID == "" {
				return p, "", fmt.Errorf("%w: %s: messages[%d]: a tool result without ToolCallID", llm.ErrBadRequest, m.Name(), i)
			}
			user = append(user, sdk.NewToolResultBlock(msg.ToolCallID, msg.Content, msg.IsError))
		case llm.RoleUser:
			user = append(user, sdk.NewTextBlock(msg.Content))
			flush()
		case llm.RoleAssistant:
			flush()
			var blocks []sdk.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				var input any = json.RawMessage(tc.Arguments)
				if len(tc.Arguments) == 0 {
					input = map[string]any{}
				} else if !json.Valid(tc.Arguments) || tc.Arguments[0] != '{' {
					input = map[string]any{"unparsed": string(tc.Arguments)}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) > 0 { // the API refuses an empty turn; an empty answer adds nothing
				p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
			}
		default:
			return p, "", fmt.Errorf("%w: %s: messages[%d] has role %q", llm.ErrBadRequest, m.Name(), i, msg.Role)
		}
	}
	flush()
	for i, t := range req.Tools {
		s, err := inputSchema(t.InputSchema)
		if err != nil {
			return p, "", fmt.Errorf("%w: %s: tools[%d] %q: input schema: %w", llm.ErrBadRequest, m.Name(), i, t.Name, err)
		}
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: s}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	var outName string
	if o := req.Output; o != nil {
		s, err := inputSchema(o.Schema)
		if err != nil {
			return p, "", fmt.Errorf("%w: %s: output schema %q: %w", llm.ErrBadRequest, m.Name(), o.Name, err)
		}
		outName = o.Name
		if outName == "" {
			outName = "answer"
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name: outName, InputSchema: s,
			Description: sdk.String("Give your answer by calling this tool; its input is the answer."),
		}})
		p.ToolChoice = sdk.ToolChoiceParamOfTool(outName)
	}
	return p, outName, nil
}

// inputSchema splits a JSON Schema object into the SDK's typed fields and the rest.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, err
	}
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("type is %v; a tool's input must be an object", t)
	}
	delete(m, "type")
	if p, ok := m["properties"]; ok {
		s.Properties = p
		delete(m, "properties")
	}
	if r, ok := m["required"].([]any); ok {
		for _, v := range r {
			name, ok := v.(string)
			if !ok {
				return s, fmt.Errorf("required holds %v, not a property name", v)
			}
			s.Required = append(s.Required, name)
		}
		delete(m, "required")
	}
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

func mapError(ctx context.Context, err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		if apiErr.StatusCode < 400 {
			// An error event inside a 200 stream: classify by its type.
			kind := llm.ErrProvider
			switch apiErr.Type() {
			case "overloaded_error", "api_error":
				kind = llm.ErrUnavailable
			case "rate_limit_error":
				kind = llm.ErrRateLimited
			}
			return &llm.APIError{Kind: kind, Provider: provider, Message: msg}
		}
		return llm.HTTPError(provider, apiErr.StatusCode, h, msg)
	}
	return llm.TransportError(ctx, provider, err)
}

// Models lists the models the key may use (GET /v1/models, first 1000). labmate calls it as a
// preflight: it proves the API is reachable and the key accepted before any work starts.
func (m *Model) Models(ctx context.Context) ([]string, error) {
	page, err := m.client.Models.List(ctx, sdk.ModelListParams{Limit: sdk.Int(1000)})
	if err != nil {
		return nil, mapError(ctx, err)
	}
	ids := make([]string, len(page.Data))
	for i, d := range page.Data {
		ids[i] = d.ID
	}
	return ids, nil
}
