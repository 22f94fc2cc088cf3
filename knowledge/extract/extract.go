// Package extract turns files and fetched bodies into documents: Markdown and text as they are,
// HTML into Markdown-like text that keeps its headings (the readable part of a page when asked),
// PDF into text with poppler's pdftotext. What cannot be read (a binary file, a broken PDF) is a
// clear error wrapping knowledge.ErrUnsupported or knowledge.ErrUnreadable.
package extract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/labmate/labmate/knowledge"
)

// MaxFile is the largest file File reads.
const MaxFile = 64 << 20

// File reads one documentation file into a document, by its extension: .md/.markdown, .html/.htm,
// .pdf, or text (.txt, .rst, .m, .py, no extension …) when its content is text.
func File(ctx context.Context, path string) (*knowledge.Doc, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", knowledge.ErrBadSource, err)
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", knowledge.ErrTooLarge, path, fi.Size(), MaxFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", knowledge.ErrBadSource, err)
	}
	doc := &knowledge.Doc{Source: path, Title: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		if err := isText(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		doc.Format, doc.Text = "markdown", string(data)
	case ".html", ".htm", ".xhtml":
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			return nil, fmt.Errorf("%s: %w: binary content", path, knowledge.ErrUnsupported)
		}
		// A <meta charset> other than UTF-8 is honoured.
		if e, name, _ := charset.DetermineEncoding(data, "text/html"); name != "utf-8" {
			if u, err := e.NewDecoder().Bytes(data); err == nil {
				data = u
			}
		}
		title, text, err := HTML(bytes.NewReader(data), nil, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		doc.Format, doc.Text = "markdown", text
		if title != "" {
			doc.Title = title
		}
	case ".pdf":
		text, err := PDF(ctx, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		doc.Format, doc.Text = "text", text
	default:
		if err := isText(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		doc.Format, doc.Text = "text", string(data)
	}
	return doc, nil
}

// Dir reads every documentation file under root (hidden files and folders skipped). A file that
// cannot be read is reported to skip, with its error, and the walk goes on; skip may be nil.
func Dir(ctx context.Context, root string, skip func(path string, err error)) ([]*knowledge.Doc, error) {
	var docs []*knowledge.Doc
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		doc, err := File(ctx, path)
		if err != nil {
			if skip != nil {
				skip(path, err)
			}
			return nil
		}
		docs = append(docs, doc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", knowledge.ErrBadSource, root, err)
	}
	return docs, nil
}

// isText refuses content that is not UTF-8 text: a NUL byte or invalid UTF-8 in its first 8 KiB.
func isText(data []byte) error {
	head := data[:min(len(data), 8192)]
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Errorf("%w: binary content (a NUL byte at offset %d)", knowledge.ErrUnsupported, i)
	}
	// Allow a multi-byte character cut at the 8 KiB boundary.
	for len(head) > 0 && !utf8.Valid(head) && len(head) > len(data[:min(len(data), 8192)])-4 {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return fmt.Errorf("%w: not UTF-8 text", knowledge.ErrUnsupported)
	}
	return nil
}

// IsText reports whether data reads as UTF-8 text, with the reason when not.
func IsText(data []byte) error { return isText(data) }

// PDFTimeout bounds one pdftotext run.
const PDFTimeout = 30 * time.Second

// PDF extracts the text of a PDF with pdftotext (Debian's poppler-utils), pages separated by
// form feeds turned into blank lines.
func PDF(ctx context.Context, data []byte) (string, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\r\n "), []byte("%PDF-")) {
		return "", fmt.Errorf("%w: not a PDF (no %%PDF- header)", knowledge.ErrUnreadable)
	}
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return "", fmt.Errorf("%w: reading a PDF needs pdftotext (apt-get install poppler-utils): %w", knowledge.ErrUnsupported, err)
	}
	ctx, cancel := context.WithTimeout(ctx, PDFTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-q", "-enc", "UTF-8", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: pdftotext took longer than %s", knowledge.ErrUnreadable, PDFTimeout)
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%w: pdftotext: %s", knowledge.ErrUnreadable, firstLine(msg))
	}
	text := strings.ReplaceAll(out.String(), "\f", "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: the PDF has no extractable text (scanned images?)", knowledge.ErrUnreadable)
	}
	return text, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// HTML renders an HTML document as Markdown-like text: headings as "#" lines, paragraphs, list
// items and table rows on their own lines, preformatted text kept, scripts, styles, forms and
// navigation dropped. With readable set it keeps only the page's main content (readability),
// falling back to the whole body when that finds none. It returns the title and the text.
func HTML(r io.Reader, pageURL *url.URL, readable bool) (string, string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", fmt.Errorf("%w: parsing HTML: %w", knowledge.ErrUnreadable, err)
	}
	title := strings.Join(strings.Fields(findTitle(doc)), " ")
	root := doc
	if readable {
		if pageURL == nil {
			pageURL = &url.URL{}
		}
		if art, err := readability.FromDocument(doc, pageURL); err == nil && art.Node != nil {
			root = art.Node
			if t := strings.TrimSpace(art.Title()); t != "" {
				title = t
			}
		}
	}
	var w textWriter
	w.walk(root)
	text := strings.TrimSpace(w.String())
	if text == "" && title == "" {
		return "", "", fmt.Errorf("%w: the HTML has no text", knowledge.ErrUnreadable)
	}
	return title, text + "\n", nil
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return textOf(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c))
	}
	return b.String()
}

// textWriter accumulates text with collapsed spaces and explicit line breaks.
type textWriter struct {
	b     strings.Builder
	space bool // a space is pending
	pre   int  // inside <pre>
}

func (w *textWriter) String() string { return w.b.String() }

func (w *textWriter) newline(n int) {
	s := w.b.String()
	have := len(s) - len(strings.TrimRight(s, "\n"))
	if len(s) == 0 {
		return
	}
	for ; have < n; have++ {
		w.b.WriteByte('\n')
	}
	w.space = false
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		return
	}
	isSpace := func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f' || r == '\u00a0'
	}
	fields := strings.FieldsFunc(s, isSpace)
	if len(fields) == 0 {
		if s != "" {
			w.space = true
		}
		return
	}
	if strings.IndexFunc(s, isSpace) == 0 {
		w.space = true
	}
	for i, f := range fields {
		if (w.space || i > 0) && !endsWithNewline(&w.b) {
			w.b.WriteByte(' ')
		}
		w.b.WriteString(f)
	}
	w.space = strings.LastIndexFunc(s, isSpace) == len(s)-1 || strings.HasSuffix(s, "\u00a0")
}

func endsWithNewline(b *strings.Builder) bool {
	s := b.String()
	return s == "" || s[len(s)-1] == '\n' || s[len(s)-1] == ' '
}

var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Nav: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Svg: true, atom.Iframe: true,
	atom.Head: true, atom.Object: true, atom.Canvas: true,
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Footer: true, atom.Blockquote: true, atom.Ul: true, atom.Ol: true,
	atom.Dl: true, atom.Table: true, atom.Figure: true, atom.Figcaption: true, atom.Aside: true,
	atom.Address: true, atom.Details: true, atom.Summary: true, atom.Hr: true, atom.Body: true,
}

func (w *textWriter) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c)
		}
		return
	default:
		return
	}
	if skipped[n.DataAtom] {
		return
	}
	if v := attr(n, "hidden"); v != "" || strings.Contains(strings.ReplaceAll(attr(n, "style"), " ", ""), "display:none") {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.newline(2)
		title := strings.Join(strings.Fields(textOf(n)), " ")
		if title != "" {
			w.b.WriteString(strings.Repeat("#", int(n.Data[1]-'0')) + " " + title)
			w.newline(2)
		}
		return
	case atom.Br:
		w.newline(1)
		return
	case atom.Pre:
		w.newline(2)
		w.b.WriteString("```\n")
		w.pre++
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c)
		}
		w.pre--
		w.newline(1)
		w.b.WriteString("```")
		w.newline(2)
		return
	case atom.Li, atom.Dt:
		w.newline(1)
		w.b.WriteString("- ")
		w.space = false
	case atom.Dd:
		w.newline(1)
		w.b.WriteString("  ")
		w.space = false
	case atom.Tr:
		w.newline(1)
	case atom.Td, atom.Th:
		if !endsWithNewline(&w.b) {
			w.b.WriteString(" | ")
			w.space = false
		}
	default:
		if blocks[n.DataAtom] {
			w.newline(2)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if blocks[n.DataAtom] || n.DataAtom == atom.Li || n.DataAtom == atom.Tr {
		w.newline(1)
		if blocks[n.DataAtom] {
			w.newline(2)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			if a.Val == "" {
				return key
			}
			return a.Val
		}
	}
	return ""
}
