// Package lab is labmate's view of experiments: an Instrument runs one set of conditions and
// measures it (a robot, a simulator, or a fully mapped dataset used as a lookup lab), and a
// campaign is the closed loop around it — ask a Planner, run, record every step (with the
// planner's reasoning) in a Store, and score the run with normalized advantage and NMA.
//
// Implementations live in sub-packages: dataset (a CSV as a lookup lab), sqlite (the embedded
// campaign Store), llmplanner (the Coscientist protocol through any llm.Model). The Bayesian and
// random planners live in optimize; cmd/labmate adapts them to Planner.
//
// # Metrics
//
// For a group (substrate) s whose whole space has mean mean_s and maximum max_s, the normalized
// advantage of a yield y is (y − mean_s)/(max_s − mean_s): 1 at the optimum, 0 for a random pick
// on average. NMA at step i is the normalized advantage of the best yield seen in steps 1..i.
package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/seconds"
)

var (
	// ErrUnknownLevel: the conditions name a variable or a level the instrument does not know.
	ErrUnknownLevel = errors.New("lab: unknown level")
	// ErrUnavailable: the conditions are valid but cannot be run (a missing well of a dataset).
	ErrUnavailable = errors.New("lab: condition not available")
	// ErrInvalid: the planner's proposal could not be understood (malformed, incomplete).
	ErrInvalid = errors.New("lab: invalid proposal")
)

// Variable is one experimental factor and its levels.
type Variable struct {
	Name   string   `json:"name"`
	Levels []string `json:"levels"`
}

// Space is a categorical condition space. Feasible, when set, lists the combinations that can
// be run, each as level indices in Vars order; nil means the full product of the levels.
type Space struct {
	Vars     []Variable `json:"vars"`
	Feasible [][]int    `json:"-"`
}

// Size is the number of runnable combinations; math.MaxInt when the product of the levels
// overflows.
func (s *Space) Size() int {
	if s.Feasible != nil {
		return len(s.Feasible)
	}
	n := 1
	for _, v := range s.Vars {
		if len(v.Levels) != 0 && n > math.MaxInt/len(v.Levels) {
			return math.MaxInt
		}
		n *= len(v.Levels)
	}
	return n
}

// Conditions assigns a level to each variable.
type Conditions map[string]string

// String is the conditions as "name=level, …" in name order.
func (c Conditions) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", k, c[k])
	}
	return b.String()
}

// Key is a canonical form of the conditions, equal for equal conditions.
func (c Conditions) Key() string { return c.String() }

// Index maps conditions to level indices in s.Vars order; an unknown variable or level, or a
// missing variable, is ErrUnknownLevel.
func (s *Space) Index(c Conditions) ([]int, error) {
	if len(c) != len(s.Vars) {
		for name := range c {
			if s.variable(name) < 0 {
				return nil, fmt.Errorf("%w: no variable %q (variables: %s)", ErrUnknownLevel, name, s.names())
			}
		}
	}
	idx := make([]int, len(s.Vars))
	for i, v := range s.Vars {
		lv, ok := c[v.Name]
		if !ok {
			return nil, fmt.Errorf("%w: no level for %s", ErrUnknownLevel, v.Name)
		}
		idx[i] = -1
		for j, l := range v.Levels {
			if l == lv {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%w: %s=%q (levels: %s)", ErrUnknownLevel, v.Name, lv, strings.Join(v.Levels, ", "))
		}
	}
	return idx, nil
}

// Conditions maps level indices in s.Vars order back to conditions.
func (s *Space) Conditions(idx []int) Conditions {
	c := make(Conditions, len(s.Vars))
	for i, v := range s.Vars {
		c[v.Name] = v.Levels[idx[i]]
	}
	return c
}

func (s *Space) variable(name string) int {
	for i, v := range s.Vars {
		if v.Name == name {
			return i
		}
	}
	return -1
}

func (s *Space) names() string {
	n := make([]string, len(s.Vars))
	for i, v := range s.Vars {
		n[i] = v.Name
	}
	return strings.Join(n, ", ")
}

// Measurement is what one run measured: named values such as "yield".
type Measurement map[string]float64

// Instrument runs experiments. Run may be slow and may fail; a failure that is the conditions'
// fault wraps ErrUnknownLevel or ErrUnavailable, anything else is the instrument's.
// Implementations are safe for concurrent use.
type Instrument interface {
	// Space is the condition space the instrument accepts.
	Space() *Space
	Run(ctx context.Context, c Conditions) (Measurement, error)
}

// Step is one turn of a campaign: what the planner proposed and why, and what was measured.
// A turn without a measurement (an invalid proposal, an unavailable condition, a failed run)
// has OK false and Error saying why; it still counts against the budget.
type Step struct {
	Campaign   string        `json:"campaign"`
	Group      string        `json:"group,omitempty"`
	N          int           `json:"n"` // 1-based turn number
	Conditions Conditions    `json:"conditions,omitempty"`
	Value      float64       `json:"value"` // the objective, when OK
	OK         bool          `json:"ok"`
	Error      string        `json:"error,omitempty"`
	Reasoning  string        `json:"reasoning,omitempty"`
	Raw        string        `json:"raw,omitempty"` // the planner's raw answer, when it was not understood
	Propose    time.Duration `json:"-"`             // propose_s: time the planner took
	Time       time.Time     `json:"time"`
}

// Proposal is a planner's next move. Invalid, when set, says the planner's answer could not be
// understood (Raw holds it); the loop records the turn without running anything.
type Proposal struct {
	Conditions Conditions
	Reasoning  string
	Invalid    string
	Raw        string
}

// Planner chooses the next conditions from the campaign so far (steps in turn order). It is
// called once per turn with every earlier step; it must not keep ctx.
type Planner interface {
	Next(ctx context.Context, steps []Step) (*Proposal, error)
}

// Campaign describes one campaign: a planner playing one group of one space for Budget turns.
type Campaign struct {
	ID        string    `json:"id"`
	Space     string    `json:"space"` // names the condition space, e.g. the dataset file's base name
	Objective string    `json:"objective"`
	Group     string    `json:"group,omitempty"` // e.g. the substrate
	Planner   string    `json:"planner"`
	Seed      int64     `json:"seed"`
	Budget    int       `json:"budget"`
	Prior     string    `json:"prior,omitempty"` // "memory" when the planner used earlier campaigns
	Bench     bool      `json:"bench,omitempty"` // its experiments ran as protocols on the bench twin (lab/bench), not looked up
	Started   time.Time `json:"started"`
}

// Store keeps campaigns and their steps so later campaigns can learn from them.
type Store interface {
	Begin(ctx context.Context, c *Campaign) error
	Record(ctx context.Context, s *Step) error
	// Steps yields the recorded steps of campaigns on q.Space and q.Objective, in campaign then
	// turn order, skipping the campaigns of q.ExcludeGroup.
	Steps(ctx context.Context, q *Query) iter.Seq2[*Step, error]
}

// Query selects recorded steps.
type Query struct {
	Space        string
	Objective    string
	ExcludeGroup string
}

// Observation is one measured point of an earlier campaign, for use as prior knowledge.
type Observation struct {
	Group      string
	Conditions Conditions
	Value      float64
}

// Prior reads what earlier campaigns on space and objective measured in groups other than
// group: only their recorded, measured steps — never anything else about group. This is the
// leave-one-group-out prior of a memory-informed campaign.
func Prior(ctx context.Context, st Store, space, objective, group string) ([]Observation, error) {
	var obs []Observation
	for s, err := range st.Steps(ctx, &Query{Space: space, Objective: objective, ExcludeGroup: group}) {
		if err != nil {
			return nil, fmt.Errorf("reading prior campaigns: %w", err)
		}
		if s.Group == group {
			return nil, fmt.Errorf("lab: store returned a step of the excluded group %q", group)
		}
		if s.OK {
			obs = append(obs, Observation{Group: s.Group, Conditions: s.Conditions, Value: s.Value})
		}
	}
	return obs, nil
}

// Options configure Run.
type Options struct {
	// Store records the campaign and every step; nil records nothing.
	Store Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Run plays a campaign of c.Budget turns: each turn asks p for conditions, runs them on inst
// and records the step. It yields every step as it completes. A planner error or a store error
// ends the campaign with that error; an instrument failure is a step without a measurement.
// Run stops early, without error, when the planner has nothing left to propose (ErrExhausted).
func Run(ctx context.Context, inst Instrument, p Planner, c *Campaign, o *Options) iter.Seq2[*Step, error] {
	return func(yield func(*Step, error) bool) {
		if o == nil {
			o = &Options{}
		}
		now := o.Now
		if now == nil {
			now = time.Now
		}
		if c.Budget <= 0 {
			yield(nil, fmt.Errorf("lab: campaign %s: budget %d must be positive", c.ID, c.Budget))
			return
		}
		if c.Started.IsZero() {
			c.Started = now()
		}
		if o.Store != nil {
			if err := o.Store.Begin(ctx, c); err != nil {
				yield(nil, fmt.Errorf("recording campaign %s: %w", c.ID, err))
				return
			}
		}
		space := inst.Space()
		var steps []Step
		for n := 1; n <= c.Budget; n++ {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			t0 := time.Now()
			prop, err := p.Next(ctx, steps)
			if errors.Is(err, ErrExhausted) {
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("campaign %s, turn %d: planner: %w", c.ID, n, err))
				return
			}
			st := Step{Campaign: c.ID, Group: c.Group, N: n, Conditions: prop.Conditions,
				Reasoning: prop.Reasoning, Raw: prop.Raw, Propose: time.Since(t0)}
			switch {
			case prop.Invalid != "":
				st.Error = fmt.Errorf("%w: %s", ErrInvalid, prop.Invalid).Error()
			default:
				if _, err := space.Index(prop.Conditions); err != nil {
					st.Error = err.Error()
					break
				}
				m, err := inst.Run(ctx, prop.Conditions)
				if err != nil {
					if ctx.Err() != nil {
						yield(nil, ctx.Err())
						return
					}
					st.Error = err.Error()
					break
				}
				v, ok := m[c.Objective]
				if !ok || math.IsNaN(v) {
					st.Error = fmt.Sprintf("the instrument measured no %s", c.Objective)
					break
				}
				st.Value, st.OK = v, true
			}
			st.Time = now()
			if o.Store != nil {
				if err := o.Store.Record(ctx, &st); err != nil {
					yield(nil, fmt.Errorf("recording campaign %s, turn %d: %w", c.ID, n, err))
					return
				}
			}
			steps = append(steps, st)
			if !yield(&st, nil) {
				return
			}
		}
	}
}

// ErrExhausted is returned by a planner that has tried every condition of the space.
var ErrExhausted = errors.New("lab: every condition has been tried")

// Scale holds a group's mean and maximum of the objective over its whole space.
type Scale struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Advantage is the normalized advantage (y − mean)/(max − mean); 0 when max equals mean.
func (s Scale) Advantage(y float64) float64 {
	if s.Max == s.Mean {
		return 0
	}
	return (y - s.Mean) / (s.Max - s.Mean)
}

// Curves are per-turn scores of one campaign: Advantage[i] and NMA[i] belong to turn i+1. A
// turn without a measurement has Advantage NaN; NMA is NaN until the first measurement.
type Curves struct {
	Advantage []float64 `json:"advantage"`
	NMA       []float64 `json:"nma"`
}

// Score computes the normalized advantage and NMA of every turn of steps. A campaign that
// ended early is extended to budget turns with its last NMA (and NaN advantage), so that every
// campaign of a comparison has the same length.
func Score(steps []Step, s Scale, budget int) Curves {
	n := max(budget, len(steps))
	c := Curves{Advantage: make([]float64, n), NMA: make([]float64, n)}
	best := math.Inf(-1)
	for i := range n {
		c.Advantage[i] = math.NaN()
		if i < len(steps) && steps[i].OK {
			c.Advantage[i] = s.Advantage(steps[i].Value)
			best = max(best, steps[i].Value)
		}
		c.NMA[i] = math.NaN()
		if !math.IsInf(best, -1) {
			c.NMA[i] = s.Advantage(best)
		}
	}
	return c
}

// Summary is the mean and the standard deviation of one score at one turn over many campaigns,
// skipping NaN.
type Summary struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// Summarize averages each turn of many curves (NaN skipped).
func Summarize(curves [][]float64) []Summary {
	n := 0
	for _, c := range curves {
		n = max(n, len(c))
	}
	out := make([]Summary, n)
	for i := range n {
		var sum, sq float64
		k := 0
		for _, c := range curves {
			if i < len(c) && !math.IsNaN(c[i]) {
				sum += c[i]
				sq += c[i] * c[i]
				k++
			}
		}
		if k == 0 {
			out[i] = Summary{Mean: math.NaN(), SD: math.NaN()}
			continue
		}
		m := sum / float64(k)
		v := 0.0
		if k > 1 {
			v = max(0, (sq-float64(k)*m*m)/float64(k-1))
		}
		out[i] = Summary{Mean: m, SD: math.Sqrt(v), N: k}
	}
	return out
}

// MarshalJSON writes a turn without any measurement (NaN) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	num := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	return json.Marshal(struct {
		Mean any `json:"mean"`
		SD   any `json:"sd"`
		N    int `json:"n"`
	}{num(s.Mean), num(s.SD), s.N})
}

// MarshalJSON writes the step with the planner's time in seconds (propose_s).
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	return seconds.Marshal(plain(s), seconds.F("propose", &s.Propose))
}

// UnmarshalJSON reads propose_s (or an older record's propose_ns).
func (s *Step) UnmarshalJSON(b []byte) error {
	type plain Step
	return seconds.Unmarshal(b, (*plain)(s), seconds.F("propose", &s.Propose))
}
