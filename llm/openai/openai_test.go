package openai_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

func TestModel(t *testing.T) {
	llmtest.TestModel(t, llmtest.OpenAI, func(srv *llmtest.Server) llm.Model {
		return openai.New("gpt-test", &openai.Options{BaseURL: srv.OpenAIBaseURL()})
	})
}

func TestOpenAIRequest(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("hi"))
	m := openai.New("gpt-4.1", &openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test"})
	if m.Name() != "openai:gpt-4.1" {
		t.Errorf("Name() = %q", m.Name())
	}
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 300}); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[0]
	if got := c.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	body := string(c.Body)
	if !strings.Contains(body, `"include_usage":true`) {
		t.Errorf("streaming request without stream_options.include_usage: %s", body)
	}
	if !strings.Contains(body, `"max_completion_tokens":300`) || strings.Contains(body, `"max_tokens"`) {
		t.Errorf("OpenAI requests limit with max_completion_tokens only: %s", body)
	}
}

func TestCompatibleServerRequest(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := llmtest.NewServer(t, llmtest.Text("hi"))
	m := openai.New("qwen3:8b", &openai.Options{Provider: "ollama", BaseURL: srv.OpenAIBaseURL()})
	if m.Name() != "ollama:qwen3:8b" {
		t.Errorf("Name() = %q", m.Name())
	}
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[0]
	if body := string(c.Body); !strings.Contains(body, `"max_tokens":50`) {
		t.Errorf("a compatible server gets max_tokens: %s", body)
	}
	if h := c.Header.Get("Authorization"); h != "" {
		t.Errorf("OPENAI_API_KEY leaked to an ollama server: Authorization = %q", h)
	}
	if c.Model != "qwen3:8b" {
		t.Errorf("model on the wire = %q", c.Model)
	}
}

// TestReplay replays testdata/tool_session.json offline (LLMTEST_RECORD=1 records it again).
func TestReplay(t *testing.T) {
	llmtest.TestReplay(t, llmtest.OpenAI, "testdata/tool_session.json", func(base string, hc *http.Client) llm.Model {
		return openai.New("gpt-4.1", &openai.Options{BaseURL: base + "/v1", APIKey: "sk-never-stored", HTTPClient: hc})
	})
}
