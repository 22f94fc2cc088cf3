// Package llmplanner is the Coscientist protocol for a campaign, played by any llm.Model: each
// turn the model is told the result of its last move and answers with JSON — an observation (its
// reasoning) and a choice (one level per variable). An answer that is not such JSON, or names
// an unknown level, is answered with a correction on the next turn, and still costs the turn.
//
// With prior observations (earlier campaigns on related substrates) the first message lists up
// to Options.PriorRows of them.
package llmplanner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/llm"
)

// Options tune the planner; nil means the defaults.
type Options struct {
	// Objective names the measured value in the prompt (default "yield").
	Objective string
	// Unit follows each reported value (default "%").
	Unit string
	// Prior holds measurements of other groups; PriorRows of them (default 10, the best first)
	// are shown in the first message.
	Prior     []lab.Observation
	PriorRows int
	// Task is a sentence describing the experiment, e.g. "a Suzuki coupling of X with Y".
	Task string
}

// Planner plays a campaign through a model. It is not safe for concurrent use: one per campaign.
type Planner struct {
	model llm.Model
	space *lab.Space
	o     Options
	msgs  []llm.Message
	told  int
}

// New returns a planner that asks m to choose conditions in space.
func New(m llm.Model, space *lab.Space, o *Options) *Planner {
	p := &Planner{model: m, space: space}
	if o != nil {
		p.o = *o
	}
	if p.o.Objective == "" {
		p.o.Objective = "yield"
	}
	if p.o.Unit == "" && p.o.Objective == "yield" {
		p.o.Unit = "%"
	}
	if p.o.PriorRows == 0 {
		p.o.PriorRows = 10
	}
	return p
}

// answer is what the model must write.
type answer struct {
	Observation string            `json:"observation"`
	Choice      map[string]string `json:"choice"`
}

func (p *Planner) schema() *llm.OutputSchema {
	props := map[string]any{}
	var names []string
	for _, v := range p.space.Vars {
		props[v.Name] = map[string]any{"type": "string", "enum": v.Levels}
		names = append(names, v.Name)
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"observation": map[string]any{"type": "string", "description": "what the results so far suggest, and why this choice"},
			"choice":      map[string]any{"type": "object", "properties": props, "required": names, "additionalProperties": false},
		},
		"required":             []string{"observation", "choice"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(s)
	return &llm.OutputSchema{Name: "experiment", Schema: b}
}

func (p *Planner) system() string {
	var b strings.Builder
	task := p.o.Task
	if task == "" {
		task = "a chemical reaction"
	}
	fmt.Fprintf(&b, "You are optimizing the %s of %s. Each turn you choose one combination of conditions, "+
		"it is run, and you are told the %s. Find the highest %s in as few turns as possible; never repeat a combination.\n\n",
		p.o.Objective, task, p.o.Objective, p.o.Objective)
	b.WriteString("The variables and their allowed levels:\n")
	for _, v := range p.space.Vars {
		fmt.Fprintf(&b, "- %s: %s\n", v.Name, strings.Join(v.Levels, "; "))
	}
	names := make([]string, len(p.space.Vars))
	for i, v := range p.space.Vars {
		names[i] = fmt.Sprintf("%q: \"…\"", v.Name)
	}
	fmt.Fprintf(&b, "\nAnswer with JSON only: {\"observation\": \"your reasoning\", \"choice\": {%s}}, using the levels exactly as written.", strings.Join(names, ", "))
	return b.String()
}

func (p *Planner) first() string {
	var b strings.Builder
	if len(p.o.Prior) > 0 {
		rows := slices.Clone(p.o.Prior)
		slices.SortStableFunc(rows, func(a, c lab.Observation) int { return -cmpFloat(a.Value, c.Value) })
		rows = rows[:min(len(rows), p.o.PriorRows)]
		fmt.Fprintf(&b, "Earlier experiments on related substrates (not this one) measured:\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "- %s (%s): %s = %s\n", r.Conditions, r.Group, p.o.Objective, p.value(r.Value))
		}
		b.WriteString("\n")
	}
	b.WriteString("Choose the first experiment.")
	return b.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *Planner) value(v float64) string {
	if p.o.Unit == "%" {
		return fmt.Sprintf("%d%%", int(math.Round(v)))
	}
	return fmt.Sprintf("%.4g%s", v, p.o.Unit)
}

// feedback is the user message that answers step s.
func (p *Planner) feedback(s lab.Step) string {
	switch {
	case s.OK:
		return fmt.Sprintf("Result: %s = %s. Choose the next experiment.", p.o.Objective, p.value(s.Value))
	case s.Raw != "" || s.Conditions == nil:
		return fmt.Sprintf("Your answer could not be used (%s). This turn is lost. Answer with JSON only, with an observation and a choice of one allowed level for every variable.", s.Error)
	default:
		return fmt.Sprintf("That experiment could not be run: %s. This turn is lost. Choose the next experiment.", s.Error)
	}
}

// Next asks the model for the next conditions.
func (p *Planner) Next(ctx context.Context, steps []lab.Step) (*lab.Proposal, error) {
	if len(p.msgs) == 0 {
		p.msgs = append(p.msgs, llm.Message{Role: llm.RoleUser, Content: p.first()})
	}
	for _, s := range steps[p.told:] {
		p.msgs = append(p.msgs, llm.Message{Role: llm.RoleUser, Content: p.feedback(s)})
	}
	p.told = len(steps)
	// Consecutive user messages (the first turn's prompt and feedback) are merged.
	msgs := mergeUsers(p.msgs)
	resp, err := llm.Generate(ctx, p.model, &llm.Request{Module: "campaign", System: p.system(), Messages: msgs, Output: p.schema()})
	if err != nil {
		return nil, fmt.Errorf("llmplanner: %w", err)
	}
	text := resp.Message.Content
	p.msgs = append(p.msgs, llm.Message{Role: llm.RoleAssistant, Content: text})
	a, why := p.parse(text)
	if why != "" {
		return &lab.Proposal{Invalid: why, Raw: text}, nil
	}
	return &lab.Proposal{Conditions: lab.Conditions(a.Choice), Reasoning: a.Observation}, nil
}

// parse reads the model's answer; why says what is wrong with it.
func (p *Planner) parse(text string) (*answer, string) {
	s := strings.TrimSpace(text)
	s = strings.TrimPrefix(s, "```json")
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimSuffix(s, "```")
	var a answer
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &a); err != nil {
		return nil, fmt.Sprintf("not valid JSON: %v", err)
	}
	if a.Choice == nil {
		return nil, `no "choice" object`
	}
	if _, err := p.space.Index(lab.Conditions(a.Choice)); err != nil {
		return nil, err.Error()
	}
	return &a, ""
}

func mergeUsers(in []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range in {
		if n := len(out); n > 0 && m.Role == llm.RoleUser && out[n-1].Role == llm.RoleUser {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	return out
}
