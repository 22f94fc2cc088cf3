package memorytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/statement"
)

// MergePair is one case of the merge table: B written after A, without a model. Merge says
// whether B is A in other words (merged into it) or a different fact (kept beside it).
type MergePair struct {
	Why   string
	A, B  string
	Merge bool
}

// MergeTable is the hand-written table deterministic consolidation must pass: the same fact
// reworded (other word order, units, aliases) is merged; a different number, unit, sign,
// polarity, comparison, material, method or software version is kept.
var MergeTable = []MergePair{
	// The same fact in other words.
	{"reworded, alias copper, Å", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 3.615 Angstrom", "With the EAM Cu_u3 potential, fcc copper has a lattice constant of 3.615 Å", true},
	{"unit conversion Å → nm", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 3.615 Angstrom", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 0.3615 nm", true},
	{"clauses reordered", "SCF for Al converges with mixing_beta 0.3 and fails with 0.9", "With mixing_beta 0.3 the SCF for Al converges; with 0.9 it fails", true},
	{"plural", "ode45 diverges on the stiff Robertson problem", "ode45 diverges on the stiff Robertson problems", true},
	{"s → ms, word order", "Explicit Euler on y' = -50 y is unstable for dt above 0.04 s", "For dt above 40 ms, explicit Euler on y' = -50 y is unstable", true},
	{"alias silicon", "The band gap of Si computed with PBE is 0.6 eV", "PBE gives a band gap of 0.6 eV for silicon", true},
	{"°C → K", "Water boils at 100 °C at sea level", "At sea level water boils at 373.15 K", true},
	{"word order", "The maglev coil current is limited to 2 A", "Coil current of the maglev is limited to 2 A", true},
	{"% → percent", "Kp = 5 gives 38% overshoot on the maglev plant", "On the maglev plant, Kp = 5 gives 38 percent overshoot", true},
	{"timestep alias, %", "LAMMPS NVE runs of Cu drift by 0.1% per ns with a 2 fs time step", "With a 2 fs timestep, LAMMPS NVE runs of copper drift 0.1 % per ns", true},
	{"kHz → Hz", "The sensor samples at 1 kHz", "The sensor sample rate is 1000 Hz", true},
	{"clause moved", "Use ode15s for stiff problems", "For stiff problems, use ode15s", true},
	{"noun for verb", "The relay test of the maglev plant oscillates at 3.1 Hz", "Relay test on the maglev plant: oscillates at 3.1 Hz", true},
	{"QE alias and version", "QE 7.2 needs ecutwfc 40 Ry for Si", "For Si, Quantum ESPRESSO 7.2 needs an ecutwfc of 40 Ry", true},
	{"active for passive", "mixing_beta 0.3 makes the Al SCF converge in 12 iterations", "The Al SCF converges in 12 iterations with mixing_beta 0.3", true},
	{"yields", "The yield of the Suzuki coupling at 80 °C is 72%", "At 80 °C the Suzuki coupling yields 72%", true},
	{"possessive", "Octave's ode45 needs about 2000 steps on this problem", "On this problem ode45 in Octave needs about 2000 steps", true},
	{"backward Euler alias", "Implicit Euler is stable for the stiff decay at any dt", "Backward Euler is stable at any dt for the stiff decay", true},
	{"aluminium alias, phase", "The bulk modulus of fcc Al is 76 GPa", "fcc aluminium has a bulk modulus of 76 GPa", true},
	{"g/mL, word order", "The ethanol density at 20 °C is 0.789 g/mL", "At 20 °C ethanol has a density of 0.789 g/mL", true},
	{"spacing and case (exact)", "Kp=5 oscillates", "KP = 5 oscillates!", true},
	{"e-notation", "The residual drops to 1e-8 after 30 iterations", "After 30 iterations the residual drops to 1.0×10^-8", true},

	// Different facts.
	{"different number", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 3.615 Angstrom", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 3.597 Angstrom", false},
	{"opposite association", "SCF for Al converges with mixing_beta 0.3 and fails with 0.9", "SCF for Al fails with mixing_beta 0.3 and converges with 0.9", false},
	{"stable/unstable", "Explicit Euler on y' = -50 y is stable for dt = 0.01", "Explicit Euler on y' = -50 y is unstable for dt = 0.01", false},
	{"converges/diverges", "ode45 converges on the Robertson problem", "ode45 diverges on the Robertson problem", false},
	{"sign", "The reaction is exothermic at -5 °C", "The reaction is exothermic at 5 °C", false},
	{"unit", "The lattice constant of fcc Cu is 3.615 Å", "The lattice constant of fcc Cu is 3.615 nm", false},
	{"material", "The band gap of Si with PBE is 0.6 eV", "The band gap of Ge with PBE is 0.6 eV", false},
	{"software version", "QE 7.2 needs ecutwfc 40 Ry for Si", "QE 7.3 needs ecutwfc 40 Ry for Si", false},
	{"negation", "Use ode15s for stiff problems", "Do not use ode15s for stiff problems", false},
	{"below/above", "The overshoot must stay below 5%", "The overshoot must stay above 5%", false},
	{"< / >", "dt < 0.04 keeps explicit Euler stable", "dt > 0.04 keeps explicit Euler stable", false},
	{"at most/at least", "The SCF converges in at most 20 iterations", "The SCF converges in at least 20 iterations", false},
	{"phase", "fcc Cu has a lattice constant of 3.615 Å", "bcc Cu has a lattice constant of 3.615 Å", false},
	{"ensemble", "LAMMPS NVE runs drift by 0.1% per ns", "LAMMPS NVT runs drift by 0.1% per ns", false},
	{"digits swapped", "The Suzuki coupling yield at 80 °C is 72%", "The Suzuki coupling yield at 80 °C is 27%", false},
	{"numbers swapped between clauses", "Kp = 5 gives 38% overshoot and Kp = 2.5 gives 3.8% overshoot", "Kp = 2.5 gives 38% overshoot and Kp = 5 gives 3.8% overshoot", false},
	{"kHz/MHz", "The sensor samples at 1 kHz", "The sensor samples at 1 MHz", false},
	{"solver", "ode45 needs 2000 steps on the Robertson problem", "ode23 needs 2000 steps on the Robertson problem", false},
	{"with/without", "The time step must be 2 fs with SHAKE", "The time step must be 2 fs without SHAKE", false},
	{"functional", "The SCF of TiO2 converges with PBE", "The SCF of TiO2 converges with LDA", false},
	{"library version", "numpy 1.26 polyfit warns on rank-deficient fits", "numpy 2.0 polyfit warns on rank-deficient fits", false},
	{"min/s", "Heating the plate reader to 37 °C takes 10 min", "Heating the plate reader to 37 °C takes 10 s", false},
	{"implicit/explicit", "Implicit Euler is stable for the stiff decay at any dt", "Explicit Euler is stable for the stiff decay at any dt", false},
	{"g/mL vs g/L", "The water density at 4 °C is 1.000 g/mL", "The water density at 4 °C is 1.000 g/L", false},
	{"increases/decreases", "The growth rate increases with temperature", "The growth rate decreases with temperature", false},
	{"exponent sign", "The catalyst loading is 1e-3 mol", "The catalyst loading is 1e3 mol", false},
	{"minus sign", "The Seebeck coefficient of the sample is -12 µV/K", "The Seebeck coefficient of the sample is 12 µV/K", false},
}

// MergeScore is how a store and consolidation did on the table.
type MergeScore struct {
	Pairs, ShouldMerge, Merged, Correct int
	Precision, Recall                   float64
	Wrong                               []string
}

// RunMerge writes every pair of MergeTable through consolidation into a store of open (each pair
// in its own namespace), checks that the table's verdict holds, that no active fact lost its
// number (every active text is one of the texts written, unchanged), and that a merge kept the
// evidence and provenance of both; it logs the precision and recall of merging.
func RunMerge(t *testing.T, open func(t *testing.T) memory.Store) {
	s := open(t)
	t.Cleanup(func() { s.Close() })
	sc := ScoreMerge(t, s)
	t.Logf("merge table: %d pairs (%d to merge): %d merged, precision %.2f, recall %.2f", sc.Pairs, sc.ShouldMerge, sc.Merged, sc.Precision, sc.Recall)
	for _, w := range sc.Wrong {
		t.Error(w)
	}
}

// ScoreMerge runs MergeTable on s and scores it.
func ScoreMerge(t *testing.T, s memory.Store) *MergeScore {
	ctx := t.Context()
	sc := &MergeScore{Pairs: len(MergeTable)}
	tp := 0
	for i, p := range MergeTable {
		ns := fmt.Sprintf("merge/p%02d", i)
		if p.Merge {
			sc.ShouldMerge++
		}
		var ids []string
		for j, text := range []string{p.A, p.B} {
			rep, err := consolidate.Consolidate(ctx, s, &consolidate.Input{Namespace: ns, Actor: "test", Facts: []*memory.Fact{{
				Text: text, Evidence: []string{fmt.Sprintf("evidence %c", 'a'+j)},
				Provenance: memory.Provenance{Operations: []string{fmt.Sprintf("op-%c", 'a'+j)}, Session: fmt.Sprintf("run-%c", 'a'+j)},
			}}}, nil)
			if err != nil {
				t.Fatalf("pair %d (%s): %v", i, p.Why, err)
			}
			ids = append(ids, rep.Actions[0].ID)
		}
		res := search(t, s, &memory.Query{Namespaces: []string{ns}})
		merged := len(res) == 1
		if merged {
			sc.Merged++
			if p.Merge {
				tp++
			}
		}
		if merged == p.Merge {
			sc.Correct++
		} else {
			sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): merged=%v, want %v\n  A: %s\n  B: %s\n  distinguish: %q, similarity %.2f",
				i, p.Why, merged, p.Merge, p.A, p.B, statement.Distinguish(p.A, p.B), statement.ContentSimilarity(p.A, p.B)))
		}
		for _, r := range res {
			if r.Fact.Text != p.A && r.Fact.Text != p.B {
				sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): an active fact was rewritten: %q", i, p.Why, r.Fact.Text))
			}
		}
		if merged {
			f := res[0].Fact
			if f.Text != p.A || ids[0] != ids[1] {
				sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): merged into %q (ids %v), want the first fact", i, p.Why, f.Text, ids))
			}
			if !slices.Equal(f.Evidence, []string{"evidence a", "evidence b"}) || !slices.Equal(f.Provenance.Operations, []string{"op-a", "op-b"}) ||
				len(f.Provenance.Merged) != 1 || f.Provenance.Merged[0].Session != "run-b" {
				sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): the merge lost evidence or provenance: %+v", i, p.Why, f))
			}
			h := history(t, s, &memory.HistoryParams{EntryID: f.ID})
			if got := events(h); !slices.Equal(got, []memory.Event{memory.EventAdd, memory.EventMerge}) || h[1].New != p.B && !strings.Contains(h[1].Reason, p.B) {
				sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): merge history %+v", i, p.Why, h))
			}
		} else if len(res) == 2 {
			// Kept side by side: the second's history says why, when they were close.
			h := history(t, s, &memory.HistoryParams{EntryID: ids[1]})
			if len(h) != 1 || h[0].Event != memory.EventAdd {
				sc.Wrong = append(sc.Wrong, fmt.Sprintf("pair %d (%s): history of the second %+v", i, p.Why, h))
			}
		}
	}
	if sc.Merged > 0 {
		sc.Precision = float64(tp) / float64(sc.Merged)
	} else {
		sc.Precision = 1
	}
	sc.Recall = float64(tp) / float64(sc.ShouldMerge)
	return sc
}
