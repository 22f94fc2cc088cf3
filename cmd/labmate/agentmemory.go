package main

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/tool"
)

// agentMemory is the agent's view of a memory.Store: before planning it recalls the facts and
// skills that match the task; after each accepted step it stores what the step established as a
// fact, and the cell that did it as a skill, both linked to the run and its operations.
type agentMemory struct {
	store     memory.Store
	namespace string // facts go here, skills under NAMESPACE/skills
	model     string
}

var _ agent.Memory = (*agentMemory)(nil)

// recallLimit is how many entries the planner sees: enough for the warnings and procedures
// that matter, few enough to keep the plan prompt lean.
const recallLimit = 6

func (m *agentMemory) Recall(ctx context.Context, task string) (string, error) {
	var b strings.Builder
	for r, err := range m.store.Search(ctx, &memory.Query{Text: task, Namespaces: []string{m.namespace}, Limit: recallLimit}) {
		if err != nil {
			return "", fmt.Errorf("recalling from memory: %w", err)
		}
		switch {
		case r.Fact != nil:
			fmt.Fprintf(&b, "- %s (fact, %s", r.Fact.Text, r.Fact.Kind)
			if r.Fact.Successes+r.Fact.Failures > 0 {
				fmt.Fprintf(&b, ", %d successes, %d failures", r.Fact.Successes, r.Fact.Failures)
			}
			b.WriteString(")\n")
		case r.Skill != nil:
			fmt.Fprintf(&b, "- skill %s: %s\n", r.Skill.Name, r.Skill.Description)
			for _, l := range strings.Split(clip(r.Skill.Body, 1200), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	return b.String(), nil
}

func (m *agentMemory) Learn(ctx context.Context, l *agent.Lesson) error {
	prov := memory.Provenance{Operations: l.Operations, Session: l.RunID, Model: m.model, Time: time.Now()}
	actor := "agent:" + m.model
	reason := fmt.Sprintf("step %q of run %s accepted against its checkpoint (%s)", l.Step, l.RunID, clip(l.Checkpoint, 200))
	_, err := m.store.AddFact(ctx, &memory.AddFactParams{Actor: actor, Reason: reason, Fact: &memory.Fact{
		Namespace:  m.namespace,
		Text:       clip(fmt.Sprintf("%s — %s: %s", clip(l.Task, 200), l.Step, l.Summary), 1000),
		Kind:       memory.KindObservation,
		Evidence:   []string{"checkpoint: " + clip(l.Checkpoint, 300)},
		Provenance: prov,
	}})
	if err != nil {
		return fmt.Errorf("storing the step's fact: %w", err)
	}
	if l.Code == "" {
		return nil
	}
	lang := map[string]string{"octave": "matlab"}[l.Kernel]
	if lang == "" {
		lang = l.Kernel
	}
	body := fmt.Sprintf("# %s\n\nTask: %s\n\n## Procedure (%s kernel)\n\n```%s\n%s\n```\n\n## Validation\n\n%s\n\nResult: %s\n",
		l.Step, l.Task, l.Kernel, lang, strings.TrimRight(l.Code, "\n"), l.Checkpoint, l.Summary)
	_, err = m.store.PutSkill(ctx, &memory.PutSkillParams{Actor: actor, Reason: reason, Skill: &memory.Skill{
		Namespace:   m.namespace + "/skills",
		Name:        skillName(l.Step),
		Description: clip(fmt.Sprintf("%s (a step of: %s)", l.Step, l.Task), 1000),
		Body:        body,
		Provenance:  prov,
	}})
	if err != nil {
		return fmt.Errorf("storing the step's skill: %w", err)
	}
	return nil
}

// skillName turns a step title into an Agent Skills name: lowercase letters, digits and single
// hyphens, at most 64 characters.
func skillName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 64 {
		name = strings.TrimRight(name[:64], "-")
	}
	if name == "" {
		name = "step"
	}
	return name
}

// clip cuts s to n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// searchMemoryIn is the input of the search_memory tool.
type searchMemoryIn struct {
	Query string   `json:"query" jsonschema:"what to look for: a method, a failure, a parameter, a material"`
	Kinds []string `json:"kinds,omitempty" jsonschema:"only these kinds: observation, warning, boundary, parameter, reference, skill"`
}

// tool is search_memory: it lets the code module look memory up while it works.
func (m *agentMemory) tool() tool.Tool {
	return tool.Must("search_memory", "Search long-term memory for facts (observations, warnings, boundaries, parameters, reference values) and skills (procedures with code) from earlier runs.",
		func(ctx context.Context, in searchMemoryIn) (*tool.Result, error) {
			q := &memory.Query{Text: in.Query, Namespaces: []string{m.namespace}, Limit: 8}
			for _, k := range in.Kinds {
				q.Kinds = append(q.Kinds, memory.Kind(k))
			}
			var b strings.Builder
			var hits []string
			for r, err := range m.store.Search(ctx, q) {
				if err != nil {
					return nil, err
				}
				hits = append(hits, r.ID())
				switch {
				case r.Fact != nil:
					fmt.Fprintf(&b, "- [%s %s] %s\n", r.Fact.Kind, r.Fact.ID, r.Fact.Text)
				case r.Skill != nil:
					fmt.Fprintf(&b, "- [skill %s] %s\n%s\n", r.Skill.Name, r.Skill.Description, clip(r.Skill.Body, 1500))
				}
			}
			if len(hits) == 0 {
				return &tool.Result{Content: "nothing in memory matches " + fmt.Sprintf("%q", in.Query)}, nil
			}
			return &tool.Result{Content: b.String(), Sources: hits}, nil
		})
}
