package perception

import (
	"regexp"
	"slices"
	"strings"
)

// hasOpenLoop reports whether the lowercased code holds a loop whose number of iterations
// nothing bounds: one that runs until a tolerance is met, a flag is set or a value equals
// another (`while true`, `while err > tol`, `while t != t_end`, Octave's `do … until`) — the
// one construct that can burn a CPU forever without printing. A while loop that counts a
// variable towards a bound (`while n < N` with `n += 1`), steps a clock to its end
// (`while t < t_end` with `t += dt`) or reads its input (shell's `while read line`) is
// finite work, however long it runs quietly. Comments do not count.
func hasOpenLoop(lc string) bool {
	for line := range strings.Lines(lc) {
		t := strings.TrimLeft(line, " \t")
		if t == "" || t[0] == '#' || t[0] == '%' {
			continue
		}
		if w := strings.TrimRight(t, " \t\r\n;"); w == "do" {
			return true
		}
		if !strings.HasPrefix(t, "while") || len(t) == 5 || strings.IndexByte(" (:", t[5]) < 0 {
			continue
		}
		if !boundedLoop(loopCondition(t[5:]), lc) {
			return true
		}
	}
	return false
}

// loopCondition cuts a while statement's condition from what follows `while`: Python's `:`
// and a body on the same line, shell's `; do`, Octave's trailing `,` or `;`.
func loopCondition(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "; do"); i >= 0 {
		s = s[:i]
	} else if strings.HasSuffix(s, " do") {
		s = s[:len(s)-3]
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ':', ',', ';':
			if depth == 0 {
				return strings.TrimSpace(s[:i])
			}
		case '#', '%':
			if depth == 0 {
				return strings.TrimSpace(s[:i])
			}
		}
	}
	return s
}

var (
	// counterCmp: a variable ordered against a bound, either way round (`n < N`, `t_end > t`,
	// shell's `$i -lt 10`). The counter is the variable the code steps.
	counterCmp = regexp.MustCompile(`^\(*\s*"?\$?\{?([a-z_][a-z0-9_.]*)\}?"?\s*(<=|>=|<|>|-lt|-le|-gt|-ge)\s*"?(.+?)\s*\)*$`)
	identifier = regexp.MustCompile(`^"?\$?\{?([a-z_][a-z0-9_.]*)\}?"?\)*$`)
)

// boundedLoop: the condition only compares variables the code steps up or down with bounds
// (`n < N`, `i <= n && j <= m`), or reads input (shell's `read`). A condition that also waits
// for a tolerance or a flag (`k < maxit && res > tol`) is a search with a safety cap, open-ended
// in what it means; one that compares for equality or inequality is never bounded: a float
// stepped past its target never equals it.
func boundedLoop(cond, code string) bool {
	cond = strings.TrimSpace(strings.Trim(strings.TrimSpace(cond), "[]"))
	if cond == "" {
		return false
	}
	if f := strings.Fields(cond); f[0] == "read" || strings.HasPrefix(cond, "ifs=") && slices.Contains(f, "read") {
		return true
	}
	if strings.Contains(cond, " or ") || strings.Contains(cond, "||") || strings.Contains(cond, " -o ") {
		return false
	}
	cond = strings.NewReplacer("&&", "\x00", " and ", "\x00", " -a ", "\x00", "&", "\x00").Replace(cond)
	for part := range strings.SplitSeq(cond, "\x00") {
		m := counterCmp.FindStringSubmatch(strings.Trim(strings.TrimSpace(part), "()[] "))
		if m == nil {
			return false
		}
		v := identifier.FindStringSubmatch(strings.TrimSpace(m[3]))
		if !stepped(m[1], code) && (v == nil || !stepped(v[1], code)) {
			return false
		}
	}
	return true
}

// stepped: the code adds to or subtracts from the variable v in place (`v += 1`, `v = v + dt`,
// `v++`, shell's `v=$((v+1))`, `((v++))`, `let v++`).
func stepped(v, code string) bool {
	q := regexp.QuoteMeta(v)
	re := regexp.MustCompile(`(^|[^a-z0-9_.])(` + q + `\s*(\+=|-=|\+\+|--)|(\+\+|--)` + q + `\b|` +
		q + `\s*=\s*\(*\s*\$?\(*\s*\$?` + q + `\s*[+-]|` + q + `\s*=\s*[^=\n]*[+-]\s*\$?` + q + `\b)`)
	return re.MatchString(code)
}
