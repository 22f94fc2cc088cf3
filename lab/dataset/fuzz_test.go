package dataset_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/dataset"
)

// vocabulary is every text a redacted error may hold besides numbers: the file name, the
// column names given and the messages' own words.
const vocabulary = "fuzz.csv sub lig base yield dataset: bad CSV too large column no variable objective group filter " +
	"in the header (it has columns) the objective is not a finite number duplicate conditions: same as line empty group " +
	"value empty level no data rows the file is empty (no header) rows; at most are allowed levels over all the variables " +
	"groups the line has bytes; more than at least (and then: wrong number of fields bare \" in non-quoted-field extraneous " +
	"or missing \" in quoted-field a column cannot be both a variable and a group the column is named twice as"

// FuzzRead: Read never panics; it returns a table whose every group's space is its rows, or
// an error wrapping ErrBadCSV that, redacted, quotes nothing of the input. The seeds are in
// testdata/fuzz/FuzzRead; `go test -fuzz FuzzRead ./lab/dataset` searches further.
func FuzzRead(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte("sub,lig,base,yield\nA,L1,B1,1e308\nA,L1,B2,-0\n"))
	f.Add([]byte("sub,lig,base,yield\n\"A\nB\",L1,B1,1\n"))
	lim := &dataset.Limits{Bytes: 1 << 16, LineBytes: 256, Columns: 8, Rows: 50, Levels: 8, TotalLevels: 12, Groups: 4}
	f.Fuzz(func(t *testing.T, in []byte) {
		o := &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}, Limits: lim, Redact: true}
		tb, err := dataset.Read(strings.NewReader(string(in)), "fuzz.csv", o)
		if err != nil {
			if !errors.Is(err, dataset.ErrBadCSV) {
				t.Fatalf("%v does not wrap ErrBadCSV", err)
			}
			msg := err.Error()
			for _, line := range strings.Split(string(in), "\n") {
				for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == '"' || r == '\r' }) {
					field = strings.TrimSpace(field)
					if len(field) >= 4 && !strings.Contains(vocabulary, field) && strings.Contains(msg, field) {
						t.Fatalf("the redacted error %q quotes %q of the input", msg, field)
					}
				}
			}
			return
		}
		for _, g := range tb.Groups {
			if g.Space().Size() != g.N || g.N == 0 {
				t.Fatalf("group %q: %d rows, a space of %d", g.Key, g.N, g.Space().Size())
			}
		}
		if len(tb.Groups) > lim.Groups || len(tb.Vars[0].Levels) > lim.Levels || len(tb.Vars[0].Levels)+len(tb.Vars[1].Levels) > lim.TotalLevels {
			t.Fatalf("beyond the limits: %d groups, %d + %d levels", len(tb.Groups), len(tb.Vars[0].Levels), len(tb.Vars[1].Levels))
		}
	})
}
