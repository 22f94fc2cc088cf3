package extract_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/extract"
)

func TestDir(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is needed (apt-get install poppler-utils; scripts/deps installs it)")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("guide.md", "# Guide\n\nText.\n")
	write("sub/page.html", "<html><head><title>Page</title><style>p{}</style></head><body><h2>Part</h2><p>One <b>two</b>\nthree.</p><ul><li>a</li><li>b</li></ul></body></html>")
	write("notes.txt", "plain notes\n")
	write("broken.pdf", "%PDF-1.4\n1 0 obj << broken")
	write("notpdf.pdf", "hello")
	write("image.png", "\x89PNG\r\n\x1a\n\x00\x00")
	write("latin1.txt", "caf\xe9 au lait\n")
	write(".hidden/secret.md", "# no\n")
	var skipped []string
	docs, err := extract.Dir(context.Background(), dir, func(p string, err error) {
		skipped = append(skipped, filepath.Base(p)+": "+err.Error())
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*knowledge.Doc{}
	for _, d := range docs {
		byName[filepath.Base(d.Source)] = d
	}
	if len(docs) != 3 || byName["guide.md"] == nil || byName["notes.txt"] == nil || byName["page.html"] == nil {
		t.Fatalf("docs %v", byName)
	}
	if h := byName["page.html"]; h.Title != "Page" || h.Format != "markdown" || h.Text != "## Part\n\nOne two three.\n\n- a\n- b\n" {
		t.Errorf("html doc %+v", h)
	}
	want := []string{
		"broken.pdf: " + "unreadable document: pdftotext",
		"image.png: unsupported content: binary content (a NUL byte at offset 8)",
		"latin1.txt: unsupported content: not UTF-8 text",
		"notpdf.pdf: unreadable document: not a PDF (no %PDF- header)",
	}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %q", skipped)
	}
	for i, w := range want {
		if !strings.Contains(skipped[i], w) {
			t.Errorf("skipped[%d] = %q; want it to contain %q", i, skipped[i], w)
		}
	}
	if _, err := extract.File(context.Background(), filepath.Join(dir, "missing.md")); !errors.Is(err, knowledge.ErrBadSource) {
		t.Errorf("missing file: %v", err)
	}
}
