package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThinMain: cmd/labmate only parses flags and wires, in files of at most 300 lines.
func TestThinMain(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > 300 {
			t.Errorf("%s has %d lines: move what is not command wiring to its domain package", f, n)
		}
	}
}
