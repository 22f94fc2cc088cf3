package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labmate/labmate/llm"
)

// The OpenAI chat-completions wire format, as much of it as labmate uses.

type oaRequest struct {
	Model    string      `json:"model"`
	Messages []oaMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaToolCall    `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// decodeOpenAI turns a chat-completions request body into an llm.Request.
func decodeOpenAI(body []byte) (*llm.Request, string, bool, error) {
	var in oaRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, "", false, err
	}
	req := &llm.Request{Temperature: in.Temperature, MaxTokens: max(in.MaxTokens, in.MaxCompletionTokens)}
	for i, m := range in.Messages {
		text, err := textContent(m.Content)
		if err != nil {
			return nil, "", false, fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			if req.System != "" {
				req.System += "\n\n"
			}
			req.System += text
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: text}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return nil, "", false, fmt.Errorf("messages[%d]: a tool message without tool_call_id", i)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: m.ToolCallID})
		default:
			return nil, "", false, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	for i, t := range in.Tools {
		if t.Type != "function" {
			return nil, "", false, fmt.Errorf("tools[%d]: type %q, want function", i, t.Type)
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil {
			return nil, "", false, fmt.Errorf("response_format: json_schema without its json_schema object")
		}
		req.Output = &llm.OutputSchema{Name: rf.JSONSchema.Name, Schema: rf.JSONSchema.Schema}
	}
	return req, in.Model, in.Stream, nil
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	c := s.readCall(w, r, OpenAI, decodeOpenAI)
	if c == nil {
		return
	}
	turn, ok := s.take(c)
	if !ok {
		writeError(w, OpenAI, http.StatusInternalServerError, "llmtest: the script is exhausted", 0)
		return
	}
	if !prepare(w, r, c, turn) {
		return
	}
	var in oaRequest
	json.Unmarshal(c.Body, &in) // decoded once already
	id := fmt.Sprintf("chatcmpl-llmtest-%d", c.N)
	created := time.Now().Unix()
	u := usage(turn, c.Request)
	oaUsage := map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.Total()}
	finish := map[llm.StopReason]string{llm.StopEnd: "stop", llm.StopToolUse: "tool_calls", llm.StopMaxTokens: "length"}[stopReason(turn)]
	calls := make([]oaToolCall, len(turn.ToolCalls))
	for i, tc := range turn.ToolCalls {
		calls[i].ID = tc.ID
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", c.N, i)
		}
		calls[i].Type = "function"
		calls[i].Function.Name = tc.Name
		calls[i].Function.Arguments = string(tc.Arguments)
	}

	if !c.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if turn.Text != "" || len(calls) == 0 {
			msg["content"] = turn.Text
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		answer := map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		}
		if !turn.NoUsage {
			answer["usage"] = oaUsage
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
		return
	}

	out := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	out.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	parts := pieces(turn.Text)
	for i, p := range parts {
		if (turn.Drop == DropMidStream || turn.Drop == ErrorMidStream) && i >= (len(parts)+1)/2 {
			out.cut(OpenAI, turn)
			return
		}
		out.event("", chunk(map[string]any{"content": p}, nil))
	}
	if turn.Drop == DropMidStream || turn.Drop == ErrorMidStream {
		out.cut(OpenAI, turn)
		return
	}
	for i, tc := range calls {
		first := map[string]any{"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Function.Name, "arguments": ""}}
		out.event("", chunk(map[string]any{"tool_calls": []any{first}}, nil))
		for _, p := range pieces(tc.Function.Arguments) {
			out.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	out.event("", chunk(map[string]any{}, finish))
	if in.StreamOptions != nil && in.StreamOptions.IncludeUsage && !turn.NoUsage {
		out.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model, "choices": []any{}, "usage": oaUsage})
	}
	out.event("", "[DONE]")
}
