package sqlite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/knowledge"
)

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"for non-stiff problems":    "for nonstiff problems",
		"Non-negative, NON-ZERO":    "Nonnegative, NONZERO",
		"canon-ical non- non-1 non": "canon-ical non- non-1 non",
		"no compound here":          "no compound here",
		"(non-square) é non-écrit":  "(nonsquare) é nonécrit",
	} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := queryWords("integrate a non-stiff ODE"), []string{"integrate", "a", "nonstiff", "ode"}; !cmp.Equal(got, want) {
		t.Errorf("queryWords: %q, want %q", got, want)
	}
}

func TestNameWords(t *testing.T) {
	// A vocabulary in which every word but the names is frequent, and text is more frequent
	// than the pieces it could be cut into.
	prose := strings.Repeat("read the file and sort the rows of a matrix into a string text is a word ", 3) +
		"random integers rand i x s is nan number tex t fileread sortrows"
	v := newVocabulary([]knowledge.Chunk{{Text: prose}})
	for name, want := range map[string]string{
		"fileread":           "file read",
		"sortrows":           "sort rows",
		"randi":              "rand i",
		"isnan":              "is nan",
		"deg2rad":            "deg 2 rad",
		"isString":           "is string",
		"read_file":          "", // the name field already holds read and file
		"numpy.linalg.lstsq": "",
		"text":               "", // not tex t: text is more frequent than tex
		"xs":                 "", // one-letter words only at the end, and not for two letters
		"rand":               "",
	} {
		if got := nameWords(name, v); got != want {
			t.Errorf("nameWords(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestWrittenFrom(t *testing.T) {
	q := queryWords("read an entire text file; repeat a matrix; random integers")
	for words, want := range map[string]bool{
		"file read":  true,
		"rep mat":    true,  // shortened words
		"rand i":     true,  // a last one-letter word
		"i rand":     false, // a first one
		"re mat":     false, // too short to be a shortening
		"file write": false,
		"file":       false, // one word: the name boost's business
		"":           false,
	} {
		if got := writtenFrom(words, q); got != want {
			t.Errorf("writtenFrom(%q) = %v, want %v", words, got, want)
		}
	}
}
