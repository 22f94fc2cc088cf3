package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm"
)

// Plan is the plan module's hierarchical plan: steps, each with the tool that carries it out and
// a validation checkpoint the reflect module checks its result against.
type Plan struct {
	Goal  string `json:"goal" jsonschema:"the task restated as a verifiable goal"`
	Steps []Step `json:"steps" jsonschema:"the steps in order, at most 8"`
}

// Step is one step of a Plan.
type Step struct {
	Title string `json:"title" jsonschema:"a short name for the step"`
	// Action says what to do; Substeps break it down.
	Action   string   `json:"action" jsonschema:"what to do in this step"`
	Substeps []string `json:"substeps,omitempty" jsonschema:"the finer actions of the step, in order"`
	Tool     string   `json:"tool" jsonschema:"the tool that carries the step out"`
	// Checkpoint is how to tell that the step worked: a value, a bound, a property of the output.
	Checkpoint string `json:"checkpoint" jsonschema:"how to verify the step's result (a value, a bound, a property of the output)"`
}

const maxSteps = 8

// schemaFor derives a schema for T and patches it; it panics on a programming error.
func schemaFor[T any](name string, patch func(*jsonschema.Schema)) (*llm.OutputSchema, *jsonschema.Resolved) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("agent: %s schema: %v", name, err))
	}
	if patch != nil {
		patch(s)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("agent: %s schema: %v", name, err))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agent: %s schema: %v", name, err))
	}
	return &llm.OutputSchema{Name: name, Schema: raw}, r
}

// reflectOut is what the reflect module answers.
type reflectOut struct {
	Decision Decision `json:"decision" jsonschema:"accept, adjust or replan"`
	Reasons  string   `json:"reasons" jsonschema:"why, citing the output"`
	Summary  string   `json:"summary,omitempty" jsonschema:"what the step established, in one or two sentences (for accept)"`
	Fix      string   `json:"fix,omitempty" jsonschema:"what to change (for adjust)"`
	// References are outside values the step compared against; memory keeps them as values to
	// consult, never as results.
	References []string `json:"references,omitempty" jsonschema:"values from outside this run that the result was compared against (an experimental or literature value, a value the task gave), each one statement with its source"`
}

// judgeOut is what the perceive module answers about an ambiguous window.
type judgeOut struct {
	State  string `json:"state" jsonschema:"Normal, Warning or Error"`
	Reason string `json:"reason" jsonschema:"why, citing the output"`
}

var (
	planSchema, planResolved       = schemaFor[Plan]("plan", nil)
	reflectSchema, reflectResolved = schemaFor[reflectOut]("reflection", func(s *jsonschema.Schema) {
		s.Properties["decision"].Enum = []any{string(Accept), string(Adjust), string(Replan)}
	})
	judgeSchema, judgeResolved = schemaFor[judgeOut]("judgement", func(s *jsonschema.Schema) {
		s.Properties["state"].Enum = []any{"Normal", "Warning", "Error"}
	})
)

// decodeOutput reads a structured answer: JSON (a ```json fence around it is tolerated),
// valid against r, into v. Its error says precisely what was wrong, for the model to read.
func decodeOutput(text string, r *jsonschema.Resolved, v any) error {
	s := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if i := strings.LastIndex(rest, "```"); i >= 0 {
			rest = rest[:i]
		}
		s = strings.TrimSpace(rest)
	}
	if s == "" {
		return fmt.Errorf("the answer is empty: answer with one JSON object")
	}
	var instance any
	if err := json.Unmarshal([]byte(s), &instance); err != nil {
		return fmt.Errorf("the answer is not valid JSON (%v); it began %q: answer with one JSON object and nothing else", jsonErr(err, s), textcut.Head(s, 60))
	}
	if err := r.Validate(instance); err != nil {
		return fmt.Errorf("the JSON does not match the schema: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the JSON does not match the schema: %v", err)
	}
	return nil
}

// jsonErr adds the offset to a syntax error.
func jsonErr(err error, s string) string {
	var se *json.SyntaxError
	if e, ok := err.(*json.SyntaxError); ok {
		se = e
		line := 1 + strings.Count(s[:min(int(se.Offset), len(s))], "\n")
		return fmt.Sprintf("%v at offset %d, line %d", se, se.Offset, line)
	}
	return err.Error()
}

// validate checks a plan against what exists: at least one step, at most maxSteps, each with
// an action, a known tool and a checkpoint.
func (p *Plan) validate(tools []string) error {
	var errs []string
	if len(p.Steps) == 0 {
		errs = append(errs, "the plan has no steps")
	}
	if len(p.Steps) > maxSteps {
		errs = append(errs, fmt.Sprintf("the plan has %d steps; at most %d", len(p.Steps), maxSteps))
	}
	for i, s := range p.Steps {
		where := fmt.Sprintf("steps[%d] (%q)", i, s.Title)
		if strings.TrimSpace(s.Action) == "" {
			errs = append(errs, where+": action is empty")
		}
		if strings.TrimSpace(s.Checkpoint) == "" {
			errs = append(errs, where+": checkpoint is empty: say how to verify the step")
		}
		if !slices.Contains(tools, s.Tool) {
			errs = append(errs, fmt.Sprintf("%s: tool %q does not exist; the tools are: %s", where, s.Tool, strings.Join(tools, ", ")))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// outline is the plan as the code and reflect modules see it, with the done steps' summaries.
func (st *State) outline() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n", st.Plan.Goal)
	for i, s := range st.Plan.Steps {
		mark := "  "
		switch {
		case i < st.Step:
			mark = "✓ "
		case i == st.Step:
			mark = "→ "
		}
		fmt.Fprintf(&b, "%s%d. %s [%s]\n", mark, i+1, s.Title, s.Tool)
	}
	if len(st.Done) > 0 {
		b.WriteString("Established so far:\n")
		for _, d := range st.Done {
			fmt.Fprintf(&b, "- %s\n", d)
		}
	}
	return b.String()
}
