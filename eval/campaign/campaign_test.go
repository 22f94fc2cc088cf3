package campaign_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/labmate/labmate/eval/campaign"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
)

func reactionsDir(t *testing.T) string {
	t.Helper()
	dir, err := campaign.FindReactions()
	if err != nil {
		t.Skip(err)
	}
	return dir
}

func openBench(t *testing.T, ds campaign.Dataset) *dataset.Table {
	t.Helper()
	tb, err := dataset.Open(filepath.Join(reactionsDir(t), ds.File), &dataset.Options{Objective: "yield", Vars: ds.Vars, Groups: ds.Groups, Drop: ds.Drop})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestRandomMatchesReference: the random planner's mean NMA curve, through the real campaign
// loop and metrics, matches the exact expectation of the reference file within 0.02 at every
// turn, on both datasets.
func TestRandomMatchesReference(t *testing.T) {
	refs, err := game.ReadReferences(filepath.Join(reactionsDir(t), "optimization_game_reference_curves.csv"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := 500
	if testing.Short() {
		seeds = 100
	}
	for _, bg := range campaign.Datasets {
		t.Run(bg.Name, func(t *testing.T) {
			tb := openBench(t, bg)
			var ref *game.Reference
			for _, r := range refs {
				if r.Dataset == bg.Name && r.Method == bg.RandomRef {
					ref = r
				}
			}
			if ref == nil || len(ref.NMA) != 20 {
				t.Fatalf("no 20-turn random reference for %s", bg.Name)
			}
			gm := &game.Game{Table: tb}
			var curves [][]float64
			for seed := 1; seed <= seeds; seed++ {
				for _, g := range tb.Groups {
					r, err := gm.Play(context.Background(), g, "random", int64(seed), 20, false)
					if err != nil {
						t.Fatal(err)
					}
					if r.Repeats != 0 {
						t.Fatalf("random repeated a condition: %+v", r.Steps)
					}
					curves = append(curves, r.Curves.NMA)
				}
			}
			got := lab.Summarize(curves)
			tol := 0.02
			if testing.Short() {
				tol = 0.05
			}
			for i, s := range got {
				if math.Abs(s.Mean-ref.NMA[i]) > tol {
					t.Errorf("turn %d: mean NMA %.4f, reference %.4f", i+1, s.Mean, ref.NMA[i])
				}
			}
			t.Logf("NMA@5 %.3f (ref %.3f), @10 %.3f (%.3f), @20 %.3f (%.3f)", got[4].Mean, ref.NMA[4], got[9].Mean, ref.NMA[9], got[19].Mean, ref.NMA[19])
		})
	}
}

// TestMemoryPriorNeverSeesTheTarget: with a memory prior the bayes planner is built from the
// store's steps of the other groups only.
func TestMemoryPriorNeverSeesTheTarget(t *testing.T) {
	tb := openBench(t, campaign.Datasets[1])
	st, err := labsqlite.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gm := &game.Game{Table: tb, Store: st, Priors: st}
	ctx := context.Background()
	for _, g := range tb.Groups[:3] {
		if _, err := gm.Play(ctx, g, "random", 1, 5, false); err != nil {
			t.Fatal(err)
		}
	}
	target := tb.Groups[0]
	obs, err := lab.Prior(ctx, st, tb.Name, "yield", target.Key)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 10 {
		t.Fatalf("prior has %d rows, want the other two groups' 5 steps each", len(obs))
	}
	for _, o := range obs {
		if o.Group == target.Key {
			t.Fatalf("the prior holds a step of the target group: %+v", o)
		}
	}
	r, err := gm.Play(ctx, target, "bayes", 1, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Prior != 10 || r.Planner != "bayes+memory" {
		t.Errorf("played %s with %d prior rows", r.Planner, r.Prior)
	}
}

// Run plays both datasets with the four planners and puts each dataset's reference curves
// (GPT-4, exact random) after its planners, and draws one plot per dataset.
func TestRunSmall(t *testing.T) {
	dir := reactionsDir(t)
	plots := t.TempDir()
	ss, err := campaign.Run(context.Background(), &campaign.Options{Dir: dir, Seeds: 1, Budget: 3, Plot: plots, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss {
		got = append(got, s.Dataset+" "+s.Planner)
	}
	want := []string{
		"suzuki_perera2018 random", "suzuki_perera2018 bayes-onehot", "suzuki_perera2018 bayes", "suzuki_perera2018 bayes+memory",
		"suzuki_perera2018 coscientist_log_gpt-4_no_prior", "suzuki_perera2018 coscientist_log_gpt-4_prior_10_random_rows",
		"suzuki_perera2018 random_uniform_without_replacement_exact",
		"buchwald_hartwig_game_space random", "buchwald_hartwig_game_space bayes-onehot", "buchwald_hartwig_game_space bayes",
		"buchwald_hartwig_game_space bayes+memory", "buchwald_hartwig_game_space coscientist_log_gpt-4_no_prior",
		"buchwald_hartwig_game_space random_uniform_without_replacement_exact",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%q\nwant\n%q", got, want)
	}
	if ss[0].Campaigns != 15 || ss[4].Campaigns != 0 || len(ss[0].NMA) != 1 {
		t.Errorf("suzuki random: %d campaigns, NMA at %v; the first reference: %d campaigns", ss[0].Campaigns, ss[0].NMA, ss[4].Campaigns)
	}
	for _, ds := range campaign.Datasets {
		if _, err := os.Stat(filepath.Join(plots, ds.Name+".png")); err != nil {
			t.Error(err)
		}
	}
}
