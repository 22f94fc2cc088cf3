package game

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/labmate/labmate/internal/seconds"
	"github.com/labmate/labmate/lab"
)

// SummaryTurns are the turns a Summary reports.
var SummaryTurns = []int{1, 5, 10, 20}

// Summary is the mean and spread of NMA and normalized advantage at a few turns for one
// planner's campaigns (or a reference curve: Campaigns 0).
type Summary struct {
	Planner   string              `json:"planner"`
	Dataset   string              `json:"dataset,omitempty"`
	Campaigns int                 `json:"campaigns"`
	NMA       map[int]lab.Summary `json:"nma"`
	Advantage map[int]lab.Summary `json:"advantage"`
	Repeats   float64             `json:"repeat_fraction"`
	Invalid   float64             `json:"invalid_fraction"`
	P50       time.Duration       `json:"-"` // propose_p50_s
	P99       time.Duration       `json:"-"` // propose_p99_s
	SetupP99  time.Duration       `json:"-"` // setup_p99_s
	NMACurve  []lab.Summary       `json:"nma_curve"`
	AdvCurve  []lab.Summary       `json:"advantage_curve"`
}

// Summarize sums up one planner's campaigns of budget turns.
func Summarize(planner string, rs []*Result, budget int) *Summary {
	var nma, adv [][]float64
	var prop []time.Duration
	rep, inv, turns := 0, 0, 0
	for _, r := range rs {
		nma = append(nma, r.Curves.NMA)
		adv = append(adv, r.Curves.Advantage)
		prop = append(prop, r.Propose...)
		rep += r.Repeats
		inv += r.Invalid
		turns += len(r.Steps)
	}
	s := &Summary{Planner: planner, Campaigns: len(rs), NMA: map[int]lab.Summary{}, Advantage: map[int]lab.Summary{},
		NMACurve: lab.Summarize(nma), AdvCurve: lab.Summarize(adv)}
	for _, t := range SummaryTurns {
		if t <= budget && t <= len(s.NMACurve) {
			s.NMA[t], s.Advantage[t] = s.NMACurve[t-1], s.AdvCurve[t-1]
		}
	}
	if turns > 0 {
		s.Repeats, s.Invalid = float64(rep)/float64(turns), float64(inv)/float64(turns)
	}
	s.P50, s.P99 = quantile(prop, 0.5), quantile(prop, 0.99)
	var setup []time.Duration
	for _, r := range rs {
		setup = append(setup, r.Setup)
	}
	s.SetupP99 = quantile(setup, 0.99)
	return s
}

// quantile is the q-quantile (nearest rank) of d; 0 for none.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[max(0, min(len(d)-1, int(math.Ceil(q*float64(len(d))))-1))]
}

// WriteSummaries prints the summaries as a table, the columns up to turn budget.
func WriteSummaries(w io.Writer, ss []*Summary, budget int) {
	fmt.Fprintf(w, "%-28s %5s", "planner", "runs")
	for _, t := range SummaryTurns {
		if t <= budget {
			fmt.Fprintf(w, "  %-13s", fmt.Sprintf("NMA@%d", t))
		}
	}
	for _, t := range SummaryTurns {
		if t <= budget {
			fmt.Fprintf(w, "  %-13s", fmt.Sprintf("adv@%d", t))
		}
	}
	fmt.Fprintf(w, "  %7s  %9s  %9s  %9s\n", "repeats", "p50", "p99", "setup p99")
	for _, s := range ss {
		name := s.Planner
		if s.Dataset != "" {
			name = s.Dataset + " " + name
		}
		fmt.Fprintf(w, "%-28s %5d", name, s.Campaigns)
		for _, t := range SummaryTurns {
			if t <= budget {
				fmt.Fprintf(w, "  %-13s", fmtSummary(s.NMA[t]))
			}
		}
		for _, t := range SummaryTurns {
			if t <= budget {
				fmt.Fprintf(w, "  %-13s", fmtSummary(s.Advantage[t]))
			}
		}
		if s.Campaigns == 0 { // a reference curve
			fmt.Fprintf(w, "  %7s  %9s  %9s  %9s\n", "-", "-", "-", "-")
			continue
		}
		fmt.Fprintf(w, "  %6.1f%%  %9s  %9s  %9s\n", 100*s.Repeats, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.SetupP99))
	}
}

func fmtSummary(s lab.Summary) string {
	if s.N == 0 || math.IsNaN(s.Mean) {
		return "-"
	}
	if s.N == 1 && s.SD == 0 { // a reference value
		return fmt.Sprintf("%.3f", s.Mean)
	}
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.SD)
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	default:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
}

// MarshalJSON writes the proposal times in seconds (propose_p50_s, propose_p99_s,
// setup_p99_s), as every time of labmate's JSON is written.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return seconds.Marshal(plain(s), s.times()...)
}

// UnmarshalJSON reads the proposal times in seconds (or an older record's _ns).
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	return seconds.Unmarshal(b, (*plain)(s), s.times()...)
}

// times are the summary's durations as its JSON names them.
func (s *Summary) times() []seconds.Field {
	return []seconds.Field{seconds.F("propose_p50", &s.P50), seconds.F("propose_p99", &s.P99), seconds.F("setup_p99", &s.SetupP99)}
}
