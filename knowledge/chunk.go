package knowledge

import (
	"fmt"
	"strings"
	"unicode"
)

// MaxChunk is the size, in bytes, beyond which a section is split at paragraph boundaries.
const MaxChunk = 2400

// Split cuts doc into chunks: Markdown along its headings (a section longer than MaxChunk at its
// paragraphs), text at its paragraphs, a help document whole unless it is long. Line numbers
// count from doc.Line. Fenced code blocks never split a heading off.
func Split(doc *Doc) []Chunk {
	first := doc.Line
	if first == 0 {
		first = 1
	}
	lines := strings.Split(strings.ReplaceAll(doc.Text, "\r\n", "\n"), "\n")
	var secs []section
	switch doc.Format {
	case "markdown":
		secs = markdownSections(lines, doc.Heading)
	default:
		secs = []section{{heading: doc.Heading, start: 0, end: len(lines)}}
	}
	var out []Chunk
	for _, s := range secs {
		if s.title != "" && strings.TrimSpace(strings.Join(lines[s.start+1:s.end], "")) == "" {
			continue // a heading with nothing under it before the next heading
		}
		for _, p := range pieces(lines, s.start, s.end) {
			text := strings.TrimSpace(strings.Join(lines[p[0]:p[1]], "\n"))
			if text == "" {
				continue
			}
			c := Chunk{
				Source:    doc.Source,
				Heading:   s.heading,
				Name:      doc.Title,
				Text:      text,
				StartLine: first + p[0],
				EndLine:   first + p[1] - 1,
			}
			if doc.Format == "help" {
				c.Summary = doc.Summary
				if c.Summary == "" {
					c.Summary = FirstSentence(withoutSignatures(text))
				}
			} else if s.title != "" {
				c.Summary = s.title
			}
			c.ID = fmt.Sprintf("%s#L%d", c.Source, c.StartLine)
			out = append(out, c)
		}
	}
	return out
}

type section struct {
	heading    string // the full heading path
	title      string // this section's own heading
	start, end int    // line indexes [start, end)
}

// markdownSections cuts lines at ATX headings (# … ######) outside fenced code.
func markdownSections(lines []string, root string) []section {
	var secs []section
	var path []string // path[i] is the heading at level i+1
	cur := section{heading: root}
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		level, title := atxHeading(l)
		if level == 0 {
			continue
		}
		cur.end = i
		secs = append(secs, cur)
		if len(path) >= level {
			path = path[:level-1]
		}
		for len(path) < level-1 {
			path = append(path, "")
		}
		path = append(path, title)
		var parts []string
		if root != "" {
			parts = append(parts, root)
		}
		for _, p := range path {
			if p != "" {
				parts = append(parts, p)
			}
		}
		cur = section{heading: strings.Join(parts, " > "), title: title, start: i}
	}
	cur.end = len(lines)
	return append(secs, cur)
}

// atxHeading returns the level and text of a Markdown ATX heading line, or 0.
func atxHeading(l string) (int, string) {
	if len(l)-len(strings.TrimLeft(l, " ")) > 3 {
		return 0, ""
	}
	t := strings.TrimLeft(l, " ")
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#"))
	if title == "" {
		return 0, ""
	}
	return n, title
}

// pieces cuts lines [start, end) into ranges of at most about MaxChunk bytes, at blank lines
// when there is one, outside fenced code when it can.
func pieces(lines []string, start, end int) [][2]int {
	var out [][2]int
	from, size, lastBlank := start, 0, -1
	for i := start; i < end; i++ {
		size += len(lines[i]) + 1
		if strings.TrimSpace(lines[i]) == "" {
			lastBlank = i
		}
		if size > MaxChunk && i > from {
			cut := i
			if lastBlank > from {
				cut = lastBlank
			}
			out = append(out, [2]int{from, cut})
			from, lastBlank = cut, -1
			size = 0
			for j := from; j <= i; j++ {
				size += len(lines[j]) + 1
			}
		}
	}
	if from < end {
		out = append(out, [2]int{from, end})
	}
	// Drop ranges that are blank only, and trim blank lines at both ends for tight citations.
	kept := out[:0]
	for _, r := range out {
		for r[0] < r[1] && strings.TrimSpace(lines[r[0]]) == "" {
			r[0]++
		}
		for r[1] > r[0] && strings.TrimSpace(lines[r[1]-1]) == "" {
			r[1]--
		}
		if r[0] < r[1] {
			kept = append(kept, r)
		}
	}
	return kept
}

// FirstSentence is text's first sentence (up to ". " or a blank line), on one line, at most 300 bytes.
func FirstSentence(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.Index(text, "\n\n"); i >= 0 {
		text = text[:i]
	}
	text = strings.Join(strings.Fields(text), " ")
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' && i > 0 && !unicode.IsUpper(rune(text[i-1])) {
			text = text[:i+1]
			break
		}
	}
	if len(text) > 300 {
		cut := strings.LastIndexByte(text[:300], ' ')
		if cut < 100 {
			cut = 300
		}
		text = text[:cut] + " …"
	}
	return text
}

// withoutSignatures drops the " -- name (args)" signature lines a help text starts with.
func withoutSignatures(text string) string {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && (strings.HasPrefix(strings.TrimSpace(lines[i]), "-- ") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	return strings.Join(lines[i:], "\n")
}
