package providers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm/providers"
)

// The optional model and embedder are nil when nothing configures them, and resolved (here:
// refused as malformed) as soon as the config file names one.
func TestOptional(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("LABMATE_MODEL", "")
	t.Setenv("LABMATE_EMBEDDER", "")
	ctx := context.Background()
	var warn strings.Builder
	if m, err := providers.OptionalModel(ctx, "", &warn); m != nil || err != nil {
		t.Errorf("OptionalModel with nothing configured = %v, %v", m, err)
	}
	if e, err := providers.OptionalEmbedder(ctx, "", &warn); e != nil || err != nil {
		t.Errorf("OptionalEmbedder with nothing configured = %v, %v", e, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "labmate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "labmate", "config.yaml"), []byte("model: nope\nembedder: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := providers.OptionalModel(ctx, "", &warn); err == nil || !strings.Contains(err.Error(), `model spec "nope"`) {
		t.Errorf("OptionalModel with a malformed model in the config file: %v", err)
	}
	if _, err := providers.OptionalEmbedder(ctx, "", &warn); err == nil || !strings.Contains(err.Error(), `embedder spec "nope"`) {
		t.Errorf("OptionalEmbedder with a malformed embedder in the config file: %v", err)
	}
	if warn.Len() != 0 {
		t.Errorf("warnings for a well-formed file: %q", warn.String())
	}

	// A misspelt key, or a file that is not YAML, leaves the extras off with a warning that
	// names the file and the line: the commands that do not need them still run.
	for _, tc := range []struct{ body, want string }{
		{"modle: x\nembeder: y\n", `config.yaml:1: unknown key "modle" (known: model, embedder, providers); did you mean "model"?`},
		{"model: [x\n", `config.yaml:1: did not find expected ',' or ']' (the file is not valid YAML)`},
	} {
		os.WriteFile(filepath.Join(dir, "labmate", "config.yaml"), []byte(tc.body), 0o600)
		warn.Reset()
		m, err := providers.OptionalModel(ctx, "", &warn)
		e, err2 := providers.OptionalEmbedder(ctx, "", &warn)
		if m != nil || e != nil || err != nil || err2 != nil || strings.Count(warn.String(), tc.want) != 2 {
			t.Errorf("%q: %v %v %v %v, warnings %q; want none and twice %q", tc.body, m, e, err, err2, warn.String(), tc.want)
		}
	}
}
