package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/anthropic"
	"github.com/labmate/labmate/llm/llmtest"
)

func TestModel(t *testing.T) {
	llmtest.TestModel(t, llmtest.Anthropic, func(srv *llmtest.Server) llm.Model {
		return anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL()})
	})
}

func TestAnthropicRequest(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	srv := llmtest.NewServer(t, llmtest.Text("hi"), llmtest.Text("hi"))
	m := anthropic.New("claude-sonnet-4-5", &anthropic.Options{BaseURL: srv.URL(), APIKey: "sk-ant-test"})
	if m.Name() != "anthropic:claude-sonnet-4-5" {
		t.Errorf("Name() = %q", m.Name())
	}
	ctx := context.Background()
	if _, err := llm.Generate(ctx, m, &llm.Request{System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[0]
	if a, k := c.Header.Get("Authorization"), c.Header.Get("X-Api-Key"); !strings.Contains(a+k, "sk-ant-test") {
		t.Errorf("the key was not sent: Authorization %q, X-Api-Key %q", a, k)
	}
	if c.Header.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	if !strings.Contains(string(c.Body), `"max_tokens":8192`) {
		t.Errorf("the default answer limit was not sent: %s", c.Body)
	}
	var body struct {
		System []struct {
			CacheControl struct{ Type string } `json:"cache_control"`
		}
	}
	if err := json.Unmarshal(c.Body, &body); err != nil || len(body.System) != 1 || body.System[0].CacheControl.Type != "ephemeral" {
		t.Errorf("the system prompt is not marked for the prompt cache: %s", c.Body)
	}

	// Without a key, none is taken from the environment.
	m = anthropic.New("claude-sonnet-4-5", &anthropic.Options{BaseURL: srv.URL()})
	if _, err := llm.Generate(ctx, m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	c = srv.Calls()[1]
	if a, k := c.Header.Get("Authorization"), c.Header.Get("X-Api-Key"); a != "" || k != "" {
		t.Errorf("ANTHROPIC_API_KEY leaked: Authorization %q, X-Api-Key %q", a, k)
	}
}

// TestToolTurns checks the Anthropic turn structure: consecutive tool results and the user
// message after them share one user turn, in order.
func TestToolTurns(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("done"))
	m := anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL()})
	_, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "run", Arguments: []byte(`{}`)}, {ID: "b", Name: "run", Arguments: []byte(`{"x": broken`)}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: "1"},
		{Role: llm.RoleTool, ToolCallID: "b", Content: "invalid JSON", IsError: true},
		{Role: llm.RoleUser, Content: "and?"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := string(srv.Calls()[0].Body)
	if n := strings.Count(body, `"role":"user"`); n != 2 {
		t.Errorf("%d user turns; want 2 (the tool results and the follow-up share one): %s", n, body)
	}
	if !strings.Contains(body, `"input":{"unparsed":"{\"x\": broken"}`) {
		t.Errorf("malformed arguments not wrapped as an object: %s", body)
	}
}

// TestReplay replays testdata/tool_session.json offline (LLMTEST_RECORD=1 records it again).
func TestReplay(t *testing.T) {
	llmtest.TestReplay(t, llmtest.Anthropic, "testdata/tool_session.json", func(base string, hc *http.Client) llm.Model {
		return anthropic.New("claude-sonnet-4-5", &anthropic.Options{BaseURL: base, APIKey: "sk-ant-never-stored", HTTPClient: hc})
	})
}

func BenchmarkStream(b *testing.B) {
	llmtest.BenchmarkModel(b, func(srv *llmtest.Server) llm.Model {
		return anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL()})
	})
}
