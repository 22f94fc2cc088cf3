package kernel

import (
	"strconv"

	"github.com/labmate/labmate/protocol"
)

// ParseSamples reads telemetry from one line of printed output: every `name = number`,
// `name: number` or `name=number` pair becomes a sample (Octave's `x = 3.2000` display
// included). When a line also carries `t` or `time`, that value becomes the simulation time
// of the other samples on the line: `t=0.1 y=2e5` is one sample y=2e5 at t=0.1. Lines
// without '=' or ':' cost no allocation.
func ParseSamples(line string) []*protocol.Sample {
	if !hasSep(line) {
		return nil
	}
	var out []*protocol.Sample
	var t *float64
	var tName string
	for i := 0; i < len(line); {
		name, v, next, ok := pairAt(line, i)
		if !ok {
			i = next
			continue
		}
		i = next
		if name == "t" || name == "time" {
			tv := v
			t, tName = &tv, name
			continue
		}
		out = append(out, &protocol.Sample{Name: name, Value: v, Source: protocol.FromStdout})
	}
	if len(out) == 0 && t != nil {
		return []*protocol.Sample{{Name: tName, Value: *t, Source: protocol.FromStdout}}
	}
	for _, s := range out {
		s.T = t
	}
	return out
}

func hasSep(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' || s[i] == ':' {
			return true
		}
	}
	return false
}

// pairAt tries to read `name <sep> number` at i (i must start a word); next is where to go on.
func pairAt(s string, i int) (name string, v float64, next int, ok bool) {
	// Find the start of a word that is preceded by a separator (or the line start).
	for i < len(s) && !(isNameStart(s[i]) && (i == 0 || isBoundary(s[i-1]))) {
		i++
	}
	if i >= len(s) {
		return "", 0, i, false
	}
	j := i + 1
	for j < len(s) && isNameChar(s[j]) {
		j++
	}
	name = s[i:j]
	k := skipSpaces(s, j)
	if k >= len(s) || (s[k] != '=' && s[k] != ':') {
		return "", 0, j, false
	}
	if s[k] == '=' && k+1 < len(s) && s[k+1] == '=' { // `a == b` is a comparison
		return "", 0, k + 2, false
	}
	k = skipSpaces(s, k+1)
	e := k
	for e < len(s) && !isBoundary(s[e]) {
		e++
	}
	if e == k {
		return "", 0, k, false
	}
	v, err := strconv.ParseFloat(s[k:e], 64)
	if err != nil {
		return "", 0, e, false
	}
	return name, v, e, true
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameChar(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }
func isBoundary(c byte) bool {
	return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '(' || c == '['
}
