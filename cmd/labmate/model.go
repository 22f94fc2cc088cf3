package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

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

func providerNames() string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// modelConfig is the config file, $XDG_CONFIG_HOME/labmate/config.yaml:
//
//	model: ollama:qwen3:8b
//	embedder: ollama:nomic-embed-text
//	providers:
//	  ollama:
//	    base_url: http://gpu-box:11434/v1
//	  openai:
//	    api_key_env: MY_OPENAI_KEY
type modelConfig struct {
	Model     string                    `yaml:"model"`
	Embedder  string                    `yaml:"embedder"`
	Providers map[string]providerConfig `yaml:"providers"`

	path string
}

type providerConfig struct {
	BaseURL   string `yaml:"base_url"`
	APIKeyEnv string `yaml:"api_key_env"`
}

// configPath is where the config file lives, whether or not it exists.
func configPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "labmate", "config.yaml")
}

// loadConfig reads the config file; a missing file is an empty config.
func loadConfig() (*modelConfig, error) {
	cfg := &modelConfig{path: configPath()}
	if cfg.path == "" {
		return cfg, nil
	}
	f, err := os.Open(cfg.path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", cfg.path, err)
	}
	for name := range cfg.Providers {
		if _, ok := findProvider(name); !ok {
			return nil, fmt.Errorf("%s: providers: unknown provider %q (known: %s)", cfg.path, name, providerNames())
		}
	}
	return cfg, nil
}

func findProvider(name string) (provider, bool) {
	i := slices.IndexFunc(providers, func(p provider) bool { return p.name == name })
	if i < 0 {
		return provider{}, false
	}
	return providers[i], true
}

// resolved is a spec resolved to a provider, a model and how to reach it.
type resolved struct {
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

// resolveSpec picks the spec (flag, then the environment variable env, then the config file's
// key) and resolves it. what is "model" or "embedder", for the messages.
func resolveSpec(spec, env, what string) (*resolved, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	source := "flag"
	if spec == "" {
		spec, source = os.Getenv(env), env
	}
	if spec == "" {
		spec, source = cfg.Model, cfg.path
		if what == "embedder" {
			spec = cfg.Embedder
		}
	}
	if spec == "" {
		flag := map[string]string{"model": "--model", "embedder": "--embedder"}[what]
		return nil, fmt.Errorf("no %s configured: pass %s PROVIDER:MODEL (e.g. %s ollama:qwen3:8b or %s anthropic:claude-sonnet-4-5), set %s, or put `%s: …` in %s",
			what, flag, flag, flag, env, what, cfg.path)
	}
	name, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" {
		return nil, fmt.Errorf("%s spec %q (from %s) is not PROVIDER:MODEL, e.g. ollama:qwen3:8b or openai:gpt-4.1", what, spec, source)
	}
	p, ok := findProvider(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q in %s spec %q (from %s): choose one of %s", name, what, spec, source, providerNames())
	}
	r := &resolved{Spec: spec, Source: source, Provider: name, Model: model, BaseURL: p.baseURL, KeyEnv: p.keyEnv, p: p}
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

// lister is what both adapters offer for the preflight.
type lister interface {
	llm.Model
	Models(context.Context) ([]string, error)
}

func (r *resolved) model() lister {
	if r.p.anthropic {
		return anthropic.New(r.Model, &anthropic.Options{BaseURL: r.BaseURL, APIKey: r.key})
	}
	return openai.New(r.Model, &openai.Options{Provider: r.Provider, BaseURL: r.BaseURL, APIKey: r.key})
}

// preflight lists the server's models with a short timeout and turns failures into one
// actionable line. It reports whether the model is among those listed.
func (r *resolved) preflight(ctx context.Context, m lister) (listed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	ids, err := m.Models(ctx)
	if err != nil {
		switch {
		case errors.Is(err, llm.ErrAuth):
			return false, fmt.Errorf("%s rejected the key in %s (%s): check it", r.Provider, r.KeyEnv, firstLine(err.Error()))
		case errors.Is(err, llm.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			return false, fmt.Errorf("cannot reach %s at %s (%s): %s", r.Provider, r.BaseURL, firstLine(err.Error()), r.p.startHint)
		}
		return false, fmt.Errorf("%s at %s answered the models list with an error (%s)", r.Provider, r.BaseURL, firstLine(err.Error()))
	}
	listed = slices.Contains(ids, r.Model)
	if !listed && r.Provider == "ollama" && !slices.Contains(ids, r.Model+":latest") {
		return false, fmt.Errorf("ollama at %s does not have model %q: pull it with `ollama pull %s`", r.BaseURL, r.Model, r.Model)
	}
	return listed || r.Provider == "ollama", nil
}

// newModel resolves spec (the --model flag; "" falls back to LABMATE_MODEL, then the config
// file), checks that the provider is reachable and the key accepted, and returns the model with
// retries. Every failure is one actionable line, before any work starts.
func newModel(ctx context.Context, spec string) (llm.Model, error) {
	r, err := resolveSpec(spec, "LABMATE_MODEL", "model")
	if err != nil {
		return nil, err
	}
	m := r.model()
	if _, err := r.preflight(ctx, m); err != nil {
		return nil, err
	}
	return llm.WithRetry(m, nil), nil
}

// optionalEmbedder is newEmbedder for the places where embeddings are an extra (hybrid search in
// memory and the documentation index): with no embedder configured anywhere it returns nil.
func optionalEmbedder(ctx context.Context, spec string) (llm.Embedder, error) {
	if spec == "" && os.Getenv("LABMATE_EMBEDDER") == "" {
		cfg, err := loadConfig()
		if err != nil {
			return nil, err
		}
		if cfg.Embedder == "" {
			return nil, nil
		}
	}
	return newEmbedder(ctx, spec)
}

// newEmbedder resolves an embedder spec (the --embedder flag; "" falls back to
// LABMATE_EMBEDDER, then "embedder:" in the config file) on an OpenAI-compatible provider, and
// checks its server like newModel.
func newEmbedder(ctx context.Context, spec string) (llm.Embedder, error) {
	r, err := resolveSpec(spec, "LABMATE_EMBEDDER", "embedder")
	if err != nil {
		return nil, err
	}
	if r.p.anthropic {
		return nil, fmt.Errorf("anthropic serves no embeddings: choose an OpenAI-compatible embedder, e.g. ollama:nomic-embed-text or openai:text-embedding-3-small")
	}
	if _, err := r.preflight(ctx, r.model()); err != nil {
		return nil, err
	}
	return openai.NewEmbedder(r.Model, &openai.Options{Provider: r.Provider, BaseURL: r.BaseURL, APIKey: r.key}), nil
}

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Check the language model labmate uses",
		Long: `A model is named PROVIDER:MODEL, everything after the first colon being the model's own
name: openai:gpt-4.1, anthropic:claude-sonnet-4-5, ollama:qwen3:8b, vllm:MODEL, llamacpp:MODEL,
lmstudio:MODEL, openrouter:VENDOR/MODEL.

It is taken from --model, else LABMATE_MODEL, else "model:" in the config file
($XDG_CONFIG_HOME/labmate/config.yaml, by default ~/.config/labmate/config.yaml), which may also
set "embedder:" and per provider a base_url and api_key_env:

  model: ollama:qwen3:8b
  providers:
    ollama: {base_url: "http://gpu-box:11434/v1"}

Keys and base URLs come from the providers' usual variables: OPENAI_API_KEY, OPENAI_BASE_URL,
ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OLLAMA_HOST, VLLM_BASE_URL, LLAMACPP_BASE_URL,
LMSTUDIO_BASE_URL, OPENROUTER_API_KEY.`,
	}
	cmd.AddCommand(newModelCheckCmd())
	return cmd
}

func newModelCheckCmd() *cobra.Command {
	var asJSON bool
	var embedder bool
	cmd := &cobra.Command{
		Use:   "check [PROVIDER:MODEL] [--embedder]",
		Short: "Resolve the model and check that its server is reachable and the key accepted",
		Long: `Resolve the model (the argument, else LABMATE_MODEL, else the config file), then list the
server's models with a short timeout: this proves the server is up and the key accepted, without
spending tokens. With --embedder, check the embedder (the argument, else LABMATE_EMBEDDER, else
"embedder:" in the config file) and embed one text. Exits 1
when the check fails. See labmate model --help for specs and settings.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := ""
			if len(args) == 1 {
				spec = args[0]
			}
			start := time.Now()
			var (
				r      *resolved
				err    error
				listed bool
				dims   int
			)
			if embedder {
				r, listed, dims, err = checkEmbedder(cmd.Context(), spec)
			} else {
				r, err = resolveSpec(spec, "LABMATE_MODEL", "model")
				if err == nil {
					listed, err = r.preflight(cmd.Context(), r.model())
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				rep := map[string]any{"ok": err == nil, "latency_ms": time.Since(start).Milliseconds()}
				if r != nil {
					rep["model"] = r
					rep["listed"] = listed
				}
				if dims > 0 {
					rep["dimensions"] = dims
				}
				if err != nil {
					rep["error"] = err.Error()
				}
				if e := json.NewEncoder(out).Encode(rep); e != nil {
					return e
				}
				if err != nil {
					return exitError{1}
				}
				return nil
			}
			if err != nil {
				return err
			}
			if dims > 0 {
				fmt.Fprintf(out, "%s: ok (%s at %s, %d dimensions, %v)\n", r.Spec, r.Provider, r.BaseURL, dims, time.Since(start).Round(time.Millisecond))
			} else {
				fmt.Fprintf(out, "%s: ok (%s at %s, %v)\n", r.Spec, r.Provider, r.BaseURL, time.Since(start).Round(time.Millisecond))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "from %s", r.Source)
			if r.KeyEnv != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "; key %s %s", r.KeyEnv, map[bool]string{true: "set", false: "not set"}[r.KeySet])
			}
			fmt.Fprintln(cmd.ErrOrStderr())
			if !listed {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: the server does not list %q; if it is an alias this is fine, otherwise check the name\n", r.Model)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&embedder, "embedder", false, "check an embedder (for memory) instead of a chat model")
	return cmd
}

// checkEmbedder resolves and preflights an embedder, then embeds one text to learn its size.
func checkEmbedder(ctx context.Context, spec string) (*resolved, bool, int, error) {
	r, err := resolveSpec(spec, "LABMATE_EMBEDDER", "embedder")
	if err != nil {
		return nil, false, 0, err
	}
	e, err := newEmbedder(ctx, spec)
	if err != nil {
		return r, false, 0, err
	}
	listed, _ := r.preflight(ctx, r.model())
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := e.Embed(ctx, []string{"labmate embedder check"})
	if err != nil {
		return r, listed, 0, fmt.Errorf("%s at %s could not embed a text (%s)", r.Spec, r.BaseURL, firstLine(err.Error()))
	}
	return r, listed, len(v[0]), nil
}
