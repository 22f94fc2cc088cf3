package perception

import (
	"regexp"
	"strings"
)

// A table without a header (see bareRun) has no names in the stream, but the code that prints
// it usually has them: `print(it, res, du)`, `print(f"{it:5d} {res:14.6e}")`,
// `printf('%5d %14.6e\n', k, err)`. rowNames reads them, as a scientist reading the cell
// would, so that the columns of a bare table get the roles of their names (a residual, a
// loss, an energy) instead of being anonymous.

// printCall finds the print statements of Python, Octave and C-like code.
var printCall = regexp.MustCompile(`\b(print|printf|fprintf|disp)\s*\(`)

// printSpec is a printf conversion (`%5d`, `%-14.6e`, `%g`) or an escaped percent sign.
var printSpec = regexp.MustCompile(`%%|%[-+ #0]*[0-9*]*(\.[0-9*]+)?[a-zA-Z]`)

// formatField is a replacement field of str.format: `{}`, `{0:.3e}`.
var formatField = regexp.MustCompile(`\{[^}]*\}`)

// maxRowNames bounds the print statements read from one cell.
const maxRowNames = 16

// rowNames returns, for each print statement of code that prints a bare row — values
// separated by blanks or punctuation, no words — the names of its values in order ("" for a
// value that is an expression rather than a name).
func rowNames(code string) [][]string {
	var out [][]string
	for _, loc := range printCall.FindAllStringSubmatchIndex(code, -1) {
		if len(out) == maxRowNames {
			break
		}
		args, ok := callArgs(code[loc[1]:])
		if !ok || len(args) == 0 {
			continue
		}
		var names []string
		switch code[loc[2]:loc[3]] {
		case "print":
			names = pyPrintNames(args)
		case "disp":
			names = dispNames(args)
		default:
			names = printfNames(args)
		}
		named := false
		for _, n := range names {
			named = named || n != ""
		}
		if len(names) >= 2 && len(names) <= maxColumns && named {
			out = append(out, names)
		}
	}
	return out
}

// callArgs splits the arguments of a call whose opening parenthesis was just read, at the
// commas outside brackets and string literals.
func callArgs(s string) ([]string, bool) {
	var args []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '\'' || c == '\\' && i+1 < len(s) && s[i+1] == '\'' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" {
					args = append(args, a)
				}
				return args, true
			}
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		case c == '\n' && depth == 0 && i > 0 && s[i-1] != ',' && s[i-1] != '(' && s[i-1] != '\\':
			return nil, false // a statement that does not close on its line
		}
	}
	return nil, false
}

// pyPrintNames reads a Python print's values: an f-string's fields, a format string's
// arguments (`"%d %e" % (k, r)`, `"{} {}".format(k, r)`), or plain arguments.
func pyPrintNames(args []string) []string {
	var plain []string
	for _, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && isIdent(strings.TrimSpace(k)) && !strings.HasPrefix(strings.TrimSpace(a[len(k)+1:]), "=") {
			continue // sep=, end=, flush=, file=
		}
		plain = append(plain, a)
	}
	if len(plain) == 0 {
		return nil
	}
	first := plain[0]
	lit, rest, isLit := stringLiteral(first)
	switch {
	case isLit && len(plain) == 1 && rest == "" && strings.ContainsAny(first[:strings.IndexAny(first, "'\"")], "fF"):
		return fstringNames(lit)
	case isLit && len(plain) == 1 && strings.HasPrefix(strings.TrimSpace(rest), "%"):
		if !bareFormat(printSpec.ReplaceAllString(lit, " ")) {
			return nil
		}
		t := strings.TrimSpace(strings.TrimSpace(rest)[1:])
		if strings.HasPrefix(t, "(") {
			inner, ok := callArgs(t[1:])
			if !ok {
				return nil
			}
			return exprNames(inner)
		}
		return nil
	case isLit && len(plain) == 1 && strings.HasPrefix(rest, ".format("):
		if !bareFormat(formatField.ReplaceAllString(lit, " ")) {
			return nil
		}
		inner, ok := callArgs(rest[len(".format("):])
		if !ok {
			return nil
		}
		return exprNames(inner)
	}
	for _, a := range plain {
		if strings.ContainsAny(a, "'\"") {
			return nil // a label among the values: not a bare row
		}
	}
	return exprNames(plain)
}

// printfNames reads the values of a printf or fprintf call: the arguments after its format
// (an fprintf's file handle comes before it).
func printfNames(args []string) []string {
	for i, a := range args {
		lit, rest, ok := stringLiteral(a)
		if !ok {
			continue
		}
		if rest != "" || !bareFormat(printSpec.ReplaceAllString(strings.ReplaceAll(strings.ReplaceAll(lit, `\n`, " "), `\t`, " "), " ")) {
			return nil
		}
		names := exprNames(args[i+1:])
		if len(printSpec.FindAllString(lit, -1)) != len(names) {
			return nil
		}
		return names
	}
	return nil
}

// dispNames reads the values of Octave's `disp([k, res, du])` (or `disp([k res du])`): the
// elements of the one row vector it displays.
func dispNames(args []string) []string {
	if len(args) != 1 || !strings.HasPrefix(args[0], "[") || !strings.HasSuffix(args[0], "]") {
		return nil
	}
	inner := strings.TrimSpace(args[0][1 : len(args[0])-1])
	if strings.ContainsAny(inner, ";'\"") {
		return nil // a matrix or a string, not a row of values
	}
	var elems []string
	if strings.Contains(inner, ",") {
		var ok bool
		if elems, ok = callArgs(inner + ")"); !ok {
			return nil
		}
	} else {
		elems = strings.Fields(inner)
	}
	return exprNames(elems)
}

// fstringNames reads the fields of an f-string's body: `{it:5d} {res:14.6e}` → it, res.
func fstringNames(lit string) []string {
	var names []string
	var text strings.Builder
	for i := 0; i < len(lit); i++ {
		if lit[i] != '{' {
			text.WriteByte(lit[i])
			continue
		}
		if i+1 < len(lit) && lit[i+1] == '{' {
			i++
			continue
		}
		end := strings.IndexByte(lit[i:], '}')
		if end < 0 {
			return nil
		}
		field := lit[i+1 : i+end]
		if j := strings.IndexAny(field, ":!"); j >= 0 {
			field = field[:j]
		}
		names = append(names, exprName(field))
		i += end
	}
	if !bareFormat(text.String()) {
		return nil
	}
	return names
}

// stringLiteral reads a string literal at the start of s (after a Python prefix such as f,
// r or b): its body and what follows it.
func stringLiteral(s string) (body, rest string, ok bool) {
	i := 0
	for i < len(s) && i < 2 && strings.IndexByte("fFrRbBuU", s[i]) >= 0 {
		i++
	}
	if i >= len(s) || (s[i] != '"' && s[i] != '\'') {
		return "", "", false
	}
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && q == '"' {
			j++
			continue
		}
		if s[j] == q {
			return s[i+1 : j], strings.TrimSpace(s[j+1:]), true
		}
	}
	return "", "", false
}

// bareFormat: the literal text of a format holds no words — only blanks, separators and
// escapes — so that what it prints is a row of bare numbers.
func bareFormat(text string) bool {
	text = strings.ReplaceAll(strings.ReplaceAll(text, `\n`, " "), `\t`, " ")
	for i := 0; i < len(text); i++ {
		if isNameStart(text[i]) {
			return false
		}
	}
	return true
}

// exprNames names each expression (see exprName).
func exprNames(exprs []string) []string {
	out := make([]string, len(exprs))
	for i, e := range exprs {
		out[i] = exprName(e)
	}
	return out
}

// exprName is the name a printed expression gives its value: a variable (`res`), the last
// part of an attribute (`state.energy` → energy), or a short call or norm that reads as a
// quantity (`norm(r)`, `abs(dx)`); "" for anything else.
func exprName(e string) string {
	e = strings.TrimSpace(e)
	if isIdent(e) {
		return e
	}
	if i := strings.LastIndexByte(e, '.'); i > 0 && isIdent(e[i+1:]) && isIdent(strings.ReplaceAll(e[:i], ".", "_")) {
		return e[i+1:]
	}
	if len(e) <= 24 && !strings.ContainsAny(e, " ,") && isQuantityName(e) {
		return e
	}
	return ""
}

// isIdent: a plain identifier.
func isIdent(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}
