package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labmate/labmate/llm"
)

// The Anthropic Messages wire format, as much of it as labmate uses. An output schema travels as
// a forced tool (tool_choice {"type":"tool"}): the server decodes that tool back into
// Request.Output and answers a JSON Turn with a tool_use block of that name.

type anRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Stream      bool     `json:"stream"`
	Temperature *float64 `json:"temperature"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func anBlocks(raw json.RawMessage) ([]anBlock, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []anBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("content is neither a string nor a list of blocks: %s", raw)
	}
	return bs, nil
}

// decodeAnthropic turns a Messages request body into an llm.Request.
func decodeAnthropic(body []byte) (*llm.Request, string, bool, error) {
	var in anRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, "", false, err
	}
	if in.MaxTokens <= 0 {
		return nil, "", false, fmt.Errorf("max_tokens is required and must be positive, got %d", in.MaxTokens)
	}
	sys, err := textContent(in.System)
	if err != nil {
		return nil, "", false, fmt.Errorf("system: %w", err)
	}
	req := &llm.Request{System: sys, Temperature: in.Temperature, MaxTokens: in.MaxTokens}
	for i, m := range in.Messages {
		blocks, err := anBlocks(m.Content)
		if err != nil {
			return nil, "", false, fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "user":
			for j, b := range blocks {
				switch b.Type {
				case "text":
					if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleUser {
						req.Messages[n-1].Content += b.Text
					} else {
						req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: b.Text})
					}
				case "tool_result":
					text, err := textContent(b.Content)
					if err != nil {
						return nil, "", false, fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
					}
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID, Content: text, IsError: b.IsError})
				default:
					return nil, "", false, fmt.Errorf("messages[%d].content[%d]: block type %q in a user turn", i, j, b.Type)
				}
			}
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			for j, b := range blocks {
				switch b.Type {
				case "text":
					msg.Content += b.Text
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
				default:
					return nil, "", false, fmt.Errorf("messages[%d].content[%d]: block type %q in an assistant turn", i, j, b.Type)
				}
			}
			req.Messages = append(req.Messages, msg)
		default:
			return nil, "", false, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	for _, t := range in.Tools {
		if tc := in.ToolChoice; tc != nil && tc.Type == "tool" && tc.Name == t.Name {
			req.Output = &llm.OutputSchema{Name: t.Name, Schema: t.InputSchema}
			continue
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if tc := in.ToolChoice; tc != nil && tc.Type == "tool" && req.Output == nil {
		return nil, "", false, fmt.Errorf("tool_choice forces tool %q, which is not among the tools", tc.Name)
	}
	return req, in.Model, in.Stream, nil
}

func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	c := s.readCall(w, r, Anthropic, decodeAnthropic)
	if c == nil {
		return
	}
	turn, ok := s.take(c)
	if !ok {
		writeError(w, Anthropic, http.StatusInternalServerError, "llmtest: the script is exhausted", 0)
		return
	}
	if !prepare(w, r, c, turn) {
		return
	}
	id := fmt.Sprintf("msg_llmtest_%d", c.N)
	u := usage(turn, c.Request)
	stop := map[llm.StopReason]string{llm.StopEnd: "end_turn", llm.StopToolUse: "tool_use", llm.StopMaxTokens: "max_tokens"}[stopReason(turn)]

	// The answer as content blocks: text, or the forced output tool, then tool calls.
	type block struct {
		kind, text, id, name string
	}
	var blocks []block
	switch {
	case c.Request.Output != nil && len(turn.ToolCalls) == 0:
		blocks = append(blocks, block{kind: "tool_use", id: fmt.Sprintf("toolu_%d_out", c.N), name: c.Request.Output.Name, text: turn.Text})
		if turn.Stop == "" {
			stop = "tool_use" // what the API says when it answers through the forced tool
		}
	case turn.Text != "" || len(turn.ToolCalls) == 0:
		blocks = append(blocks, block{kind: "text", text: turn.Text})
	}
	for i, tc := range turn.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%d_%d", c.N, i)
		}
		blocks = append(blocks, block{kind: "tool_use", id: id, name: tc.Name, text: string(tc.Arguments)})
	}

	if !c.Stream {
		content := make([]any, len(blocks))
		for i, b := range blocks {
			if b.kind == "text" {
				content[i] = map[string]any{"type": "text", "text": b.text}
				continue
			}
			var input any = json.RawMessage(b.text)
			if !json.Valid([]byte(b.text)) {
				input = b.text // cannot inline invalid JSON in a JSON body
			}
			content[i] = map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": input}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens},
		})
		return
	}

	out := newSSE(w)
	out.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": 1},
	}})
	out.event("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		if b.kind == "text" {
			out.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			parts := pieces(b.text)
			for j, p := range parts {
				if (turn.Drop == DropMidStream || turn.Drop == ErrorMidStream) && j >= (len(parts)+1)/2 {
					out.cut(Anthropic, turn)
					return
				}
				out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": p}})
			}
		} else {
			out.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}})
			for _, p := range pieces(b.text) {
				out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
		}
		if turn.Drop == DropMidStream || turn.Drop == ErrorMidStream {
			out.cut(Anthropic, turn)
			return
		}
		out.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	out.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.OutputTokens}})
	out.event("message_stop", map[string]any{"type": "message_stop"})
}
