package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the config file, $XDG_CONFIG_HOME/labmate/config.yaml:
//
//	model: ollama:qwen3:8b
//	embedder: ollama:nomic-embed-text
//	providers:
//	  ollama:
//	    base_url: http://gpu-box:11434/v1
//	  openai:
//	    api_key_env: MY_OPENAI_KEY
type Config struct {
	Model     string
	Embedder  string
	Providers map[string]ProviderConfig

	// Path is the file's path, whether or not it exists.
	Path string
	// Problems are what the file holds that labmate does not know, each "FILE:LINE: …" (an
	// unknown key, with the known ones): the keys that were read are used, and a command that
	// needs a missing setting says these.
	Problems []string
}

// ProviderConfig is one provider's settings in the config file.
type ProviderConfig struct {
	BaseURL   string
	APIKeyEnv string
}

// ConfigPath is where the config file lives, whether or not it exists.
func ConfigPath() string {
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

// yamlLine is go-yaml's "yaml: line N: " prefix.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// LoadConfig reads the config file; a missing file is an empty config. A file that is not YAML,
// or not a mapping, is an error naming the file and the line. Keys labmate does not know are
// Problems, not errors.
func LoadConfig() (*Config, error) {
	cfg := &Config{Path: ConfigPath()}
	if cfg.Path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(cfg.Path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			where := cfg.Path
			if m[1] != "" {
				where += ":" + m[1]
			}
			return nil, fmt.Errorf("%s: %s (the file is not valid YAML)", where, msg[len(m[0]):])
		}
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty, or only comments
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the config is a mapping of model, embedder and providers, not %s", cfg.Path, root.Line, kind(root))
	}
	cfg.read(root)
	return cfg, nil
}

// read takes the settings out of the file's mapping, recording what it does not know.
func (cfg *Config) read(root *yaml.Node) {
	problem := func(n *yaml.Node, format string, args ...any) {
		cfg.Problems = append(cfg.Problems, fmt.Sprintf("%s:%d: %s", cfg.Path, n.Line, fmt.Sprintf(format, args...)))
	}
	scalar := func(k, v *yaml.Node, into *string) {
		if v.Kind != yaml.ScalarNode {
			problem(v, "%s is %s, not a string", k.Value, kind(v))
			return
		}
		*into = v.Value
	}
	known := []string{"model", "embedder", "providers"}
	for k, v := range pairs(root) {
		switch k.Value {
		case "model":
			scalar(k, v, &cfg.Model)
		case "embedder":
			scalar(k, v, &cfg.Embedder)
		case "providers":
			if v.Kind != yaml.MappingNode {
				problem(v, "providers is %s, not a mapping of provider names (%s)", kind(v), Names())
				continue
			}
			for name, settings := range pairs(v) {
				if _, ok := findProvider(name.Value); !ok {
					problem(name, "unknown provider %q under providers (known: %s)%s", name.Value, Names(), suggest(name.Value, providerNames()))
					continue
				}
				if settings.Kind != yaml.MappingNode {
					problem(settings, "providers.%s is %s, not a mapping of base_url and api_key_env", name.Value, kind(settings))
					continue
				}
				var pc ProviderConfig
				for sk, sv := range pairs(settings) {
					switch sk.Value {
					case "base_url":
						scalar(sk, sv, &pc.BaseURL)
					case "api_key_env":
						scalar(sk, sv, &pc.APIKeyEnv)
					default:
						problem(sk, "unknown key %q under providers.%s (known: base_url, api_key_env)%s", sk.Value, name.Value, suggest(sk.Value, []string{"base_url", "api_key_env"}))
					}
				}
				if cfg.Providers == nil {
					cfg.Providers = map[string]ProviderConfig{}
				}
				cfg.Providers[name.Value] = pc
			}
		default:
			problem(k, "unknown key %q (known: %s)%s", k.Value, strings.Join(known, ", "), suggest(k.Value, known))
		}
	}
}

// pairs yields a mapping node's keys and values.
func pairs(m *yaml.Node) func(func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !yield(m.Content[i], m.Content[i+1]) {
				return
			}
		}
	}
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "empty"
}

func providerNames() []string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.name
	}
	return names
}

// suggest is `; did you mean "x"?` for the known word closest to s, when it is close.
func suggest(s string, known []string) string {
	best, bestD := "", 3 // at most two edits away
	for _, k := range known {
		if d := distance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// distance is the edit distance of a and b with adjacent transpositions (optimal string
// alignment), so "modle" is one edit from "model".
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// problems is the file's Problems as a sentence for an error that a setting is missing ("" for
// none).
func (cfg *Config) problems() string {
	if len(cfg.Problems) == 0 {
		return ""
	}
	return "; " + strings.Join(cfg.Problems, "; ")
}
