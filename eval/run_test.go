package eval_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

func direct(m llm.Model, out string) *eval.Options {
	return &eval.Options{Model: m, Mode: agent.ModeDirect, Out: out}
}

// Must hold: an eval interrupted after 4 of its 10 trials and rerun runs the 6 others only
// (counted on the model's server), and its summary files are those of an uninterrupted run.
func TestResume(t *testing.T) {
	q := newQuiz(5)
	o := newOracle(t, 4, mixed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	opts := direct(o.model(), dir)
	opts.K = 2
	var seen int
	opts.OnTrial = func(*eval.Trial) {
		if seen++; seen == 4 {
			cancel()
		}
	}
	s, err := eval.Run(ctx, q, opts)
	if !errors.Is(err, context.Canceled) || s == nil || s.All.Trials != 4 || !strings.Contains(s.Stopped, "interrupted with 6 trials left") {
		t.Fatalf("interrupted run: %v, summary %+v", err, s)
	}
	if n := o.calls(); n != 4 {
		t.Fatalf("the interrupted run made %d model calls, want 4", n)
	}
	o.add(6, mixed)
	var log bytes.Buffer
	opts.OnTrial, opts.Log = nil, &log
	if s, err = eval.Run(context.Background(), q, opts); err != nil || s.Stopped != "" || s.All.Trials != 10 {
		t.Fatalf("rerun: %v, summary %+v", err, s)
	}
	if n := o.calls(); n != 10 {
		t.Errorf("the rerun made %d model calls, want the 6 trials left", n-4)
	}
	if !strings.Contains(log.String(), "4 of 10 trials are done; 6 to run") {
		t.Errorf("log: %q", log.String())
	}
	trials, torn, err := eval.ReadTrials(dir)
	if err != nil || torn != 0 || len(trials) != 10 {
		t.Fatalf("trials.jsonl: %d trials, torn %d, %v", len(trials), torn, err)
	}
	keys := map[string]bool{}
	for _, tr := range trials {
		k := fmt.Sprint(tr.Task, "/", tr.Trial)
		if keys[k] || tr.Mode != "direct" || tr.Model != "fake:quizzer" || tr.RunID == "" || tr.Tokens == 0 || tr.Stop != "answered" {
			t.Errorf("trial %+v (repeated: %v)", tr, keys[k])
		}
		keys[k] = true
		if tr.Task == "q5" && tr.Trial == 0 && (tr.Error != "grading: the grader's interpreter crashed" || tr.Passed) {
			t.Errorf("q5's first trial, whose answer breaks the grader: %+v", tr)
		}
	}

	whole := t.TempDir()
	u := newOracle(t, 10, mixed)
	uopts := direct(u.model(), whole)
	uopts.K = 2
	us, err := eval.Run(context.Background(), q, uopts)
	if err != nil {
		t.Fatal(err)
	}
	sameSummaries(t, dir, whole)
	if us.All.Errors != 1 || us.All.PassRate != 0.5 {
		t.Errorf("all: %+v, want 1 error and 5 of 10 passed", us.All)
	}
	for _, f := range []string{"score.png", "tokens.png"} {
		if b := readFile(t, filepath.Join(dir, f)); !strings.HasPrefix(b, "\x89PNG") {
			t.Errorf("%s is not a PNG", f)
		}
	}
}

// Pass@k, the stability over trials and the means, by hand, on three items of three trials
// each: q1 passes at trials 0 and 2, q2 never (both in group g1), q3 always (g2).
func TestPassAtK(t *testing.T) {
	q := &quiz{items: []eval.Item{
		{ID: "q1", Group: "g1", Goal: "What is 1 * 7?"}, {ID: "q2", Group: "g1", Goal: "What is 2 * 7?"}, {ID: "q3", Group: "g2", Goal: "What is 3 * 7?"},
	}}
	o := newOracle(t, 9, func(goal string, i int) llmtest.Turn {
		switch r := right(goal); {
		case r == "7" && i == 1, r == "14":
			return llmtest.Text("wrong")
		default:
			return llmtest.Text(r)
		}
	})
	opts := direct(o.model(), t.TempDir())
	opts.K = 3
	s, err := eval.Run(context.Background(), q, opts)
	if err != nil {
		t.Fatal(err)
	}
	// q1: c=2 of n=3; q2: c=0; q3: c=3. pass@1 = (2/3 + 0 + 1)/3; pass@2 = (1 − C(1,2)/C(3,2) = 1,
	// 0, 1)/3; pass@3 = 2/3. Rounds: trial 0 passes q1 and q3, trial 1 q3 only, trial 2 q1 and q3.
	want := map[string]struct {
		passAt             []float64
		min, max, score, r float64
	}{
		"all": {[]float64{5.0 / 9, 2.0 / 3, 2.0 / 3}, 1.0 / 3, 2.0 / 3, 500.0 / 9, 5.0 / 9},
		"g1":  {[]float64{1.0 / 3, 0.5, 0.5}, 0, 0.5, 200.0 / 6, 2.0 / 6},
		"g2":  {[]float64{1, 1, 1}, 1, 1, 100, 1},
	}
	for _, st := range append(s.Groups, s.All) {
		w := want[st.Group]
		if len(st.PassAt) != 3 {
			t.Fatalf("%s: pass@k %v, want k = 1, 2, 3", st.Group, st.PassAt)
		}
		for k, v := range w.passAt {
			if math.Abs(st.PassAt[k]-v) > 1e-12 {
				t.Errorf("%s: pass@%d = %v, want %v", st.Group, k+1, st.PassAt[k], v)
			}
		}
		if math.Abs(st.PassMin-w.min) > 1e-12 || math.Abs(st.PassMax-w.max) > 1e-12 || math.Abs(st.Score-w.score) > 1e-9 || math.Abs(st.PassRate-w.r) > 1e-12 {
			t.Errorf("%s: stability %v–%v, score %v, pass rate %v; want %v–%v, %v, %v", st.Group, st.PassMin, st.PassMax, st.Score, st.PassRate, w.min, w.max, w.score, w.r)
		}
	}
	if len(s.Groups) != 2 || s.K != 3 || len(s.Modules) != 1 || s.Modules[0].Module != "direct" || s.Modules[0].Calls != 1 || s.Modules[0].Share != 1 {
		t.Errorf("groups %+v, k %d, modules %+v", s.Groups, s.K, s.Modules)
	}
	md := readFile(t, filepath.Join(opts.Out, "summary.md"))
	for _, w := range []string{"| group | items | trials | errors | score | pass | pass@3 | stability |", "| all | 3 | 9 | 0 | 55.6 | 55.6% | 66.7% | 33.3%–66.7% |", "| direct | 1.00 |"} {
		if !strings.Contains(md, w) {
			t.Errorf("summary.md lacks %q:\n%s", w, md)
		}
	}
	if csv := readFile(t, filepath.Join(opts.Out, "summary.csv")); !strings.Contains(csv, "all,3,9,0,55.5556,0.5556,0.5556,0.6667,0.6667,0.3333,0.6667,") {
		t.Errorf("summary.csv:\n%s", csv)
	}
}

// A trial cut off mid-write (a torn last line) is ignored, said so, and run again; the
// journal is whole afterwards.
func TestTornLastLine(t *testing.T) {
	q := newQuiz(3)
	o := newOracle(t, 2, mixed)
	dir := t.TempDir()
	opts := direct(o.model(), dir)
	opts.Limit = 2
	if _, err := eval.Run(context.Background(), q, opts); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, eval.TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"benchmark":"quiz","set":"","task":"q3","mode":"dir`)
	f.Close()
	if _, torn, err := eval.ReadTrials(dir); err != nil || torn == 0 {
		t.Fatalf("ReadTrials: torn %d, %v", torn, err)
	}
	o.add(1, mixed)
	var log bytes.Buffer
	opts.Limit, opts.Log = 3, &log
	s, err := eval.Run(context.Background(), q, opts)
	if err != nil || s.All.Trials != 3 {
		t.Fatalf("rerun: %v, %+v", err, s)
	}
	if !strings.Contains(log.String(), "ignored a torn last line of 52 bytes") || o.calls() != 3 {
		t.Errorf("%d model calls in all, want 3; log %q", o.calls(), log.String())
	}
	if trials, torn, err := eval.ReadTrials(dir); err != nil || torn != 0 || len(trials) != 3 {
		t.Errorf("the journal afterwards: %d trials, torn %d, %v", len(trials), torn, err)
	}
}

// A folder of another benchmark's or set's trials, or with a damaged line, is refused before
// any model call; so is a second eval on a folder in use.
func TestRefusedFolders(t *testing.T) {
	o := newOracle(t, 0, mixed)
	for _, tc := range []struct{ journal, want string }{
		{`{"benchmark":"scibench","set":"","task":"atkins/1.1","mode":"direct","model":"m","trial":0}` + "\n", `holds trials of scibench (set ""), and this eval is quiz (set "")`},
		{`{"benchmark":"quiz","set":"hard","task":"q1","mode":"direct","model":"m","trial":0}` + "\n", `holds trials of quiz (set "hard")`},
		{"not json\n" + `{"benchmark":"quiz"}` + "\n", "trials.jsonl:1: invalid character"},
		{`{"benchmark":"quiz","set":"","task":"q1"}` + "\n", "trials.jsonl:1: a trial needs task, mode, model"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, eval.TrialsFile), []byte(tc.journal), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := eval.Run(context.Background(), newQuiz(2), direct(o.model(), dir))
		if err == nil || s != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.journal, err, tc.want)
		}
		if strings.Contains(tc.want, "holds trials") && !errors.Is(err, eval.ErrForeign) {
			t.Errorf("%v does not wrap ErrForeign", err)
		}
	}
	if o.calls() != 0 {
		t.Errorf("%d model calls", o.calls())
	}
	// The ablations belong to the agent mode; ids must exist.
	bad := direct(o.model(), t.TempDir())
	bad.NoReflect = true
	if _, err := eval.Run(context.Background(), newQuiz(2), bad); err == nil || !strings.Contains(err.Error(), "not of direct") {
		t.Errorf("direct mode without reflection: %v", err)
	}
	bad = direct(o.model(), t.TempDir())
	bad.IDs = []string{"q1", "q9"}
	if _, err := eval.Run(context.Background(), newQuiz(2), bad); err == nil || !strings.Contains(err.Error(), `no item "q9"`) {
		t.Errorf("an unknown id: %v", err)
	}
}

// Once the eval's tokens are spent no trial starts; the summary says so, a rerun with the same
// budget runs nothing and one with a larger budget finishes.
func TestBudget(t *testing.T) {
	spend := func(goal string, i int) llmtest.Turn {
		return llmtest.Turn{Text: right(goal), Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}
	}
	o := newOracle(t, 2, spend)
	opts := direct(o.model(), t.TempDir())
	opts.BudgetTokens = 200
	s, err := eval.Run(context.Background(), newQuiz(4), opts)
	if err != nil || s.All.Trials != 2 || !strings.Contains(s.Stopped, "at the token budget: 240 of 200 tokens spent, 2 trials left") {
		t.Fatalf("%v, %d trials, stopped %q", err, s.All.Trials, s.Stopped)
	}
	if md := readFile(t, filepath.Join(opts.Out, "summary.md")); !strings.Contains(md, "STOPPED SHORT: at the token budget") || !strings.Contains(md, "2 of 4 trials") {
		t.Errorf("summary.md:\n%s", md)
	}
	if s, err = eval.Run(context.Background(), newQuiz(4), opts); err != nil || s.All.Trials != 2 || o.calls() != 2 {
		t.Fatalf("rerun at the same budget: %v, %d trials, %d calls", err, s.All.Trials, o.calls())
	}
	o.add(2, spend)
	opts.BudgetTokens = 1000
	if s, err = eval.Run(context.Background(), newQuiz(4), opts); err != nil || s.All.Trials != 4 || s.Stopped != "" || s.All.Tokens != 120 {
		t.Fatalf("rerun with a larger budget: %v, %+v", err, s)
	}
}

// Parallel trials give the summary that one at a time does.
func TestParallel(t *testing.T) {
	answer := func(goal string, _ int) llmtest.Turn { // right for q1, q3, q5, whatever the order
		if r := right(goal); strings.ContainsAny(r[len(r)-1:], "135") {
			return llmtest.Text(r)
		}
		return llmtest.Text("no idea")
	}
	var dirs []string
	for _, p := range []int{1, 3} {
		o := newOracle(t, 12, answer)
		opts := direct(o.model(), t.TempDir())
		opts.K, opts.Parallel = 2, p
		if _, err := eval.Run(context.Background(), newQuiz(6), opts); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, opts.Out)
	}
	sameSummaries(t, dirs[0], dirs[1])
}

// The provider failing stops the eval: the trial it cut short is not recorded, and runs again.
func TestProviderFails(t *testing.T) {
	o := newOracle(t, 1, mixed)
	o.srv.Add(llmtest.Fail(401, "invalid API key"))
	opts := direct(o.model(), t.TempDir())
	s, err := eval.Run(context.Background(), newQuiz(3), opts)
	if err == nil || !strings.Contains(err.Error(), "q2, trial 0: the model's provider failed") || s.All.Trials != 1 || !strings.Contains(s.Stopped, "2 trials left after") {
		t.Fatalf("%v; summary %+v", err, s)
	}
	o.add(2, mixed)
	if s, err = eval.Run(context.Background(), newQuiz(3), opts); err != nil || s.All.Trials != 3 {
		t.Fatalf("rerun: %v, %+v", err, s)
	}
}
