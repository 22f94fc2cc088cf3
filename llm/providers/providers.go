// Package providers resolves model specs, PROVIDER:MODEL (openai:gpt-4.1, anthropic:claude-sonnet-4-5,
// ollama:qwen3:8b, …), to the adapters of package llm: the spec comes from a flag, else an
// environment variable, else the config file ($XDG_CONFIG_HOME/labmate/config.yaml); base URLs
// and keys from the providers' usual variables. A preflight lists the server's models with a
// short timeout, so that an unreachable server or a rejected key is one actionable line before
// any work starts.
package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/anthropic"
	"github.com/labmate/labmate/llm/openai"
)

// provider is a way to reach models: its wire format, where it usually listens, the
// environment variables that override that and hold its key, and what to do when it is down.
type provider struct {
	name       string
	anthropic  bool     // the Anthropic wire format; otherwise OpenAI-compatible
	baseURL    string   // the default API root
	baseURLEnv []string // environment variables that override baseURL, first set wins
	keyEnv     string   // the environment variable holding the key
	keyNeeded  bool     // refuse to start without a key
	startHint  string   // what to tell a user whose server is unreachable
}

var providers = []provider{
	{name: "openai", baseURL: openai.DefaultBaseURL, baseURLEnv: []string{"OPENAI_BASE_URL"}, keyEnv: "OPENAI_API_KEY", keyNeeded: true,
		startHint: "check your network, or OPENAI_BASE_URL"},
	{name: "anthropic", anthropic: true, baseURL: anthropic.DefaultBaseURL, baseURLEnv: []string{"ANTHROPIC_BASE_URL"}, keyEnv: "ANTHROPIC_API_KEY", keyNeeded: true,
		startHint: "check your network, or ANTHROPIC_BASE_URL"},
	{name: "ollama", baseURL: "http://localhost:11434/v1", baseURLEnv: []string{"OLLAMA_HOST"}, keyEnv: "OLLAMA_API_KEY",
		startHint: "start it with `ollama serve`, or point OLLAMA_HOST at it"},
	{name: "vllm", baseURL: "http://localhost:8000/v1", baseURLEnv: []string{"VLLM_BASE_URL"}, keyEnv: "VLLM_API_KEY",
		startHint: "start it with `vllm serve MODEL`, or set VLLM_BASE_URL"},
	{name: "llamacpp", baseURL: "http://localhost:8080/v1", baseURLEnv: []string{"LLAMACPP_BASE_URL", "LLAMA_SERVER_URL"}, keyEnv: "LLAMA_API_KEY",
		startHint: "start it with `llama-server -m MODEL.gguf`, or set LLAMACPP_BASE_URL"},
	{name: "lmstudio", baseURL: "http://localhost:1234/v1", baseURLEnv: []string{"LMSTUDIO_BASE_URL", "LM_STUDIO_BASE_URL"}, keyEnv: "LMSTUDIO_API_KEY",
		startHint: "start LM Studio's server with `lms server start`, or set LMSTUDIO_BASE_URL"},
	{name: "openrouter", baseURL: "https://openrouter.ai/api/v1", baseURLEnv: []string{"OPENROUTER_BASE_URL"}, keyEnv: "OPENROUTER_API_KEY", keyNeeded: true,
		startHint: "check your network, or OPENROUTER_BASE_URL"},
}

// Names are the providers' names, comma-separated.
func Names() string { return strings.Join(providerNames(), ", ") }

func findProvider(name string) (provider, bool) {
	i := slices.IndexFunc(providers, func(p provider) bool { return p.name == name })
	if i < 0 {
		return provider{}, false
	}
	return providers[i], true
}

// Resolved is a spec resolved to a provider, a model and how to reach it.
type Resolved struct {
	Spec     string `json:"spec"`
	Source   string `json:"source"` // flag, LABMATE_MODEL, or the config file's path
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url"`
	KeyEnv   string `json:"key_env,omitempty"`
	KeySet   bool   `json:"key_set"`

	p   provider
	key string
}

// Resolve picks the spec (flag, then the environment variable env, then the config file's
// key) and resolves it. what is "model" or "embedder", for the messages.
func Resolve(spec, env, what string) (*Resolved, error) {
	cfg, err := LoadConfig()
	if err != nil {
		return nil, err
	}
	source := "flag"
	if spec == "" {
		spec, source = os.Getenv(env), env
	}
	if spec == "" {
		spec, source = cfg.Model, cfg.Path
		if what == "embedder" {
			spec = cfg.Embedder
		}
	}
	if spec == "" {
		flag := map[string]string{"model": "--model", "embedder": "--embedder"}[what]
		// An embedder is an embedding model (Anthropic serves none), never a chat model.
		a, b := "ollama:qwen3:8b", "anthropic:claude-sonnet-4-5"
		if what == "embedder" {
			a, b = "ollama:nomic-embed-text", "openai:text-embedding-3-small"
		}
		return nil, fmt.Errorf("no %s configured: pass %s PROVIDER:MODEL (e.g. %s %s or %s %s), set %s, or put `%s: …` in %s%s",
			what, flag, flag, a, flag, b, env, what, cfg.Path, cfg.problems())
	}
	name, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" {
		example := "ollama:qwen3:8b or openai:gpt-4.1"
		if what == "embedder" {
			example = "ollama:nomic-embed-text or openai:text-embedding-3-small"
		}
		return nil, fmt.Errorf("%s spec %q (from %s) is not PROVIDER:MODEL, e.g. %s", what, spec, source, example)
	}
	p, ok := findProvider(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q in %s spec %q (from %s): choose one of %s", name, what, spec, source, Names())
	}
	r := &Resolved{Spec: spec, Source: source, Provider: name, Model: model, BaseURL: p.baseURL, KeyEnv: p.keyEnv, p: p}
	pc := cfg.Providers[name]
	if pc.BaseURL != "" {
		r.BaseURL = pc.BaseURL
	}
	for _, e := range p.baseURLEnv {
		if v := os.Getenv(e); v != "" {
			r.BaseURL = v
			break
		}
	}
	if name == "ollama" {
		r.BaseURL = ollamaURL(r.BaseURL)
	}
	if pc.APIKeyEnv != "" {
		r.KeyEnv = pc.APIKeyEnv
	}
	r.key = os.Getenv(r.KeyEnv)
	r.KeySet = r.key != ""
	if p.keyNeeded && !r.KeySet {
		return nil, fmt.Errorf("%s needs an API key: set %s", name, r.KeyEnv)
	}
	return r, nil
}

// ollamaURL turns OLLAMA_HOST's forms (host, host:port, a URL with or without /v1) into the
// OpenAI-compatible API root.
func ollamaURL(v string) string {
	v = strings.TrimSuffix(v, "/")
	if !strings.Contains(v, "://") {
		if !strings.Contains(v, ":") && !strings.Contains(v, "/") {
			v += ":11434" // a bare host, as OLLAMA_HOST allows
		}
		v = "http://" + v
	}
	if !strings.HasSuffix(v, "/v1") {
		v += "/v1"
	}
	return v
}

// preflightTimeout bounds the reachability check before any work starts.
const preflightTimeout = 5 * time.Second

// Lister is what both adapters offer for the preflight: a model that lists its server's models.
type Lister interface {
	llm.Model
	Models(context.Context) ([]string, error)
}

// Open is the resolved model on the matching adapter, without retries.
func (r *Resolved) Open() Lister {
	if r.p.anthropic {
		return anthropic.New(r.Model, &anthropic.Options{BaseURL: r.BaseURL, APIKey: r.key})
	}
	return openai.New(r.Model, &openai.Options{Provider: r.Provider, BaseURL: r.BaseURL, APIKey: r.key})
}

// Preflight lists the server's models with a short timeout and turns failures into one
// actionable line. It reports whether the model is among those listed.
func (r *Resolved) Preflight(ctx context.Context, m Lister) (listed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	ids, err := m.Models(ctx)
	if err != nil {
		switch {
		case errors.Is(err, llm.ErrAuth):
			return false, fmt.Errorf("%s rejected the key in %s (%s): check it", r.Provider, r.KeyEnv, textcut.FirstLine(err.Error()))
		case errors.Is(err, llm.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			return false, fmt.Errorf("cannot reach %s at %s (%s): %s", r.Provider, r.BaseURL, textcut.FirstLine(err.Error()), r.p.startHint)
		}
		return false, fmt.Errorf("%s at %s answered the models list with an error (%s)", r.Provider, r.BaseURL, textcut.FirstLine(err.Error()))
	}
	listed = slices.Contains(ids, r.Model)
	if !listed && r.Provider == "ollama" && !slices.Contains(ids, r.Model+":latest") {
		return false, fmt.Errorf("ollama at %s does not have model %q: pull it with `ollama pull %s`", r.BaseURL, r.Model, r.Model)
	}
	return listed || r.Provider == "ollama", nil
}

// NewModel resolves spec (the --model flag; "" falls back to LABMATE_MODEL, then the config
// file), checks that the provider is reachable and the key accepted, and returns the model with
// retries. Every failure is one actionable line, before any work starts.
func NewModel(ctx context.Context, spec string) (llm.Model, error) {
	r, err := Resolve(spec, "LABMATE_MODEL", "model")
	if err != nil {
		return nil, err
	}
	m := r.Open()
	if _, err := r.Preflight(ctx, m); err != nil {
		return nil, err
	}
	return llm.WithRetry(m, nil), nil
}

// OptionalModel is NewModel for the places where a model is an extra (labmate serve's agent
// runs): with no model configured anywhere it returns nil. A config file it cannot read when
// it needs it (no flag or environment variable) is a warning on warn, and no model.
func OptionalModel(ctx context.Context, spec string, warn io.Writer) (llm.Model, error) {
	if !configured(spec, "LABMATE_MODEL", "model", warn) {
		return nil, nil
	}
	return NewModel(ctx, spec)
}

// OptionalEmbedder is NewEmbedder for the places where embeddings are an extra (hybrid search in
// memory and the documentation index): with no embedder configured anywhere it returns nil, and
// a config file it cannot read is a warning on warn, as for OptionalModel.
func OptionalEmbedder(ctx context.Context, spec string, warn io.Writer) (llm.Embedder, error) {
	if !configured(spec, "LABMATE_EMBEDDER", "embedder", warn) {
		return nil, nil
	}
	return NewEmbedder(ctx, spec)
}

// configured says whether a spec is given: the flag, the environment variable env, or the
// config file's key ("model" or "embedder"). Without the key, what the file holds that labmate
// does not know (a misspelt key) is written to warn, and so is a file it cannot read.
func configured(spec, env, key string, warn io.Writer) bool {
	if spec != "" || os.Getenv(env) != "" {
		return true
	}
	cfg, err := LoadConfig()
	if err != nil {
		fmt.Fprintf(warn, "labmate: warning: going on without %s %s: %v\n", map[string]string{"model": "a", "embedder": "an"}[key], key, err)
		return false
	}
	v := cfg.Model
	if key == "embedder" {
		v = cfg.Embedder
	}
	if v == "" && len(cfg.Problems) > 0 {
		fmt.Fprintf(warn, "labmate: warning: no %s configured%s\n", key, cfg.problems())
	}
	return v != ""
}

// NewEmbedder resolves an embedder spec (the --embedder flag; "" falls back to
// LABMATE_EMBEDDER, then "embedder:" in the config file) on an OpenAI-compatible provider, and
// checks its server like NewModel.
func NewEmbedder(ctx context.Context, spec string) (llm.Embedder, error) {
	r, err := Resolve(spec, "LABMATE_EMBEDDER", "embedder")
	if err != nil {
		return nil, err
	}
	if r.p.anthropic {
		return nil, fmt.Errorf("anthropic serves no embeddings: choose an OpenAI-compatible embedder, e.g. ollama:nomic-embed-text or openai:text-embedding-3-small")
	}
	if _, err := r.Preflight(ctx, r.Open()); err != nil {
		return nil, err
	}
	return openai.NewEmbedder(r.Model, &openai.Options{Provider: r.Provider, BaseURL: r.BaseURL, APIKey: r.key}), nil
}

// CheckEmbedder resolves and preflights an embedder, then embeds one text to learn its size.
func CheckEmbedder(ctx context.Context, spec string) (*Resolved, bool, int, error) {
	r, err := Resolve(spec, "LABMATE_EMBEDDER", "embedder")
	if err != nil {
		return nil, false, 0, err
	}
	e, err := NewEmbedder(ctx, spec)
	if err != nil {
		return r, false, 0, err
	}
	listed, _ := r.Preflight(ctx, r.Open())
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := e.Embed(ctx, []string{"labmate embedder check"})
	if err != nil {
		return r, listed, 0, fmt.Errorf("%s at %s could not embed a text (%s)", r.Spec, r.BaseURL, textcut.FirstLine(err.Error()))
	}
	return r, listed, len(v[0]), nil
}

// Vars are the environment variables the providers read: their keys and base URLs.
func Vars() []string {
	var out []string
	for _, p := range providers {
		out = append(out, p.keyEnv)
		out = append(out, p.baseURLEnv...)
	}
	return out
}
