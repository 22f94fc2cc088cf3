package game_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
)

const wells = "lig,base,yield\nL1,B1,10\nL1,B2,40\nL2,B1,90\nL2,B2,20\n"

func TestSetupPlayAndSummarize(t *testing.T) {
	for _, c := range []struct {
		spec game.Spec
		want string
	}{
		{game.Spec{CSVData: wells, Objective: "yield", Vars: []string{"lig", "base"}, Planner: "llm", Budget: 2}, `planner "llm"`},
		{game.Spec{CSVData: wells, Objective: "yield", Vars: []string{"lig", "base"}, Planner: "bayes", Budget: 201}, "at most 200 measurements"},
		{game.Spec{CSVData: wells, Objective: "yield", Vars: []string{"lig", "base"}, Budget: 5}, "only 4 conditions"},
		{game.Spec{CSV: "x.csv", Objective: "yield", Vars: []string{"lig"}, Budget: 1}, "this server has none"},
	} {
		if _, err := game.NewSetup(&dataset.Roots{}, &c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	if _, err := game.NewSetup(&dataset.Roots{}, &game.Spec{CSV: "x.csv", Objective: "yield", Vars: []string{"lig"}, Budget: 1}); !errors.Is(err, dataset.ErrNotUnderRoot) {
		t.Errorf("a path without roots: %v, want ErrNotUnderRoot", err)
	}
	s, err := game.NewSetup(&dataset.Roots{}, &game.Spec{CSVData: wells, Objective: "yield", Vars: []string{"lig", "base"}, Planner: "random", Budget: 4})
	if err != nil || s.Campaign.Planner != "random" || s.Group.Space().Size() != 4 {
		t.Fatalf("NewSetup = %+v, %v", s, err)
	}
	tb, err := dataset.Read(strings.NewReader(wells), "wells.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}})
	if err != nil {
		t.Fatal(err)
	}
	gm := &game.Game{Table: tb}
	var rs []*game.Result
	for seed := int64(1); seed <= 3; seed++ {
		r, err := gm.Play(context.Background(), tb.Groups[0], "random", seed, 4, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Steps) != 4 || r.Repeats != 0 || r.Curves.NMA[3] != 1 {
			t.Errorf("seed %d: %d steps, %d repeats, NMA@4 %v; want every well once and the best found", seed, len(r.Steps), r.Repeats, r.Curves.NMA[3])
		}
		rs = append(rs, r)
	}
	sum := game.Summarize("random", rs, 4)
	if sum.Campaigns != 3 || sum.NMA[1].N != 3 || sum.Repeats != 0 {
		t.Errorf("Summarize = %+v", sum)
	}
	var b strings.Builder
	game.WriteSummaries(&b, []*game.Summary{sum}, 4)
	if out := b.String(); !strings.Contains(out, "NMA@1") || strings.Contains(out, "NMA@5") || !strings.Contains(out, "random") {
		t.Errorf("WriteSummaries for a budget of 4:\n%s", out)
	}
}
