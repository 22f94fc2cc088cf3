package bench_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
)

func TestLoadReactionErrors(t *testing.T) {
	p, err := eval.Find(suzukiCSV)
	if err != nil {
		t.Fatal(err)
	}
	bad := bench.Suzuki
	bad.Components = []string{"ligand", "base"}
	_, err = bench.LoadReaction(p, &bad)
	want := `bench: reaction: dataset: bad CSV: ` + p + `:1, column "base": no variable column "base" in the header (columns: reaction_no, reactant_1, reactant_1_code, reactant_1_smiles, reactant_2, reactant_2_smiles, catalyst, catalyst_smiles, ligand, ligand_smiles, reagent, reagent_smiles, solvent, solvent_smiles, solvent_original, product_smiles, yield, mass_ion_count)`
	if err == nil || err.Error() != want || !errors.Is(err, bench.ErrReaction) {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// A product that is not a function of the reactants.
	bad = bench.Suzuki
	bad.Product = "ligand"
	bad.Components = []string{"catalyst", "reagent", "solvent"}
	if _, err := bench.LoadReaction(p, &bad); err == nil || err.Error() != "bench: reaction: "+p+": reactants 6-chloroquinoline + 2a, Boronic Acid give two products, P(tBu)3 and P(Ph)3" {
		t.Errorf("two products: %v", err)
	}
	small := filepath.Join(t.TempDir(), "small.csv")
	if err := os.WriteFile(small, []byte("r1,r2,cat,prod,yield\nA,B,C,P,50\nNone,B,C,P,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := &bench.ReactionSpec{Objective: "yield", Reactants: []string{"r1", "r2"}, Components: []string{"cat"}, Product: "prod", None: "None", Time: time.Hour}
	if _, err := bench.LoadReaction(small, none); err == nil || err.Error() != "bench: reaction: "+small+`: reactant column r1 has rows without a reactant ("None"): drop them` {
		t.Errorf("a reactant None: %v", err)
	}
	bad = bench.Suzuki
	bad.Time = 0
	if _, err := bench.LoadReaction(p, &bad); err == nil || err.Error() != "bench: reaction: "+p+": the spec needs a temperature and a positive time" {
		t.Errorf("no time: %v", err)
	}
}
