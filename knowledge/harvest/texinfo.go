package harvest

import (
	"strings"
)

// Texinfo renders the Texinfo of an Octave help text as plain text: @deftypefn lines become
// signature lines, inline markup its content, @seealso a "See also:" line, TeX-only and HTML-only
// blocks and comments disappear. It returns the signatures and the body separately.
func Texinfo(src string) (signatures []string, body string) {
	var out []string
	skip := "" // the block being dropped, e.g. "tex"
	for _, line := range dedent(strings.Split(src, "\n")) {
		t := strings.TrimSpace(line)
		if skip != "" {
			if t == "@end "+skip {
				skip = ""
			}
			continue
		}
		cmd, rest := command(t)
		switch cmd {
		case "deftypefn", "deftypefnx", "deftypevr", "deftypevrx", "deffn", "deffnx":
			signatures = append(signatures, signature(rest))
			continue
		case "tex", "iftex", "html", "ifhtml", "ignore", "ifdocbook", "ifxml", "iflatex", "macro", "ifplaintext":
			skip = cmd
			continue
		case "c", "comment", "end", "noindent", "sp", "cindex", "findex", "vindex", "opindex", "group",
			"example", "smallexample", "verbatim", "display", "smalldisplay", "format", "quotation",
			"ifnottex", "ifinfo", "ifnothtml", "iftext", "itemize", "enumerate", "cartouche", "page",
			"need", "anchor", "node", "float", "caption", "center", "indent", "exdent", "refill":
			if cmd == "center" || cmd == "exdent" {
				out = append(out, inline(rest))
			}
			continue
		case "table", "ftable", "vtable", "multitable":
			continue
		case "item", "itemx":
			out = append(out, "  * "+inline(rest))
			continue
		case "tab":
			out = append(out, "    "+inline(rest))
			continue
		}
		out = append(out, inline(line))
	}
	// Collapse runs of blank lines and trim.
	var b strings.Builder
	blank := true
	for _, l := range out {
		l = strings.TrimRight(l, " \t")
		if strings.TrimSpace(l) == "" {
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		blank = false
		b.WriteString(l)
		b.WriteString("\n")
	}
	return signatures, strings.TrimSpace(b.String())
}

// command returns the @command at the start of a line and the rest of the line.
func command(t string) (string, string) {
	if !strings.HasPrefix(t, "@") {
		return "", t
	}
	i := 1
	for i < len(t) && (isLetter(t[i])) {
		i++
	}
	if i < len(t) && t[i] == '{' {
		return "", t // an inline command starts the line
	}
	return t[1:i], strings.TrimSpace(t[i:])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// signature renders "{category} {ret =} name (args)" as "ret = name (args)".
func signature(s string) string {
	// The first braced group is the category; drop it.
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		if end := matching(s, 0); end > 0 {
			s = s[end+1:]
		}
	}
	return strings.Join(strings.Fields(inline(s)), " ")
}

// matching returns the index of the brace closing the one at s[open], or -1.
func matching(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '@':
			i++ // an escaped character
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var symbols = map[string]string{
	"dots": "...", "result": "=>", "print": "-|", "error": "error:", "equiv": "==", "expansion": "==>",
	"minus": "-", "leq": "<=", "geq": ">=", "times": "x", "pi": "pi", "infinity": "Inf", "bullet": "*",
	"copyright": "(C)", "backslashchar": `\`, "comma": ",", "tie": " ", "TeX": "TeX", "LaTeX": "LaTeX",
	"abs": "abs", "arrow": "->", "point": "-!-", "registeredsymbol": "(R)", "exclamdown": "!",
	"questiondown": "?", "aa": "a", "o": "o", "ss": "ss", "l": "l", "ae": "ae", "oe": "oe",
}

// inline renders inline Texinfo markup: @cmd{content} becomes content (footnotes, indexes and
// images disappear), @sup/@sub get ^ and _, @@ @{ @} are the characters, braces of an unknown
// group are dropped.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '{', '}':
			continue
		case '@':
		default:
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		n := s[i+1]
		if !isLetter(n) {
			if n == '*' || n == '/' || n == '-' || n == '&' {
				i++
				continue // break hints
			}
			b.WriteByte(n) // @@, @{, @}, @., @:
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isLetter(s[j]) {
			j++
		}
		name := s[i+1 : j]
		content, next := "", j
		if j < len(s) && s[j] == '{' {
			if end := matching(s, j); end > 0 {
				content, next = s[j+1:end], end+1
			} else {
				content, next = s[j+1:], len(s)
			}
		}
		switch name {
		case "footnote", "cindex", "findex", "image", "anchor", "nospellx":
		case "seealso":
			b.WriteString("See also: " + inline(content) + ".")
		case "sup":
			b.WriteString("^" + inline(content))
		case "sub":
			b.WriteString("_" + inline(content))
		case "url", "uref", "email":
			if k := strings.IndexByte(content, ','); k >= 0 {
				content = strings.TrimSpace(content[k+1:]) + " <" + strings.TrimSpace(content[:k]) + ">"
			}
			b.WriteString(inline(content))
		case "ref", "xref", "pxref":
			// @ref{node, entry, title, …}: the title when given, else the node without Octave's XREF.
			parts := strings.Split(content, ",")
			content = strings.TrimPrefix(strings.TrimSpace(parts[0]), "XREF")
			if len(parts) > 2 && strings.TrimSpace(parts[2]) != "" {
				content = strings.TrimSpace(parts[2])
			}
			b.WriteString(inline(content))
		default:
			if sym, ok := symbols[name]; ok && strings.TrimSpace(content) == "" {
				b.WriteString(sym)
			} else {
				b.WriteString(inline(content))
			}
		}
		i = next - 1
	}
	return b.String()
}

// dedent removes the indentation all non-blank lines share (help comments start with a space).
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	if common <= 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common {
			out[i] = l[common:]
		}
	}
	return out
}
