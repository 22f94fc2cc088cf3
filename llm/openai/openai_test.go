package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func BenchmarkStream(b *testing.B) {
	llmtest.BenchmarkModel(b, func(srv *llmtest.Server) llm.Model {
		return openai.New("gpt-test", &openai.Options{BaseURL: srv.OpenAIBaseURL()})
	})
}

// TestUsageEstimatedWhenNotReported: a server that ignores stream_options.include_usage still
// yields a Response with usage, estimated from the sizes.
func TestUsageEstimatedWhenNotReported(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Turn{Text: strings.Repeat("abcd", 10), NoUsage: true})
	req := &llm.Request{System: strings.Repeat("s", 40), Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("u", 36)}}}
	resp, err := llm.Generate(context.Background(), openai.New("old", &openai.Options{Provider: "llamacpp", BaseURL: srv.OpenAIBaseURL()}), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := (llm.Usage{InputTokens: 20, OutputTokens: 10}); resp.Usage != want {
		t.Errorf("usage = %+v; want the estimate %+v", resp.Usage, want)
	}
}

// TestLooseToolCallDeltas: servers that number every call 0, or repeat the name in every delta,
// still give one ToolCall per call. The stream is written by hand, as such a server sends it.
func TestLooseToolCallDeltas(t *testing.T) {
	const stream = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"run","arguments":"{\"code\":"}}]},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"run","arguments":"\"1\"}"}}]},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}

data: [DONE]

`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	defer srv.Close()
	resp, err := llm.Generate(context.Background(), openai.New("m", &openai.Options{Provider: "vllm", BaseURL: srv.URL + "/v1"}), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "a", Name: "run", Arguments: json.RawMessage(`{"code":"1"}`)}, {ID: "b", Name: "search", Arguments: json.RawMessage(`{}`)}}
	if d := cmp.Diff(want, resp.Message.ToolCalls); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
}
