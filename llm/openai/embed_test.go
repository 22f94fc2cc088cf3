package openai_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

func TestEmbedder(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetKey("sk-e")
	var e llm.Embedder = openai.NewEmbedder("nomic-embed-text", &openai.Options{Provider: "ollama", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-e"})
	if e.Name() != "ollama:nomic-embed-text" {
		t.Errorf("Name() = %q", e.Name())
	}
	texts := make([]string, 300) // more than one batch
	for i := range texts {
		texts[i] = fmt.Sprintf("observation %d: step size %d", i, i%7)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		want := llmtest.Embed(texts[i])
		if len(v) != len(want) {
			t.Fatalf("vector %d: %d dimensions", i, len(v))
		}
		for j := range v {
			if v[j] != want[j] {
				t.Fatalf("vector %d is not the embedding of its own text (out of order?)", i)
			}
		}
	}
	if vecs, err := e.Embed(context.Background(), nil); err != nil || len(vecs) != 0 {
		t.Errorf("no texts: %v, %v", vecs, err)
	}

	bad := openai.NewEmbedder("nomic-embed-text", &openai.Options{Provider: "ollama", BaseURL: srv.OpenAIBaseURL(), APIKey: "wrong"})
	if _, err := bad.Embed(context.Background(), []string{"x"}); !errors.Is(err, llm.ErrAuth) {
		t.Errorf("wrong key: err = %v; want ErrAuth", err)
	}
	srv.Close()
	if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("server down: err = %v; want ErrUnavailable", err)
	}
}
