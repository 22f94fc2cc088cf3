package eval

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Summary sums up the trials of one benchmark, set, model and mode: per group and overall, and
// the tokens per module. It is computed from the trials alone, so a resumed eval's summary is
// that of an uninterrupted one.
type Summary struct {
	Benchmark string `json:"benchmark"`
	Set       string `json:"set,omitempty"`
	Model     string `json:"model"`
	Mode      string `json:"mode"`
	// K is the most trials of one item.
	K int `json:"k"`
	// Expected is how many trials the eval was asked for (0 when unknown: a report's rows).
	Expected int `json:"expected,omitempty"`
	// Stopped says why the eval stopped short of Expected, and how it continues.
	Stopped string `json:"stopped,omitempty"`
	All     Stats  `json:"all"`
	// Groups are the items' groups, by name.
	Groups []Stats `json:"groups,omitempty"`
	// Modules are the tokens per module, in the shape of EmbodiedAct's Tables 11 and 12.
	Modules []ModuleTokens `json:"modules"`
}

// Stats are a group's (or all items') trials summed up. Counts of the runs are means per trial.
type Stats struct {
	Group  string  `json:"group"`
	Items  int     `json:"items"`
	Trials int     `json:"trials"`
	Errors int     `json:"errors"` // trials whose run or grader failed
	Score  float64 `json:"mean_score"`
	// PassRate is the fraction of trials that passed.
	PassRate float64 `json:"pass_rate"`
	// PassAt[k-1] is pass@k, k = 1…K: the unbiased estimator 1 − C(n−c, k)/C(n, k) of an item
	// with c of its n trials passed, averaged over the items with at least k trials.
	PassAt []float64 `json:"pass_at"`
	// PassMin and PassMax are the lowest and highest pass rate of one round of trials (every
	// item's trial i, for each i): the stability of EmbodiedAct's Figures 3 and 4.
	PassMin    float64 `json:"pass_min"`
	PassMax    float64 `json:"pass_max"`
	Tokens     float64 `json:"tokens"`
	Operations float64 `json:"operations"`
	HotFixes   float64 `json:"hot_fixes"`
	Repairs    float64 `json:"repairs"`
	Replans    float64 `json:"replans"`
}

// ModuleTokens are one module's calls and tokens, means per trial, and its share of all tokens.
type ModuleTokens struct {
	Module string  `json:"module"`
	Calls  float64 `json:"calls"`
	Input  float64 `json:"input_tokens"`
	Output float64 `json:"output_tokens"`
	Share  float64 `json:"share"` // 0–1
}

// moduleOrder is the order of the modules in tables: the agent's four, then the baselines'.
var moduleOrder = []string{"plan", "code", "perceive", "reflect", "direct", "codeact"}

// Summarize sums up trials of one benchmark, set, model and mode (those of the first trial).
func Summarize(trials []*Trial) *Summary {
	ts := slices.Clone(trials)
	// One order whatever order the trials ended in: the sums are the same to the last bit.
	slices.SortFunc(ts, func(a, b *Trial) int { return cmp.Or(strings.Compare(a.Task, b.Task), cmp.Compare(a.Trial, b.Trial)) })
	s := &Summary{}
	if len(ts) > 0 {
		s.Benchmark, s.Set, s.Model, s.Mode = ts[0].Benchmark, ts[0].Set, ts[0].Model, ts[0].Mode
	}
	byGroup := map[string][]*Trial{}
	var groups []string
	for _, t := range ts {
		if _, ok := byGroup[t.Group]; !ok {
			groups = append(groups, t.Group)
		}
		byGroup[t.Group] = append(byGroup[t.Group], t)
	}
	slices.Sort(groups)
	s.All = stats("all", ts)
	s.K = len(s.All.PassAt)
	if len(groups) > 1 || len(groups) == 1 && groups[0] != "" {
		for _, g := range groups {
			s.Groups = append(s.Groups, stats(g, byGroup[g]))
		}
	}
	s.Modules = modules(ts)
	return s
}

func stats(group string, ts []*Trial) Stats {
	st := Stats{Group: group, Trials: len(ts)}
	if len(ts) == 0 {
		return st
	}
	type tally struct{ n, c int }
	items := map[string]*tally{}
	var order []string
	rounds := map[int]*tally{}
	var passed int
	for _, t := range ts {
		it := items[t.Task]
		if it == nil {
			it = &tally{}
			items[t.Task] = it
			order = append(order, t.Task)
		}
		r := rounds[t.Trial]
		if r == nil {
			r = &tally{}
			rounds[t.Trial] = r
		}
		it.n++
		r.n++
		if t.Passed {
			it.c++
			r.c++
			passed++
		}
		if t.Error != "" {
			st.Errors++
		}
		st.Score += t.Score
		st.Tokens += float64(t.Tokens)
		st.Operations += float64(t.Operations)
		st.HotFixes += float64(t.HotFixes)
		st.Repairs += float64(t.Repairs)
		st.Replans += float64(t.Replans)
	}
	n := float64(len(ts))
	st.Items = len(items)
	st.Score /= n
	st.PassRate = float64(passed) / n
	st.Tokens /= n
	st.Operations /= n
	st.HotFixes /= n
	st.Repairs /= n
	st.Replans /= n
	k := 0
	for _, it := range items {
		k = max(k, it.n)
	}
	for j := 1; j <= k; j++ {
		var sum float64
		var m int
		for _, id := range order {
			if it := items[id]; it.n >= j {
				sum += passAtK(it.n, it.c, j)
				m++
			}
		}
		st.PassAt = append(st.PassAt, sum/float64(m))
	}
	st.PassMin, st.PassMax = 1, 0
	for _, r := range rounds {
		rate := float64(r.c) / float64(r.n)
		st.PassMin, st.PassMax = min(st.PassMin, rate), max(st.PassMax, rate)
	}
	return st
}

// passAtK is the unbiased estimator of pass@k from n trials of which c passed (Chen et al.,
// 2021): 1 − C(n−c, k)/C(n, k), as a product to stay exact for large n.
func passAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

func modules(ts []*Trial) []ModuleTokens {
	by := map[string]*ModuleTokens{}
	var total float64
	for _, t := range ts {
		for _, m := range t.Modules {
			mt := by[m.Module]
			if mt == nil {
				mt = &ModuleTokens{Module: m.Module}
				by[m.Module] = mt
			}
			mt.Calls += float64(m.Calls)
			mt.Input += float64(m.InputTokens)
			mt.Output += float64(m.OutputTokens)
			total += float64(m.Total())
		}
	}
	names := slices.SortedFunc(maps.Keys(by), byModule)
	out := make([]ModuleTokens, 0, len(names))
	n := float64(len(ts))
	for _, name := range names {
		m := *by[name]
		if total > 0 {
			m.Share = (m.Input + m.Output) / total
		}
		m.Calls, m.Input, m.Output = m.Calls/n, m.Input/n, m.Output/n
		out = append(out, m)
	}
	return out
}

// byModule orders modules as moduleOrder, then others by name.
func byModule(a, b string) int {
	ia, ib := slices.Index(moduleOrder, a), slices.Index(moduleOrder, b)
	if ia < 0 {
		ia = len(moduleOrder)
	}
	if ib < 0 {
		ib = len(moduleOrder)
	}
	return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
}
