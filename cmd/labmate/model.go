package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/llm/providers"
)

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
	var embedder string
	cmd := &cobra.Command{
		Use:   "check [PROVIDER:MODEL] [--embedder[=PROVIDER:MODEL]]",
		Short: "Resolve the model and check that its server is reachable and the key accepted",
		Long: `Resolve the model (the argument, else LABMATE_MODEL, else the config file), then list the
server's models with a short timeout: this proves the server is up and the key accepted, without
spending tokens. With --embedder, check the embedder (--embedder=SPEC, else the argument, else LABMATE_EMBEDDER, else
"embedder:" in the config file) and embed one text. Keys of the config file that labmate does
not know (a misspelt "modle:") are printed as warnings, with the file and line.

Exit status: 0 the check passed, 1 it failed (the spec cannot be resolved, the config file cannot
be read, the server is unreachable or refuses the key; with --json the report says why),
2 a usage error. See labmate model --help for specs and settings.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := ""
			if len(args) == 1 {
				spec = args[0]
			}
			if embedder != "" && embedder != "-" {
				if spec != "" && spec != embedder {
					return fmt.Errorf("--embedder=%s and %s: give the embedder once", embedder, spec)
				}
				spec = embedder
			}
			start := time.Now()
			var (
				r      *providers.Resolved
				err    error
				listed bool
				dims   int
			)
			if embedder != "" {
				r, listed, dims, err = providers.CheckEmbedder(cmd.Context(), spec)
			} else {
				r, err = providers.Resolve(spec, "LABMATE_MODEL", "model")
				if err == nil {
					listed, err = r.Preflight(cmd.Context(), r.Open())
				}
			}
			out := cmd.OutOrStdout()
			if cfg, e := providers.LoadConfig(); e == nil {
				for _, p := range cfg.Problems {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning:", p)
				}
			}
			if asJSON {
				rep := map[string]any{"ok": err == nil, "latency_ms": time.Since(start).Milliseconds(), "latency_s": time.Since(start).Seconds()}
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
				fmt.Fprintln(cmd.ErrOrStderr(), "labmate: model check:", err)
				return exitError{1}
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
	cmd.Flags().StringVar(&embedder, "embedder", "", "check an embedder (for memory) instead of a chat model: --embedder alone (the argument or the configured one) or --embedder=PROVIDER:MODEL")
	cmd.Flags().Lookup("embedder").NoOptDefVal = "-"
	return cmd
}
