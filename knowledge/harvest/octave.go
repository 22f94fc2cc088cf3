// Package harvest turns the help of installed software into documents for the documentation
// index: every function GNU Octave and its installed packages provide (one Octave process, in
// batch) and the public API of installed Python modules (one Python process, pydoc's text).
// The agent thereby reads the documentation of the versions it will actually run.
package harvest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
)

// OctaveOptions configure Octave. Sandbox is required.
type OctaveOptions struct {
	Sandbox Sandbox
	Binary  string        // "octave-cli" when empty
	Timeout time.Duration // 5 minutes when zero
}

// The record separators between the Octave process and us: ASCII RS starts a record, US separates fields.
const (
	rs = "\x1e"
	us = "\x1f"
)

// octaveScript loads every installed package, lists every function on the path and every built-in,
// and prints each one's raw help text as one record: RS name US format US file US text.
const octaveScript = `
try
  pkg load all;
catch err
  fputs(stderr, ["harvest: pkg load all: " err.message "\n"]);
end
names = unique([__list_functions__()(:); __builtins__()(:)]);
for i = 1:numel(names)
  nm = names{i};
  if strncmp(nm, "__", 2)
    continue;
  end
  try
    [txt, fmt] = get_help_text(nm);
  catch
    continue;
  end
  f = which(nm);
  fputs(stdout, [char(30) nm char(31) fmt char(31) f char(31) txt]);
end
fputs(stdout, char(30));
`

// Octave returns one "help" document per documented function of the installed Octave and its
// installed packages, run in opts.Sandbox. Sources are "octave:NAME", headings the function's category (its folder:
// "ode", "linear-algebra", a package name, or "built-in").
func Octave(ctx context.Context, opts *OctaveOptions) ([]*knowledge.Doc, error) {
	if opts == nil {
		opts = &OctaveOptions{}
	}
	bin := opts.Binary
	if bin == "" {
		bin = "octave-cli"
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	stdout, stderr, err := run(ctx, opts.Sandbox, "octave help harvest", "octave", []string{bin, "--no-gui", "--no-window-system", "--quiet", "--norc", "--no-history", "--eval", octaveScript}, timeout)
	if err != nil {
		return nil, err
	}
	out := stdout.String()
	if !strings.HasSuffix(out, rs) {
		return nil, fmt.Errorf("%w: octave help harvest: the output was cut short (%d bytes): %s", knowledge.ErrBadSource, len(out), tail(stderr.String()))
	}
	var docs []*knowledge.Doc
	for _, rec := range strings.Split(strings.TrimSuffix(out, rs), rs)[1:] {
		f := strings.SplitN(rec, us, 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("%w: octave help harvest: a record has %d fields, not 4: %.80q", knowledge.ErrBadSource, len(f), rec)
		}
		if d := octaveDoc(f[0], f[1], f[2], f[3]); d != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: octave help harvest: no documented function found: %s", knowledge.ErrBadSource, tail(stderr.String()))
	}
	return docs, nil
}

// octaveDoc makes the document of one function, nil when it has no documentation.
func octaveDoc(name, format, file, text string) *knowledge.Doc {
	var sigs []string
	var body string
	switch format {
	case "texinfo":
		sigs, body = Texinfo(text)
	case "plain text", "html":
		body = strings.TrimSpace(text)
	default: // "Not documented", "Not found"
		return nil
	}
	if body == "" && len(sigs) == 0 {
		return nil
	}
	summary := knowledge.FirstSentence(body)
	var b strings.Builder
	for _, s := range sigs {
		b.WriteString(" -- " + s + "\n")
	}
	if len(sigs) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(body)
	return &knowledge.Doc{
		Source:  "octave:" + name,
		Title:   name,
		Format:  "help",
		Summary: summary,
		Heading: category(file),
		Text:    b.String(),
	}
}

// category is the folder a function lives in: the package name for a package function.
func category(file string) string {
	if file == "" || !strings.HasPrefix(file, "/") {
		return "built-in"
	}
	parts := strings.Split(filepath.ToSlash(file), "/")
	for i, p := range parts {
		if p == "packages" && i+1 < len(parts) {
			name := parts[i+1]
			if k := strings.LastIndexByte(name, '-'); k > 0 {
				name = name[:k] // signal-1.4.3
			}
			return name
		}
	}
	dir := filepath.Base(filepath.Dir(file))
	if dir == "private" || strings.HasPrefix(dir, "@") || strings.HasPrefix(dir, "+") {
		dir = filepath.Base(filepath.Dir(filepath.Dir(file))) + "/" + dir
	}
	if strings.HasSuffix(file, ".oct") || strings.Contains(file, "/oct/") {
		return "built-in"
	}
	return dir
}

// tail is the end of a process's stderr, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	if s == "" {
		return "(nothing on stderr)"
	}
	return s
}
