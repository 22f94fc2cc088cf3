package providers

import "testing"

func TestModelOllamaURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost":                 "http://localhost:11434/v1",
		"0.0.0.0:8000":              "http://0.0.0.0:8000/v1",
		"http://gpu-box:11434":      "http://gpu-box:11434/v1",
		"https://ollama.example/":   "https://ollama.example/v1",
		"http://localhost:11434/v1": "http://localhost:11434/v1",
	} {
		if got := ollamaURL(in); got != want {
			t.Errorf("ollamaURL(%q) = %q; want %q", in, got, want)
		}
	}
}
