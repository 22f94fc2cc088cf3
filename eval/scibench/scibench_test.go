package scibench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/eval"
)

func dataDir(t *testing.T) string {
	t.Helper()
	dir, err := eval.Find("benchmarks/scibench")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func load(t *testing.T) *Benchmark {
	t.Helper()
	b, err := New(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// raw reads a textbook file (main or *_sol) as it is, independently of the loader.
func raw(t *testing.T, name string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir(t), name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]string
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func countByGroup(items []eval.Item) map[string]int {
	n := map[string]int{}
	for _, it := range items {
		n[it.Group]++
	}
	return n
}

func TestFullSet(t *testing.T) {
	b := load(t)
	items, err := b.Items("full")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"atkins": 105, "calculus": 42, "chemmc": 38, "class": 56, "diff": 50, "fund": 71, "matter": 47, "quan": 33, "stat": 72, "thermo": 66}
	if diff := cmp.Diff(want, countByGroup(items)); diff != "" {
		t.Errorf("problems per textbook (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.ID] {
			t.Errorf("item ID %q twice", it.ID)
		}
		seen[it.ID] = true
		if !strings.HasPrefix(it.ID, it.Group+"/") || it.Kernel != "python" {
			t.Errorf("item %q: group %q, kernel %q", it.ID, it.Group, it.Kernel)
		}
	}
	// Repeated problem ids get #2 in file order.
	for _, id := range []string{"quan/2.13", "quan/2.13#2", "stat/5.8-5", "stat/5.8-5#2", "stat/Problem 1.1.1", "stat/Problem 1.1.1#2", "thermo/2.13"} {
		if !seen[id] {
			t.Errorf("no item %q", id)
		}
	}
}

// TestReferences checks that every answer_number becomes a reference, in the unit shown, the
// four of diff.json that are not Python floats included.
func TestReferences(t *testing.T) {
	b := load(t)
	items, _ := b.Items("full")
	for _, it := range items {
		if _, err := b.Reference(it.ID); err != nil {
			t.Error(err)
		}
	}
	quirks := map[string]float64{"89,034.79": 89034.79, "102,965.21": 102965.21, "−2": -2, "−1.642876": -1.642876}
	for i, r := range raw(t, "diff") {
		want, ok := quirks[r["answer_number"]]
		if !ok {
			continue
		}
		delete(quirks, r["answer_number"])
		id := items[105+42+38+56+i].ID // diff follows atkins, calculus, chemmc and class
		if got, err := b.Reference(id); err != nil || got != want {
			t.Errorf("Reference(%q) (answer_number %q) = %v, %v; want %v", id, r["answer_number"], got, err, want)
		}
	}
	if len(quirks) != 0 {
		t.Errorf("diff.json lacks the answers %v", quirks)
	}
	if _, err := b.Reference("atkins/nope"); err == nil {
		t.Error("Reference of an unknown item: no error")
	}
}

// TestScaledUnits pins what upstream's remove_not and cal_not make of the units with 10^{k}.
func TestScaledUnits(t *testing.T) {
	b := load(t)
	var scaled, kept int
	for _, p := range b.problems {
		if p.scaled {
			scaled++
		} else if scale.MatchString(p.item.Goal[strings.LastIndex(p.item.Goal, "The unit of the answer is"):]) {
			kept++
		}
	}
	if scaled != 76 || kept != 14 {
		t.Errorf("%d scaled units, %d kept whole; want 76 and 14", scaled, kept)
	}
	tests := []struct {
		id, unitShown string
		ref           float64
	}{
		{"chemmc/1-18", `\mathrm{~J}$`, 3.52e-19},                    // "$10^{-19} \mathrm{~J}$"
		{"calculus/8.4.15", `} \mathrm{~cm}^3/\mathrm{s}$`, 1.19e-4}, // " $\mathrm{10^{-4}} \mathrm{~cm}^3/\mathrm{s}$"
		{"thermo/1.1", " ", 1.27e6},                                  // "$10^6$ ": only a space is left
		{"fund/Question 21.75", "$10^{42}$", 4.16},                   // only a scale: kept whole
		{"thermo/15.47", " $10^{-9}$", 2.25},
	}
	for _, tt := range tests {
		p := b.byID[tt.id]
		if p == nil {
			t.Fatalf("no item %q", tt.id)
		}
		if want := " The unit of the answer is " + tt.unitShown + ".\nA: The answer is"; !strings.HasSuffix(p.item.Goal, want) {
			t.Errorf("%s: Goal ends %q, want %q", tt.id, p.item.Goal[len(p.item.Goal)-len(want):], want)
		}
		if math.Abs(p.reference-tt.ref) > 1e-12*math.Abs(tt.ref) {
			t.Errorf("%s: reference %v, want %v", tt.id, p.reference, tt.ref)
		}
	}
}

// TestGoal checks that a Goal is the official prompt and leaks neither answer nor solution: not
// its own solution (in fund.json often just the answer with its unit), nor any worked solution.
func TestGoal(t *testing.T) {
	b := load(t)
	var worked []string
	var recs []map[string]string
	for _, book := range Textbooks {
		main := raw(t, book)
		recs = append(recs, main...)
		for _, r := range append(main, raw(t, book+"_sol")...) {
			if s := strings.TrimSpace(r["solution"]); len(s) >= 40 {
				worked = append(worked, s)
			}
		}
	}
	if len(worked) < 100 {
		t.Fatalf("only %d worked solutions to look for", len(worked))
	}
	items, _ := b.Items("full")
	if len(items) != len(recs) {
		t.Fatalf("%d items, %d records", len(items), len(recs))
	}
	for i, it := range items {
		r := recs[i]
		if !strings.HasPrefix(it.Goal, systemPrompt+"\n\nQ: "+r["problem_text"]+" The unit of the answer is ") || !strings.HasSuffix(it.Goal, ".\nA: The answer is") {
			t.Errorf("%s: Goal %q is not the zero-shot prompt", it.ID, it.Goal)
		}
		if n := strings.Count(it.Goal, `\boxed{`); n != 1 {
			t.Errorf(`%s: Goal has %d \boxed{, want the one of [ANSWER]`, it.ID, n)
		}
		for _, ans := range []string{r["answer_number"], r["answer_latex"]} {
			if a := strings.TrimSpace(ans); strings.Contains(it.Goal, `\boxed{`+a+"}") {
				t.Errorf("%s: Goal holds the answer %q boxed", it.ID, a)
			}
		}
		if s := strings.TrimSpace(r["solution"]); s != "" && strings.Contains(it.Goal, s) {
			t.Errorf("%s: Goal holds its solution %q", it.ID, s)
		}
		for _, s := range worked {
			if strings.Contains(it.Goal, s) {
				t.Errorf("%s: Goal holds the solution %.80q", it.ID, s)
			}
		}
	}
}

func TestSubset(t *testing.T) {
	b := load(t)
	items, err := b.Items("")
	if err != nil {
		t.Fatal(err)
	}
	named, err := b.Items("107")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(items, named); diff != "" {
		t.Errorf(`Items("") and Items("107") differ:\n%s`, diff)
	}
	want := map[string]int{"atkins": 20, "calculus": 8, "chemmc": 7, "class": 10, "diff": 9, "fund": 13, "matter": 9, "quan": 6, "stat": 13, "thermo": 12}
	if diff := cmp.Diff(want, countByGroup(items)); diff != "" {
		t.Errorf("subset per textbook (-want +got):\n%s", diff)
	}
	first := map[string]string{}
	ids := make([]string, len(items))
	for i, it := range items {
		if first[it.Group] == "" {
			first[it.Group] = it.ID
		}
		ids[i] = it.ID
		if b.byID[it.ID] == nil || b.byID[it.ID].item != it {
			t.Errorf("subset item %q is not an item of the full set", it.ID)
		}
	}
	wantFirst := map[string]string{
		"atkins": "atkins/e2.7(a)", "calculus": "calculus/16.7.43", "chemmc": "chemmc/1-47", "class": "class/Problem 10.22",
		"diff": "diff/page 60-7", "fund": "fund/4.06", "matter": "matter/37.7(a)", "quan": "quan/11.22", "stat": "stat/7.3-5",
		"thermo": "thermo/1.1",
	}
	if diff := cmp.Diff(wantFirst, first); diff != "" {
		t.Errorf("first subset item per textbook (-want +got):\n%s", diff)
	}
	sum := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	if got, want := hex.EncodeToString(sum[:]), "a2d551398ab23ed461783ea7bfd21f86e8897c07a6867bf5fe40f637b30b5109"; got != want {
		t.Errorf("the subset's IDs hash to %s, want %s: the subset drifted", got, want)
	}
}

func TestUnknownSet(t *testing.T) {
	_, err := load(t).Items("108")
	if err == nil {
		t.Fatal(`Items("108"): no error`)
	}
	for _, s := range []string{`"108"`, `"107"`, `"full"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(dir); err == nil || !strings.Contains(err.Error(), "atkins.json") {
		t.Errorf("New of an empty folder: %v, want an error naming atkins.json", err)
	}
	bad := `[{"problem_text": "x", "answer_number": "about 3", "unit": "m", "problemid": " 1.1"}]`
	if err := os.WriteFile(filepath.Join(dir, "atkins.json"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(dir)
	if err == nil {
		t.Fatal("New with a bad answer_number: no error")
	}
	for _, s := range []string{"atkins.json", "problem 0", "1.1", "answer_number", "about 3"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
}
