package lab_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/sqlite"
)

func TestScore(t *testing.T) {
	s := lab.Scale{Mean: 40, Max: 90}
	steps := []lab.Step{
		{N: 1, OK: true, Value: 30},
		{N: 2, Error: "invalid"},
		{N: 3, OK: true, Value: 65},
		{N: 4, OK: true, Value: 50},
	}
	got := lab.Score(steps, s, 5)
	nan := math.NaN()
	want := lab.Curves{
		Advantage: []float64{-0.2, nan, 0.5, 0.2, nan},
		NMA:       []float64{-0.2, -0.2, 0.5, 0.5, 0.5},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Error(d)
	}
	if got := lab.Score([]lab.Step{{Error: "x"}}, s, 1); !math.IsNaN(got.NMA[0]) {
		t.Errorf("NMA before any measurement = %v, want NaN", got.NMA[0])
	}
	if a := (lab.Scale{Mean: 5, Max: 5}).Advantage(5); a != 0 {
		t.Errorf("flat group advantage %v", a)
	}
}

func TestSummarize(t *testing.T) {
	got := lab.Summarize([][]float64{{1, 2}, {3, math.NaN()}})
	want := []lab.Summary{{Mean: 2, SD: math.Sqrt2, N: 2}, {Mean: 2, SD: 0, N: 1}}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Error(d)
	}
}

// script proposes fixed moves: a string "lig,base", or "!reason" for an invalid answer.
type script struct {
	moves []string
	seen  [][]lab.Step
}

func (s *script) Next(_ context.Context, steps []lab.Step) (*lab.Proposal, error) {
	s.seen = append(s.seen, append([]lab.Step(nil), steps...))
	if len(steps) == len(s.moves) {
		return nil, lab.ErrExhausted
	}
	m := s.moves[len(steps)]
	if r, ok := strings.CutPrefix(m, "!"); ok {
		return &lab.Proposal{Invalid: r, Raw: m}, nil
	}
	lig, base, _ := strings.Cut(m, ",")
	return &lab.Proposal{Conditions: lab.Conditions{"lig": lig, "base": base}, Reasoning: "because " + m}, nil
}

const small = `sub,lig,base,yield
A,L1,B1,10
A,L1,B2,20
A,L2,B1,30
A,L2,B2,40
B,L1,B1,5
B,L1,B2,50
B,L2,B1,0
`

func open(t *testing.T) (*dataset.Table, *sqlite.Store) {
	t.Helper()
	tb, err := dataset.Read(strings.NewReader(small), "small.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return tb, st
}

func TestRunRecordsEveryTurn(t *testing.T) {
	tb, st := open(t)
	ctx := context.Background()
	b, _ := tb.Group("B")
	p := &script{moves: []string{"L1,B1", "!not JSON", "L2,B2", "L9,B1", "L1,B2", "L2,B1"}}
	c := &lab.Campaign{ID: "c1", Space: "small", Objective: "yield", Group: "B", Planner: "script", Budget: 5}
	var steps []lab.Step
	for s, err := range lab.Run(ctx, b, p, c, &lab.Options{Store: st}) {
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, *s)
	}
	if len(steps) != 5 {
		t.Fatalf("%d steps, want the budget of 5", len(steps))
	}
	type row struct {
		N     int
		OK    bool
		Value float64
		Err   string
	}
	var got []row
	for _, s := range steps {
		got = append(got, row{s.N, s.OK, s.Value, s.Error})
	}
	want := []row{
		{1, true, 5, ""},
		{2, false, 0, "lab: invalid proposal: not JSON"},
		{3, false, 0, "lab: condition not available: B has no measurement for base=B2, lig=L2"},
		{4, false, 0, `lab: unknown level: lig="L9" (levels: L1, L2)`},
		{5, true, 50, ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if steps[0].Reasoning != "because L1,B1" || steps[1].Raw != "!not JSON" {
		t.Errorf("reasoning/raw not kept: %+v", steps[:2])
	}
	// The planner saw every earlier turn, failed ones included.
	if len(p.seen[4]) != 4 || p.seen[4][1].Error == "" {
		t.Errorf("planner's view at turn 5: %+v", p.seen[4])
	}
	// Everything was recorded, and reads back.
	var back []lab.Step
	for s, err := range st.Steps(ctx, &lab.Query{Space: "small", Objective: "yield"}) {
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, *s)
	}
	if d := cmp.Diff(steps, back, cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("recorded steps (-run +store):\n%s", d)
	}
	curves := lab.Score(steps, b.Scale, 5)
	if curves.NMA[4] != 1 {
		t.Errorf("NMA@5 = %v, want 1 (found the max 50)", curves.NMA[4])
	}
}

func TestRunStopsWhenExhausted(t *testing.T) {
	tb, _ := open(t)
	a, _ := tb.Group("A")
	n := 0
	for _, err := range lab.Run(context.Background(), a, &script{moves: []string{"L1,B1"}}, &lab.Campaign{ID: "x", Objective: "yield", Budget: 20}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d steps after the planner ran out, want 1", n)
	}
}

func TestRunPlannerError(t *testing.T) {
	tb, _ := open(t)
	a, _ := tb.Group("A")
	boom := errors.New("boom")
	for _, err := range lab.Run(context.Background(), a, failing{boom}, &lab.Campaign{ID: "x", Objective: "yield", Budget: 3}, nil) {
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "turn 1") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	t.Fatal("no error")
}

type failing struct{ err error }

func (f failing) Next(context.Context, []lab.Step) (*lab.Proposal, error) { return nil, f.err }

// TestPriorLeavesTheTargetOut: a memory prior holds the other groups' recorded measurements
// and nothing of the target group.
func TestPriorLeavesTheTargetOut(t *testing.T) {
	tb, st := open(t)
	ctx := context.Background()
	for _, g := range tb.Groups {
		c := &lab.Campaign{ID: "c-" + g.Key, Space: "small", Objective: "yield", Group: g.Key, Planner: "script", Budget: 3}
		for _, err := range lab.Run(ctx, g, &script{moves: []string{"L1,B1", "!bad", "L1,B2"}}, c, &lab.Options{Store: st}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	obs, err := lab.Prior(ctx, st, "small", "yield", "A")
	if err != nil {
		t.Fatal(err)
	}
	want := []lab.Observation{
		{Group: "B", Conditions: lab.Conditions{"lig": "L1", "base": "B1"}, Value: 5},
		{Group: "B", Conditions: lab.Conditions{"lig": "L1", "base": "B2"}, Value: 50},
	}
	if d := cmp.Diff(want, obs); d != "" {
		t.Errorf("prior for A (-want +got):\n%s", d)
	}
	if obs, _ := lab.Prior(ctx, st, "other-space", "yield", "A"); len(obs) != 0 {
		t.Errorf("prior from another space: %v", obs)
	}
}

func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal([]lab.Summary{{Mean: 0.5, SD: 0.1, N: 3}, {Mean: math.NaN(), SD: math.NaN()}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `[{"mean":0.5,"sd":0.1,"n":3},{"mean":null,"sd":null,"n":0}]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Size does not wrap around: a space too large to count is math.MaxInt, which every bound refuses.
func TestSizeSaturates(t *testing.T) {
	levels := make([]string, 1<<16)
	s := &lab.Space{}
	for range 4 {
		s.Vars = append(s.Vars, lab.Variable{Name: "v", Levels: levels})
	}
	if got := s.Size(); got != math.MaxInt {
		t.Errorf("(2¹⁶)⁴ points: Size %d, want math.MaxInt", got)
	}
	s.Vars = s.Vars[:3]
	if got := s.Size(); got != 1<<48 {
		t.Errorf("(2¹⁶)³ points: Size %d", got)
	}
}
