package sqlite

import (
	"database/sql/driver"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	msqlite "modernc.org/sqlite"

	"github.com/labmate/labmate/knowledge"
)

// foldFunc is the SQL function the full-text triggers index prose through (see fold).
const foldFunc = "labmate_fold"

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(foldFunc, 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return fold(v), nil
		case []byte:
			return fold(string(v)), nil
		}
		return args[0], nil
	})
}

// fold is the prose as the index sees it: a "non-" compound is one word ("non-stiff" becomes
// "nonstiff"), so that a question about stiff problems does not match the help of a solver
// for non-stiff ones. The stored text is unchanged.
func fold(s string) string {
	if !strings.Contains(strings.ToLower(s), "non-") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if negated(s, i) {
			b.WriteString(s[i : i+3])
			i += 4
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// negated reports whether s has, at i, the prefix "non-" of a word followed by a letter.
func negated(s string, i int) bool {
	if len(s) < i+5 || !strings.EqualFold(s[i:i+4], "non-") {
		return false
	}
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(s[i+4:])
	return unicode.IsLetter(r)
}

// vocabulary counts the words (lower-cased runs of letters) of the chunks' prose: the words a
// function name may be written from.
type vocabulary struct {
	count map[string]int
	total int
}

func newVocabulary(chunks []knowledge.Chunk) *vocabulary {
	v := &vocabulary{count: map[string]int{}}
	for _, c := range chunks {
		for _, s := range []string{c.Summary, c.Heading, c.Text} {
			for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
				v.count[w]++
				v.total++
			}
		}
	}
	return v
}

// nameWords splits a name into the words it is written from, for the index's words field:
// at punctuation, digits and case changes ("deg2rad", "mustBeNumeric", "read_csv"), and a run of
// lower-case letters into the most probable sequence of two or more words of the vocabulary
// ("fileread" is file read, "sortrows" sort rows). It is empty when the name is no more than
// its own words: the name field already holds them.
func nameWords(name string, v *vocabulary) string {
	var pieces []string
	split := false
	for _, run := range nameRuns(name) {
		if r, _ := utf8.DecodeRuneInString(run); !unicode.IsLetter(r) {
			pieces = append(pieces, run)
			continue
		}
		low := strings.ToLower(run)
		if ws := v.segment(low); ws != nil {
			pieces = append(pieces, ws...)
			split = true
		} else {
			pieces = append(pieces, low)
		}
	}
	// A name of several tokens as FTS splits it ("numpy.linalg.lstsq") adds nothing unless a
	// token was split further; a name FTS keeps whole ("deg2rad", "mustBeNumeric") does.
	if !split && len(pieces) == len(strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })) {
		return ""
	}
	return strings.Join(pieces, " ")
}

// nameRuns cuts a name into runs of letters and runs of digits, a letter run also before an
// upper-case letter that follows a lower-case one ("mustBeNumeric" is must, Be, Numeric).
func nameRuns(name string) []string {
	var runs []string
	start := -1
	var prev rune
	for i, r := range name {
		letter, digit := unicode.IsLetter(r), unicode.IsDigit(r)
		boundary := start >= 0 && (!letter && !digit ||
			letter != unicode.IsLetter(prev) ||
			unicode.IsUpper(r) && unicode.IsLower(prev))
		if boundary {
			runs = append(runs, name[start:i])
			start = -1
		}
		if start < 0 && (letter || digit) {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		runs = append(runs, name[start:])
	}
	return runs
}

// segment returns the most probable split of s into two or more words of the vocabulary under
// a unigram model (each word's probability its share of the vocabulary's words), or nil. Every
// word of a split is more frequent than s: a name made of words is rarer than each of them,
// while a word of the language is more frequent than the pieces it could be cut into ("text" is
// not tex t). Words of one letter are as frequent in help texts as variables are, so only the
// last word may be one letter ("randi" is rand i).
func (v *vocabulary) segment(s string) []string {
	n := len(s)
	if v.total == 0 || n < 3 {
		return nil
	}
	whole := v.count[s]
	logN := math.Log(float64(v.total))
	best := make([]float64, n+1) // best[i]: log-probability of the best split of s[:i]
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
		for j := 0; j < i; j++ {
			if j == 0 && i == n || math.IsInf(best[j], -1) || i-j < 2 && i < n {
				continue
			}
			c := v.count[s[j:i]]
			if c <= whole {
				continue
			}
			if p := best[j] + math.Log(float64(c)) - logN; p > best[i] {
				best[i], from[i] = p, j
			}
		}
	}
	if math.IsInf(best[n], -1) {
		return nil
	}
	var out []string
	for i := n; i > 0; i = from[i] {
		out = append(out, s[from[i]:i])
	}
	slices.Reverse(out)
	return out
}

// writtenFrom reports whether a name's words (nameWords) are all the query's words, whole or
// shortened: "read a text file" asks for fileread (file read), "repeat a matrix" for repmat
// (rep mat). A shortened word keeps at least three letters, but for a last one-letter word
// ("rand i" from random integers).
func writtenFrom(words string, query []string) bool {
	ws := strings.Fields(words)
	if len(ws) < 2 {
		return false
	}
	for i, w := range ws {
		if !slices.ContainsFunc(query, func(q string) bool {
			return q == w || (len(w) >= 3 || len(w) == 1 && i == len(ws)-1) && strings.HasPrefix(q, w)
		}) {
			return false
		}
	}
	return true
}
