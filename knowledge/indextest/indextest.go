// Package indextest is the test suite every knowledge.Index passes: chunks cite their source,
// heading and lines; a source indexed again replaces its chunks; the source filter holds; a
// query's operators mean nothing; results come best first.
package indextest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/labmate/labmate/knowledge"
)

// Run runs the suite; newIndex returns an empty index.
func Run(t *testing.T, newIndex func(t *testing.T) knowledge.Index) {
	ctx := context.Background()
	manual := &knowledge.Doc{Source: "manuals/balance.md", Format: "markdown", Text: `# Balance

## Calibration
Press CAL and wait until the internal calibration weight settles.

## Cleaning
Brush the weighing pan; never use solvents.
`}
	help := &knowledge.Doc{Source: "octave:fzero", Title: "fzero", Format: "help", Heading: "optimization",
		Text: " -- x = fzero (fun, x0)\n\nFind a zero of a univariate function.\n\nSee also: fminbnd, fsolve."}
	other := &knowledge.Doc{Source: "octave:fsolve", Title: "fsolve", Format: "help", Heading: "optimization",
		Text: " -- x = fsolve (fcn, x0)\n\nSolve a system of nonlinear equations defined by the function fcn."}

	t.Run("cite", func(t *testing.T) {
		ix := newIndex(t)
		if err := ix.Add(ctx, manual, help, other); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, &knowledge.Query{Text: "calibration weight", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatal("no hits")
		}
		h := hits[0]
		if h.Source != "manuals/balance.md" || h.Heading != "Balance > Calibration" || h.StartLine != 3 || h.EndLine != 4 ||
			!strings.Contains(h.Text, "Press CAL") {
			t.Errorf("first hit %+v", h)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("hit %d scores %g above hit %d's %g", i, hits[i].Score, i-1, hits[i-1].Score)
			}
		}
		hits, err = ix.Search(ctx, &knowledge.Query{Text: "zero of a univariate function", Limit: 1})
		if err != nil || len(hits) != 1 || hits[0].Name != "fzero" || hits[0].Summary != "Find a zero of a univariate function." || hits[0].Heading != "optimization" {
			t.Errorf("help hit %+v, %v", hits, err)
		}
	})
	t.Run("replace", func(t *testing.T) {
		ix := newIndex(t)
		if err := ix.Add(ctx, manual); err != nil {
			t.Fatal(err)
		}
		revised := *manual
		revised.Text = "# Balance\n\n## Calibration\nUse the external 200 g weight.\n"
		if err := ix.Add(ctx, &revised); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, &knowledge.Query{Text: "calibration weight solvents", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || !strings.Contains(hits[0].Text, "external 200 g") {
			t.Errorf("after re-indexing: %+v", hits)
		}
	})
	t.Run("filter", func(t *testing.T) {
		ix := newIndex(t)
		if err := ix.Add(ctx, manual, help, other); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, &knowledge.Query{Text: "function weight zero", Source: "octave:", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if !strings.HasPrefix(h.Source, "octave:") {
				t.Errorf("hit from %s outside the filter", h.Source)
			}
		}
		if len(hits) == 0 {
			t.Error("no hits inside the filter")
		}
	})
	t.Run("operators", func(t *testing.T) {
		ix := newIndex(t)
		if err := ix.Add(ctx, help); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`zero" OR NOT "x`, "fzero(fun, x0) AND NEAR(", "* ^ : -", `"unterminated`} {
			if _, err := ix.Search(ctx, &knowledge.Query{Text: q}); err != nil && !strings.Contains(err.Error(), "no searchable words") {
				t.Errorf("query %q: %v", q, err)
			}
		}
	})
	t.Run("many", func(t *testing.T) {
		ix := newIndex(t)
		var docs []*knowledge.Doc
		for i := range 300 {
			docs = append(docs, &knowledge.Doc{Source: fmt.Sprintf("notes/%03d.txt", i), Format: "text",
				Text: fmt.Sprintf("Note %d about sample S%d.\n\nIt was measured at %d K.", i, i, 270+i)})
		}
		if err := ix.Add(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, &knowledge.Query{Text: "sample S123", Limit: 3})
		if err != nil || len(hits) == 0 || hits[0].Source != "notes/123.txt" {
			t.Errorf("hits %+v, %v", hits, err)
		}
	})
}
