package perception

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/labmate/labmate/protocol"
)

// ErrBadConstraint is wrapped by every error ParseConstraint returns.
var ErrBadConstraint = errors.New("bad watch expression")

// ConstraintError is a malformed watch expression: what is wrong and where (1-based column).
type ConstraintError struct {
	Expr    string
	Column  int
	Problem string
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("watch %q: %s at column %d", e.Expr, e.Problem, e.Column)
}

func (e *ConstraintError) Unwrap() error { return ErrBadConstraint }

// constraintKind is the form of a constraint.
type constraintKind int

const (
	compare    constraintKind = iota // NAME OP NUMBER
	finiteOf                         // finite(NAME)
	decreasing                       // NAME decreasing
	increasing                       // NAME increasing
	within                           // NAME in [LO, HI]
)

// Constraint is a parsed watch expression (see the package documentation for the grammar).
type Constraint struct {
	Expr string // as written
	Name string // the telemetry series it is about

	kind   constraintKind
	op     string  // for compare: < <= > >= == !=
	lo, hi float64 // compare: lo is the number; within: the interval
}

// String is the expression in canonical spacing.
func (c Constraint) String() string {
	switch c.kind {
	case finiteOf:
		return "finite(" + c.Name + ")"
	case decreasing:
		return c.Name + " decreasing"
	case increasing:
		return c.Name + " increasing"
	case within:
		return c.Name + " in [" + num(c.lo) + ", " + num(c.hi) + "]"
	}
	return c.Name + " " + c.op + " " + num(c.lo)
}

// holds reports whether one value satisfies a compare, within or finite constraint.
func (c *Constraint) holds(v float64) bool {
	switch c.kind {
	case finiteOf:
		return isFinite(v)
	case within:
		return v >= c.lo && v <= c.hi
	case compare:
		switch c.op {
		case "<":
			return v < c.lo
		case "<=":
			return v <= c.lo
		case ">":
			return v > c.lo
		case ">=":
			return v >= c.lo
		case "==":
			return v == c.lo
		case "!=":
			return v != c.lo
		}
	}
	return true
}

// ParseConstraint parses one watch expression. The grammar (blanks are free between tokens):
//
//	constraint := NAME OP NUMBER            x < 1e6, overshoot_pct <= 5
//	            | "finite" "(" NAME ")"     finite(x)
//	            | NAME "decreasing"         residual decreasing
//	            | NAME "increasing"         energy increasing
//	            | NAME "in" "[" NUMBER "," NUMBER "]"    temperature in [15, 27]
//	OP         := "<" | "<=" | ">" | ">=" | "==" | "!="
//	NAME       := letter or "_", then letters, digits, "_" or "."
//	NUMBER     := a decimal number with optional sign and exponent (-3, .5, 1e6, inf); not NaN
//
// A malformed expression gives a *ConstraintError naming the problem and its column.
func ParseConstraint(expr string) (Constraint, error) {
	p := &parser{src: expr}
	c, err := p.constraint()
	if err != nil {
		return Constraint{}, err
	}
	c.Expr = expr
	return c, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) fail(at int, format string, args ...any) error {
	return &ConstraintError{Expr: p.src, Column: at + 1, Problem: fmt.Sprintf(format, args...)}
}

func (p *parser) skip() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// found describes the token at pos for an error message, `, found "tok"` — a punctuation
// character, or a run of anything else up to the next blank or punctuation —, or "" at the
// end of the expression.
func (p *parser) found() string {
	p.skip()
	if p.pos >= len(p.src) {
		return ""
	}
	end := p.pos + 1
	if !isPunct(p.src[p.pos]) {
		for end < len(p.src) && !isPunct(p.src[end]) && p.src[end] != ' ' && p.src[end] != '\t' {
			end++
		}
	}
	return ", found " + strconv.Quote(p.src[p.pos:end])
}

func isPunct(c byte) bool { return strings.IndexByte("()[],<>=!", c) >= 0 }

func (p *parser) name() (string, bool) {
	p.skip()
	start := p.pos
	if p.pos >= len(p.src) || !(isNameStart(p.src[p.pos]) || p.src[p.pos] == '|') {
		return "", false
	}
	for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || strings.IndexByte(".|/^'[]", p.src[p.pos]) >= 0) {
		p.pos++
	}
	name := p.src[start:p.pos]
	if !isColumnName(name) { // punctuation that does not make a quantity's name: back off to the word
		p.pos = start
		for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		name = p.src[start:p.pos]
		if name == "" {
			return "", false
		}
	}
	return name, true
}

func isNameStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func (p *parser) number(after string) (float64, error) {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) && !isPunct(p.src[p.pos]) && p.src[p.pos] != ' ' && p.src[p.pos] != '\t' {
		p.pos++
	}
	tok := p.src[start:p.pos]
	if tok == "" {
		return 0, p.fail(start, "expected a number after %q%s", after, p.found())
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, p.fail(start, "number %q is out of range", tok)
		}
		return 0, p.fail(start, "expected a number after %q, found %q", after, tok)
	}
	if math.IsNaN(v) {
		return 0, p.fail(start, "NaN is not a bound")
	}
	return v, nil
}

func (p *parser) expect(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) end() error {
	p.skip()
	if p.pos < len(p.src) {
		return p.fail(p.pos, "unexpected %s after the constraint", strconv.Quote(strings.TrimSpace(p.src[p.pos:])))
	}
	return nil
}

func (p *parser) constraint() (Constraint, error) {
	p.skip()
	if p.pos >= len(p.src) {
		return Constraint{}, p.fail(p.pos, "empty expression: expected a series name")
	}
	at := p.pos
	name, ok := p.name()
	if !ok {
		return Constraint{}, p.fail(at, "expected a series name%s", p.found())
	}
	if name == "finite" {
		if p.expect("(") {
			arg, ok := p.name()
			if !ok {
				p.skip()
				return Constraint{}, p.fail(p.pos, "expected a series name after \"finite(\"%s", p.found())
			}
			if !p.expect(")") {
				return Constraint{}, p.fail(p.pos, "expected \")\" after %q%s", arg, p.found())
			}
			return Constraint{Name: arg, kind: finiteOf}, p.end()
		}
	}
	p.skip()
	opAt := p.pos
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		if p.expect(op) {
			v, err := p.number(op)
			if err != nil {
				return Constraint{}, err
			}
			return Constraint{Name: name, kind: compare, op: op, lo: v}, p.end()
		}
	}
	if p.pos < len(p.src) && p.src[p.pos] == '=' {
		return Constraint{}, p.fail(opAt, "\"=\" is not a comparison (use \"==\")")
	}
	wordAt := p.pos
	word, _ := p.name()
	switch word {
	case "decreasing":
		return Constraint{Name: name, kind: decreasing}, p.end()
	case "increasing":
		return Constraint{Name: name, kind: increasing}, p.end()
	case "in":
		p.skip()
		intervalAt := p.pos
		if !p.expect("[") {
			return Constraint{}, p.fail(p.pos, "expected \"[\" after \"in\"%s", p.found())
		}
		lo, err := p.number("[")
		if err != nil {
			return Constraint{}, err
		}
		if !p.expect(",") {
			return Constraint{}, p.fail(p.pos, "expected \",\" after the lower bound%s", p.found())
		}
		hi, err := p.number(",")
		if err != nil {
			return Constraint{}, err
		}
		if !p.expect("]") {
			return Constraint{}, p.fail(p.pos, "expected \"]\" after the upper bound%s", p.found())
		}
		if lo > hi {
			return Constraint{}, p.fail(intervalAt, "empty interval: %s > %s", num(lo), num(hi))
		}
		return Constraint{Name: name, kind: within, lo: lo, hi: hi}, p.end()
	}
	p.pos = wordAt
	return Constraint{}, p.fail(wordAt, "expected a comparison (< <= > >= == !=), \"in\", \"decreasing\" or \"increasing\" after %q%s", name, p.found())
}

// constraintState checks one constraint against one series (name and source).
type constraintState struct {
	c        *Constraint
	have     bool
	prev     float64
	scale    float64 // the largest magnitude seen
	streak   int     // wrong-way moves in a row
	from     float64 // the value before the streak
	reported bool
}

// Monotone constraints tolerate noise: a move counts as wrong-way only when it exceeds
// monoRel of the values plus monoScale of the largest magnitude the series reached, and a
// violation takes monoStreak wrong-way moves in a row (moves within the tolerance neither
// count nor reset; a move the right way resets).
const (
	monoRel    = 1e-6
	monoScale  = 1e-9
	monoStreak = 3
)

// check judges one sample (norm: its magnitude, for monotone constraints on vectors).
func (cs *constraintState) check(s *protocol.Sample, norm float64) (finding, bool) {
	if cs.reported {
		return finding{}, false
	}
	c := cs.c
	switch c.kind {
	case decreasing, increasing:
		v := s.Value
		if len(s.Values) > 0 {
			v = norm
		}
		if !isFinite(v) {
			return finding{}, false // finite(…) and the non-finite detector speak to that
		}
		cs.scale = max(cs.scale, abs(v))
		if !cs.have {
			cs.have, cs.prev = true, v
			return finding{}, false
		}
		d := v - cs.prev
		if c.kind == increasing {
			d = -d
		}
		tol := monoRel*max(abs(v), abs(cs.prev)) + monoScale*cs.scale
		switch {
		case d > tol:
			if cs.streak == 0 {
				cs.from = cs.prev
			}
			cs.streak++
		case d < -tol:
			cs.streak = 0
		}
		cs.prev = v
		if cs.streak < monoStreak {
			return finding{}, false
		}
		cs.reported = true
		way := "rose"
		if c.kind == increasing {
			way = "fell"
		}
		return cs.violation(fmt.Sprintf("%s %s %d times in a row: %s → %s%s", s.Name, way, cs.streak, num(cs.from), num(v), at(s)))
	}
	if len(s.Values) == 0 {
		if c.holds(s.Value) {
			return finding{}, false
		}
		cs.reported = true
		return cs.violation(fmt.Sprintf("%s = %s%s", s.Name, num(s.Value), at(s)))
	}
	for i, x := range s.Values {
		if !c.holds(x) {
			cs.reported = true
			return cs.violation(fmt.Sprintf("%s[%d] = %s%s", s.Name, i, num(x), at(s)))
		}
	}
	return finding{}, false
}

func (cs *constraintState) violation(ev string) (finding, bool) {
	return finding{
		state:    protocol.Error,
		message:  fmt.Sprintf("watch %q violated: %s", cs.c.Expr, ev),
		evidence: fmt.Sprintf("watch %q: %s", cs.c.Expr, ev),
		severity: 1,
	}, true
}
