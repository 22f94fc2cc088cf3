package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/providers"
)

// modelEnv is a clean environment for model resolution: no model, no keys, no base URLs from
// the machine, and a config directory of the test's own.
func modelEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "LABMATE_MODEL=", "LABMATE_EMBEDDER="}
	for _, v := range providers.Vars() {
		env = append(env, v+"=")
	}
	return append(env, extra...)
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestModelCheckErrors(t *testing.T) {
	down := closedPort(t)
	srv := llmtest.NewServer(t)
	srv.SetKey("sk-right")
	srv.SetModels("llama3.2:latest")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string // all in the one-line error
	}{
		{"no model", nil, nil, []string{"no model configured", "--model ollama:qwen3:8b", "LABMATE_MODEL", "config.yaml"}},
		{"not a spec", nil, []string{"gpt-4.1"}, []string{`"gpt-4.1"`, "not PROVIDER:MODEL"}},
		{"unknown provider", nil, []string{"acme:big"}, []string{`unknown provider "acme"`, "openai, anthropic, ollama, vllm, llamacpp, lmstudio, openrouter"}},
		{"missing key", nil, []string{"openai:gpt-4.1"}, []string{"openai needs an API key: set OPENAI_API_KEY"}},
		{"missing anthropic key", []string{"LABMATE_MODEL=anthropic:claude-sonnet-4-5"}, nil, []string{"set ANTHROPIC_API_KEY"}},
		{"unreachable", []string{"OLLAMA_HOST=" + down}, []string{"ollama:qwen3:8b"}, []string{"cannot reach ollama at http://" + down + "/v1", "ollama serve"}},
		{"key rejected", []string{"OPENAI_BASE_URL=" + srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-wrong"}, []string{"openai:gpt-4.1"}, []string{"rejected the key in OPENAI_API_KEY", "HTTP 401"}},
		{"model not pulled", []string{"OLLAMA_HOST=" + srv.URL(), "OLLAMA_API_KEY=sk-right"}, []string{"ollama:qwen3:8b"}, []string{`does not have model "qwen3:8b"`, "ollama pull qwen3:8b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := labmateEnv(t, modelEnv(t, tc.env...), t.TempDir(), "", append([]string{"model", "check"}, tc.args...)...)
			if code != 1 || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 1 and nothing on stdout", code, out)
			}
			if strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not contain %q", errOut, w)
				}
			}
		})
	}
}

func TestModelCheckOK(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetKey("sk-test")
	srv.SetModels("gpt-test", "claude-test", "qwen3:8b")
	cfgDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgDir, "labmate"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "labmate", "config.yaml")
	if err := os.WriteFile(cfg, []byte("model: vllm:qwen3:8b\nproviders:\n  vllm:\n    base_url: "+srv.OpenAIBaseURL()+"\n    api_key_env: MY_VLLM_KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                     string
		env                      []string
		args                     []string
		provider, model, baseURL string
		source                   string
	}{
		{"openai", []string{"OPENAI_BASE_URL=" + srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test"}, []string{"openai:gpt-test"}, "openai", "gpt-test", srv.OpenAIBaseURL(), "flag"},
		{"anthropic from LABMATE_MODEL", []string{"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-test", "LABMATE_MODEL=anthropic:claude-test"}, nil, "anthropic", "claude-test", srv.URL(), "LABMATE_MODEL"},
		{"ollama host:port", []string{"OLLAMA_HOST=" + strings.TrimPrefix(srv.URL(), "http://"), "OLLAMA_API_KEY=sk-test"}, []string{"ollama:qwen3:8b"}, "ollama", "qwen3:8b", srv.OpenAIBaseURL(), "flag"},
		{"config file", []string{"XDG_CONFIG_HOME=" + cfgDir, "MY_VLLM_KEY=sk-test"}, nil, "vllm", "qwen3:8b", srv.OpenAIBaseURL(), cfg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := labmateEnv(t, append(modelEnv(t), tc.env...), t.TempDir(), "", append([]string{"model", "check", "--json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			var rep struct {
				OK     bool
				Listed bool
				Model  struct {
					Provider, Model, Source string
					BaseURL                 string `json:"base_url"`
					KeySet                  bool   `json:"key_set"`
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			m := rep.Model
			if !rep.OK || !rep.Listed || m.Provider != tc.provider || m.Model != tc.model || m.BaseURL != tc.baseURL || m.Source != tc.source || !m.KeySet {
				t.Errorf("report = %s", out)
			}
		})
	}
	// Text output: the result on stdout, the details on stderr.
	out, errOut, code := labmateEnv(t, modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test"), t.TempDir(), "", "model", "check", "openai:gpt-test")
	if code != 0 || !strings.HasPrefix(out, "openai:gpt-test: ok (openai at "+srv.OpenAIBaseURL()) || !strings.Contains(errOut, "key OPENAI_API_KEY set") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the check spent %d model calls; it must only list models", n)
	}
}

func TestModelCheckJSONFailure(t *testing.T) {
	out, _, code := labmateEnv(t, modelEnv(t), t.TempDir(), "", "model", "check", "--json", "openrouter:meta/llama")
	var rep struct {
		OK    bool
		Error string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || !strings.Contains(rep.Error, "set OPENROUTER_API_KEY") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestModelConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "modle: ollama:qwen3:8b\n", `config.yaml:1: unknown key "modle" (known: model, embedder, providers); did you mean "model"?`},
		{"unknown provider", "providers:\n  olama:\n    base_url: http://x\n", `config.yaml:2: unknown provider "olama" under providers (known: openai, anthropic, ollama, vllm, llamacpp, lmstudio, openrouter); did you mean "ollama"?`},
		{"unknown provider key", "model: x\nproviders:\n  ollama:\n    baseurl: http://x\n", `config.yaml:4: unknown key "baseurl" under providers.ollama (known: base_url, api_key_env); did you mean "base_url"?`},
		{"bad yaml", "model: [unclosed\n", "config.yaml:1: did not find expected ',' or ']' (the file is not valid YAML)"},
		{"not a mapping", "- model\n", "config.yaml:1: the config is a mapping of model, embedder and providers, not a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "labmate"), 0o755)
			os.WriteFile(filepath.Join(dir, "labmate", "config.yaml"), []byte(tc.body), 0o644)
			_, errOut, code := labmateEnv(t, append(modelEnv(t), "XDG_CONFIG_HOME="+dir), t.TempDir(), "", "model", "check")
			if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, filepath.Join(dir, "labmate", "config.yaml")) {
				t.Errorf("exit %d, stderr %q; want the file and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestModelCheckEmbedder(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetModels("nomic-embed-text:latest")
	env := modelEnv(t, "OLLAMA_HOST="+srv.URL(), "LABMATE_EMBEDDER=ollama:nomic-embed-text")
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "model", "check", "--embedder", "--json")
	var rep struct {
		OK         bool
		Dimensions int
		Model      struct{ Provider, Model, Source string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || rep.Dimensions != llmtest.EmbedDim || rep.Model.Source != "LABMATE_EMBEDDER" || rep.Model.Model != "nomic-embed-text" {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = labmateEnv(t, env, t.TempDir(), "", "model", "check", "--embedder", "anthropic:claude-sonnet-4-5")
	if code != 1 || !strings.Contains(errOut, "set ANTHROPIC_API_KEY") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = labmateEnv(t, append(env, "ANTHROPIC_API_KEY=k"), t.TempDir(), "", "model", "check", "--embedder", "anthropic:claude-sonnet-4-5")
	if code != 1 || !strings.Contains(errOut, "anthropic serves no embeddings") || !strings.Contains(errOut, "ollama:nomic-embed-text") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A misspelt key or a broken config file does not block the commands that do not need it:
// memory and docs run, warning with the file and the line.
func TestConfigTypoDoesNotBlock(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"modle: ollama:qwen3:8b\n", `config.yaml:1: unknown key "modle"`},
		{"model: [unclosed\n", "config.yaml:1: did not find expected ',' or ']'"},
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "labmate"), 0o755)
		os.WriteFile(filepath.Join(dir, "labmate", "config.yaml"), []byte(tc.body), 0o644)
		env := append(modelEnv(t), "XDG_CONFIG_HOME="+dir)
		work := t.TempDir()
		os.WriteFile(filepath.Join(work, "notes.md"), []byte("# Stiff solvers\node15s suits stiff problems.\n"), 0o644)
		for _, args := range [][]string{
			{"memory", "list", "--store", filepath.Join(work, "memory.db")},
			{"docs", "index", "--store", filepath.Join(work, "docs.db"), filepath.Join(work, "notes.md")},
		} {
			_, errOut, code := labmateEnv(t, env, work, "", args...)
			if code != 0 || !strings.Contains(errOut, "warning") || !strings.Contains(errOut, tc.want) {
				t.Errorf("%q with config %q: exit %d, stderr %q; want 0 and a warning with %q", args, tc.body, code, errOut, tc.want)
			}
		}
	}
}
