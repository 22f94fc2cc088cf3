package knowledge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/labmate/labmate/knowledge"
)

func TestSplitMarkdown(t *testing.T) {
	text := "# Guide\nIntro line.\n\n## Install\nRun make.\n\n```sh\n# not a heading\nmake test\n```\n\n### Debian\napt-get install octave\n\n## Use\nlabmate exec x.m\n"
	got := knowledge.Split(&knowledge.Doc{Source: "docs/guide.md", Format: "markdown", Text: text})
	var b strings.Builder
	for _, c := range got {
		fmt.Fprintf(&b, "%s|%s|%d-%d\n", c.Heading, c.Summary, c.StartLine, c.EndLine)
	}
	want := "Guide|Guide|1-2\nGuide > Install|Install|4-10\nGuide > Install > Debian|Debian|12-13\nGuide > Use|Use|15-16\n"
	if b.String() != want {
		t.Errorf("chunks:\n%s\nwant:\n%s", b.String(), want)
	}
	if !strings.Contains(got[1].Text, "# not a heading") {
		t.Errorf("the fenced comment left its section: %q", got[1].Text)
	}
	if c := got[2].Cite(); c != "docs/guide.md:12-13 (Guide > Install > Debian)" {
		t.Errorf("cite %q", c)
	}
}

func TestSplitLong(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("Paragraph %d has some words in it to fill the chunk.", i), "")
	}
	got := knowledge.Split(&knowledge.Doc{Source: "a.txt", Format: "text", Text: strings.Join(lines, "\n"), Line: 10})
	if len(got) < 3 {
		t.Fatalf("%d chunks", len(got))
	}
	next := 10
	for _, c := range got {
		if len(c.Text) > knowledge.MaxChunk || c.StartLine < next || c.EndLine < c.StartLine {
			t.Errorf("chunk %d-%d of %d bytes", c.StartLine, c.EndLine, len(c.Text))
		}
		if first := strings.SplitN(c.Text, "\n", 2)[0]; first != lines[c.StartLine-10] {
			t.Errorf("chunk at line %d starts %q, the line is %q", c.StartLine, first, lines[c.StartLine-10])
		}
		next = c.EndLine + 1
	}
}
