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
	if m, err := providers.OptionalModel(ctx, ""); m != nil || err != nil {
		t.Errorf("OptionalModel with nothing configured = %v, %v", m, err)
	}
	if e, err := providers.OptionalEmbedder(ctx, ""); e != nil || err != nil {
		t.Errorf("OptionalEmbedder with nothing configured = %v, %v", e, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "labmate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "labmate", "config.yaml"), []byte("model: nope\nembedder: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := providers.OptionalModel(ctx, ""); err == nil || !strings.Contains(err.Error(), `model spec "nope"`) {
		t.Errorf("OptionalModel with a malformed model in the config file: %v", err)
	}
	if _, err := providers.OptionalEmbedder(ctx, ""); err == nil || !strings.Contains(err.Error(), `embedder spec "nope"`) {
		t.Errorf("OptionalEmbedder with a malformed embedder in the config file: %v", err)
	}
}
