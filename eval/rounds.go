package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/memory"
)

// The memory rounds of the memory-centric lifelong agent, over any Benchmark (RunRounds): each
// model runs the benchmark three times in agent mode, R1 cold and R2, R3 with what the earlier
// rounds taught its memory, then with another model's frozen memory (the transfer matrix).

// RoundNames are the rounds every model runs, in order.
var RoundNames = []string{"R1", "R2", "R3"}

// ErrRoundStopped says that a round stopped short of its trials at its token budget (Options.
// BudgetTokens, per round): a partial result, which a rerun with a larger budget continues.
var ErrRoundStopped = errors.New("eval: rounds: a round stopped short")

// RoundsModel is one model of the rounds.
type RoundsModel struct {
	// Name names the model in the results, its folder and its memory namespace (default
	// Model.Name()).
	Name  string
	Model llm.Model
}

// RoundsOptions configure RunRounds.
type RoundsOptions struct {
	Models []RoundsModel
	// Transfer names the models (of Models) whose memory, frozen after their R3, each other
	// model is evaluated with, read-only, in OUT/<model>/from-<other>.
	Transfer []string
	// Memory is the one store of every model's namespace.
	Memory memory.Store
	// Out is the result folder: OUT/<model>/R1 … R3 and from-<other>, each an eval's result
	// folder, and rounds.md and rounds.csv.
	Out string
	// Base are the options of every round's Run: Model, ModelName, Mode, Memory and Out are set
	// per round (agent mode, with memory).
	Base Options
	// Prepare, when set, completes a round's options before it runs (a run store, kernels in
	// its folder); the returned func is called once the round is done.
	Prepare func(ctx context.Context, o *Options) (done func(), err error)
}

// RoundResult is one round of one model.
type RoundResult struct {
	Model string `json:"model"`
	Round string `json:"round"` // R1, R2, R3 or from-<model>
	// From is the model whose frozen memory a transfer round read.
	From string `json:"from,omitempty"`
	// Dir is its result folder: OUT/<model>/<round>, named as namespaces are.
	Dir      string  `json:"dir"`
	Trials   int     `json:"trials"`
	Score    float64 `json:"mean_score"`
	PassRate float64 `json:"pass_rate"`
	Tokens   float64 `json:"tokens"`        // per trial
	Prompt   float64 `json:"prompt_tokens"` // input tokens per trial
	// Added are the prompt tokens per trial the memory adds, and Gain the percentage points of
	// pass rate it gains, against the model's R1 (a transfer round: against its own R3).
	Added float64 `json:"added_tokens"`
	Gain  float64 `json:"gain_pp"`
	// PPPer1k is Gain per 1,000 added tokens (Fig. 2c), when tokens were added.
	PPPer1k *float64 `json:"pp_per_1k_tokens,omitempty"`
	Stopped string   `json:"stopped,omitempty"`
}

// Matrix is the transfer matrix: PassRate[i][j] is the pass rate of model Models[j] with the
// memory of Models[i] (the diagonal: its own R3), Gain[i][j] its percentage points against
// Models[j]'s own R3; nil where not run.
type Matrix struct {
	Models   []string     `json:"models"`
	PassRate [][]*float64 `json:"pass_rate"`
	Gain     [][]*float64 `json:"gain_pp"`
}

// Rounds are the results of RunRounds.
type Rounds struct {
	Benchmark string         `json:"benchmark"`
	Set       string         `json:"set,omitempty"`
	Rounds    []*RoundResult `json:"rounds"`
	Matrix    *Matrix        `json:"matrix,omitempty"`
}

// nsUnsafe are the characters of a model's name that make no namespace segment.
var nsUnsafe = regexp.MustCompile(`[^a-z0-9._-]+`)

// RoundsNamespace is the memory namespace of model name: its name in lowercase, with runs of
// other characters than letters, digits, '.', '_' and '-' as one '-'.
func RoundsNamespace(name string) string {
	return strings.Trim(nsUnsafe.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// transferNamespace is where model to writes while it reads from's frozen memory: beside its
// own namespace, not under it, so that its own rounds never recall it.
func transferNamespace(to, from string) string {
	return RoundsNamespace(to) + "-from-" + RoundsNamespace(from)
}

// RunRounds runs R1, R2 and R3 of b for each model, one after the other, each an eval Run in
// OUT/<model>/<round> with the model's memory namespace (RoundsNamespace) of o.Memory, so that
// a round learns from the rounds before it and a rerun resumes where it stopped. Then it freezes
// the namespace of each model of Transfer and runs every other model with that memory alone,
// read-only, writing in a namespace of its own. It returns the rounds run and writes them to
// OUT as rounds.md and rounds.csv. A round that stops short (its budget, an interrupt, the
// provider) stops the rounds after it: they depend on its memory; the error says why.
func RunRounds(ctx context.Context, b Benchmark, o *RoundsOptions) (*Rounds, error) {
	names, err := o.check()
	if err != nil {
		return nil, err
	}
	r := &Rounds{Benchmark: b.Name(), Set: o.Base.Set}
	own := map[string]map[string]*RoundResult{}
	for i, m := range o.Models {
		own[names[i]] = map[string]*RoundResult{}
		ns := RoundsNamespace(names[i])
		for _, rn := range RoundNames {
			mem := learn.New(o.Memory, &learn.Options{Namespace: ns, Model: names[i]})
			res, err := o.round(ctx, b, m.Model, names[i], rn, rn, mem)
			if res != nil {
				res.against(own[names[i]]["R1"])
				own[names[i]][rn] = res
				r.Rounds = append(r.Rounds, res)
			}
			if err != nil {
				return r.finish(o, names, err)
			}
		}
	}
	for _, from := range o.Transfer {
		if err := o.Memory.Freeze(ctx, &memory.FreezeParams{Namespace: RoundsNamespace(from), Frozen: true, Actor: "eval rounds"}); err != nil {
			return r.finish(o, names, fmt.Errorf("eval: rounds: freezing the memory of %s: %w", from, err))
		}
		for i, m := range o.Models {
			if names[i] == from {
				continue
			}
			mem := learn.New(o.Memory, &learn.Options{Namespace: transferNamespace(names[i], from), Model: names[i],
				Read: []string{RoundsNamespace(from), transferNamespace(names[i], from)}})
			res, err := o.round(ctx, b, m.Model, names[i], "from-"+from, "from-"+RoundsNamespace(from), mem)
			if res != nil {
				res.From = from
				res.against(own[names[i]]["R3"])
				r.Rounds = append(r.Rounds, res)
			}
			if err != nil {
				return r.finish(o, names, err)
			}
		}
	}
	return r.finish(o, names, nil)
}

// check validates o and returns the models' names.
func (o *RoundsOptions) check() ([]string, error) {
	switch {
	case o == nil || len(o.Models) == 0:
		return nil, errors.New("eval: rounds: no model")
	case o.Memory == nil:
		return nil, errors.New("eval: rounds: no memory store (RoundsOptions.Memory)")
	case o.Out == "":
		return nil, errors.New("eval: rounds: no result folder (RoundsOptions.Out)")
	case o.Base.NoMemory || o.Base.Mode != "" && o.Base.Mode != "agent":
		return nil, fmt.Errorf("eval: rounds: the rounds measure memory: they run in agent mode with memory, not %s", o.Base.Variant())
	}
	var names []string
	for i, m := range o.Models {
		if m.Model == nil {
			return nil, fmt.Errorf("eval: rounds: model %d is nil", i)
		}
		name := m.Name
		if name == "" {
			name = m.Model.Name()
		}
		ns := RoundsNamespace(name)
		if err := memory.ValidNamespace(ns); err != nil {
			return nil, fmt.Errorf("eval: rounds: model %q: %w", name, err)
		}
		if slices.ContainsFunc(names, func(n string) bool { return RoundsNamespace(n) == ns }) {
			return nil, fmt.Errorf("eval: rounds: model %q: given twice (namespace %s)", name, ns)
		}
		names = append(names, name)
	}
	for _, from := range o.Transfer {
		if !slices.Contains(names, from) {
			return nil, fmt.Errorf("eval: rounds: transfer from %q: not one of the models (%s)", from, strings.Join(names, ", "))
		}
	}
	return names, nil
}

// round runs one round of model name in OUT/<name>/<dir> with mem. Folders are named as
// namespaces are (RoundsNamespace): no ':' or '/' of a model's name.
func (o *RoundsOptions) round(ctx context.Context, b Benchmark, model llm.Model, name, round, dir string, mem Memory) (*RoundResult, error) {
	ro := o.Base
	ro.Model, ro.ModelName, ro.Mode, ro.Memory = model, name, "agent", mem
	ro.Out = filepath.Join(o.Out, RoundsNamespace(name), dir)
	if o.Prepare != nil {
		done, err := o.Prepare(ctx, &ro)
		if err != nil {
			return nil, fmt.Errorf("eval: rounds: %s %s: %w", name, round, err)
		}
		defer done()
	}
	s, err := Run(ctx, b, &ro)
	if s == nil {
		return nil, fmt.Errorf("eval: rounds: %s %s: %w", name, round, err)
	}
	res := &RoundResult{Model: name, Round: round, Dir: ro.Out, Trials: s.All.Trials, Score: s.All.Score,
		PassRate: s.All.PassRate, Tokens: s.All.Tokens, Stopped: s.Stopped}
	for _, m := range s.Modules {
		res.Prompt += m.Input
	}
	if err == nil && s.Stopped != "" {
		err = fmt.Errorf("%w: %s %s stopped %s", ErrRoundStopped, name, round, s.Stopped)
	}
	return res, err
}

// against sets what r adds and gains against base (nil: r is the base).
func (r *RoundResult) against(base *RoundResult) {
	if base == nil || base == r {
		return
	}
	r.Added, r.Gain = r.Prompt-base.Prompt, 100*(r.PassRate-base.PassRate)
	if r.Added > 0 {
		v := r.Gain / (r.Added / 1000)
		r.PPPer1k = &v
	}
}

// finish builds the matrix when there are transfer rounds and writes the files; err is the
// rounds' own error, returned with what was run.
func (r *Rounds) finish(o *RoundsOptions, names []string, err error) (*Rounds, error) {
	if len(o.Transfer) > 0 {
		m := &Matrix{Models: names}
		for _, from := range names {
			rates, gains := make([]*float64, len(names)), make([]*float64, len(names))
			for j, to := range names {
				var cell *RoundResult
				for _, res := range r.Rounds {
					if res.Model == to && (from == to && res.Round == "R3" || from != to && res.From == from) {
						cell = res
					}
				}
				if cell != nil {
					rate, gain := cell.PassRate, 0.0
					if from != to {
						gain = cell.Gain
					}
					rates[j], gains[j] = &rate, &gain
				}
			}
			m.PassRate, m.Gain = append(m.PassRate, rates), append(m.Gain, gains)
		}
		r.Matrix = m
	}
	if werr := writeAll(o.Out, map[string]func(io.Writer) error{"rounds.md": r.WriteMarkdown, "rounds.csv": r.WriteCSV}); werr != nil {
		return r, errors.Join(err, werr)
	}
	return r, err
}

// table is the rounds, a row each; raw gives numbers as CSV wants them.
func (r *Rounds) table(raw bool) *table {
	t := &table{head: []string{"model", "round", "trials", "score", "pass", "tokens/trial", "prompt/trial", "added", "gain pp", "pp/1k tokens"}}
	if raw {
		t.head = []string{"model", "round", "from", "trials", "mean_score", "pass_rate", "tokens", "prompt_tokens", "added_tokens", "gain_pp", "pp_per_1k_tokens"}
	}
	for _, res := range r.Rounds {
		per := ""
		if res.PPPer1k != nil {
			per = fmt.Sprintf("%.1f", *res.PPPer1k)
			if raw {
				per = num(*res.PPPer1k)
			}
		}
		if raw {
			t.add(res.Model, res.Round, res.From, fmt.Sprint(res.Trials), num(res.Score), num(res.PassRate), num(res.Tokens), num(res.Prompt), num(res.Added), num(res.Gain), per)
			continue
		}
		round := res.Round
		if res.Stopped != "" {
			round += " (stopped)"
		}
		t.add(res.Model, round, fmt.Sprint(res.Trials), fmt.Sprintf("%.1f", res.Score), pct(res.PassRate), fmt.Sprintf("%.0f", res.Tokens),
			fmt.Sprintf("%.0f", res.Prompt), fmt.Sprintf("%+.0f", res.Added), fmt.Sprintf("%+.1f", res.Gain), per)
	}
	return t
}

// matrix is the transfer matrix as a table: a row per memory, a column per evaluated model,
// pass rate (gain in pp against the column's own R3).
func (m *Matrix) table() *table {
	t := &table{head: []string{"memory from \\ evaluated"}}
	t.head = append(t.head, m.Models...)
	for i, from := range m.Models {
		row := []string{from}
		for j := range m.Models {
			cell := "–"
			if p := m.PassRate[i][j]; p != nil {
				cell = pct(*p)
				if i == j {
					cell += " (own R3)"
				} else {
					cell += fmt.Sprintf(" (%+.1f pp)", *m.Gain[i][j])
				}
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	return t
}

func (r *Rounds) title() string {
	s := fmt.Sprintf("%s memory rounds", r.Benchmark)
	if r.Set != "" {
		s += fmt.Sprintf(" (set %s)", r.Set)
	}
	return s + ": added tokens and gain against R1 (a transfer: against the model's own R3)"
}

// WriteText writes the rounds and the transfer matrix as aligned text.
func (r *Rounds) WriteText(w io.Writer) error {
	fmt.Fprintln(w, r.title())
	if err := r.table(false).text(w); err != nil {
		return err
	}
	if r.Matrix == nil {
		return nil
	}
	fmt.Fprintln(w, "\ntransfer matrix: pass rate of each column's model with each row's memory")
	return r.Matrix.table().text(w)
}

// WriteMarkdown writes the rounds and the transfer matrix as Markdown.
func (r *Rounds) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# %s\n\n", r.title())
	if err := r.table(false).markdown(w); err != nil {
		return err
	}
	if r.Matrix == nil {
		return nil
	}
	fmt.Fprint(w, "\n## Transfer matrix\n\nPass rate of each column's model with each row's memory (frozen, read-only); the diagonal is the model's own R3.\n\n")
	return r.Matrix.table().markdown(w)
}

// WriteCSV writes the rounds, a row each.
func (r *Rounds) WriteCSV(w io.Writer) error { return r.table(true).csv(w) }
