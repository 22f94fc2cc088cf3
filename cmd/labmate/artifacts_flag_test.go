package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenArtifacts: serve --artifacts-max takes a size (512MiB, 2GiB) and opens the store in
// DATA/artifacts; anything else is an error naming the flag and the value.
func TestOpenArtifacts(t *testing.T) {
	data := t.TempDir()
	st, err := openArtifacts(data, "512MiB")
	if err != nil || st.MaxBytes() != 512<<20 || st.Dir() != filepath.Join(data, "artifacts") {
		t.Fatalf("openArtifacts 512MiB: %v", err)
	}
	for _, bad := range []string{"abc", "0", "-1G", ""} {
		if _, err := openArtifacts(data, bad); err == nil || !strings.Contains(err.Error(), "--artifacts-max") || !strings.Contains(err.Error(), bad) {
			t.Errorf("openArtifacts %q: %v", bad, err)
		}
	}
}
