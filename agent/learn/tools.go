package learn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/tool"
)

// The memory tools, written once and adapted to the agent (a tool.Set) and to MCP (server/mcp
// registers the same tools): search_memory, search_skills, save_fact, save_skill, update_skill.
// Writes go through consolidation, are validated, land in the tools' namespaces unless the call
// names another, and are linked to the call's tool.Origin (the run or connection, the
// operations it follows).

// SearchMemoryIn are the arguments of search_memory.
type SearchMemoryIn struct {
	Query      string   `json:"query" jsonschema:"what to look for: a method, a failure, a parameter, a material, a value"`
	Kinds      []string `json:"kinds,omitempty" jsonschema:"only these kinds: observation, warning, boundary, parameter, reference, skill"`
	Tags       []string `json:"tags,omitempty" jsonschema:"every tag must be present"`
	Namespaces []string `json:"namespaces,omitempty" jsonschema:"namespaces to search (a namespace includes its children); default the memory this caller reads"`
	Limit      int      `json:"limit,omitempty" jsonschema:"at most this many results (default 8, at most 50)"`
	Retired    bool     `json:"retired,omitempty" jsonschema:"also the entries that were superseded or invalidated (their status says which)"`
}

// FactOut is a fact as the tools return it.
type FactOut struct {
	ID         string   `json:"id"`
	Namespace  string   `json:"namespace"`
	Kind       string   `json:"kind"`
	Text       string   `json:"text"`
	Tags       []string `json:"tags,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
	Tried      []string `json:"tried,omitempty" jsonschema:"for a guardrail: the settings that failed"`
	Worked     []string `json:"worked,omitempty" jsonschema:"for a guardrail: the settings that fixed it"`
	Confidence float64  `json:"confidence,omitempty"`
	Status     string   `json:"status"`
	Operations []string `json:"operations,omitempty" jsonschema:"the protocol operations it was learned from"`
	Session    string   `json:"session,omitempty"`
	Score      float64  `json:"score,omitempty"`
	Updated    string   `json:"updated"`
}

// SkillOut is a skill as the tools return it.
type SkillOut struct {
	ID          string   `json:"id"`
	Namespace   string   `json:"namespace"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Body        string   `json:"body,omitempty" jsonschema:"the procedure (Markdown)"`
	Tags        []string `json:"tags,omitempty"`
	Version     int      `json:"version"`
	Uses        int      `json:"uses"`
	Successes   int      `json:"successes"`
	Failures    int      `json:"failures"`
	Status      string   `json:"status"`
	Operations  []string `json:"operations,omitempty"`
	Score       float64  `json:"score,omitempty"`
	Updated     string   `json:"updated"`
}

// SearchOut lists what a search found, best first.
type SearchOut struct {
	Facts  []FactOut  `json:"facts"`
	Skills []SkillOut `json:"skills"`
}

// Hit is one entry a search found, best first: a fact or a skill (without its body), and
// its score.
type Hit struct {
	Fact  *FactOut  `json:"fact,omitempty"`
	Skill *SkillOut `json:"skill,omitempty"`
	Score float64   `json:"score"`

	r *memory.Result
}

// Search is search_memory: the one implementation of a memory search, behind the tool (the
// agent's and MCP's) and REST's GET /v1/memory/search, with its defaults and limits (8
// results, at most 50; active entries only unless Retired). read are the namespaces searched
// when in names none (nil: all). Bad arguments are errors wrapping memory.ErrBadQuery (or
// memory.ErrInvalid, for a namespace).
func Search(ctx context.Context, s memory.Reader, in *SearchMemoryIn, read []string) ([]Hit, error) {
	if in.Limit < 0 {
		return nil, fmt.Errorf("%w: limit: %d: want 1 to 50 (none for the default, 8)", memory.ErrBadQuery, in.Limit)
	}
	q := &memory.Query{Text: in.Query, Namespaces: in.Namespaces, Tags: in.Tags, Limit: limitOf(in.Limit, 8)}
	if len(q.Namespaces) == 0 {
		q.Namespaces = read
	}
	for _, k := range in.Kinds {
		kind := memory.Kind(k)
		if kind != memory.KindSkill && !slices.Contains(memory.FactKinds, kind) {
			return nil, fmt.Errorf("%w: kinds: %q is not a kind (want observation, warning, boundary, parameter, reference or skill)", memory.ErrBadQuery, k)
		}
		q.Kinds = append(q.Kinds, kind)
	}
	for _, ns := range q.Namespaces {
		if err := memory.ValidNamespace(ns); err != nil {
			return nil, err
		}
	}
	if in.Retired {
		q.Status = []memory.Status{memory.StatusActive, memory.StatusSuperseded, memory.StatusInvalidated}
	}
	hits := []Hit{}
	for r, err := range s.Search(ctx, q) {
		if err != nil {
			return nil, err
		}
		h := Hit{Score: r.Score, r: r}
		switch {
		case r.Fact != nil:
			f := FactView(r.Fact, r.Score)
			h.Fact = &f
		case r.Skill != nil:
			sk := SkillView(r.Skill, r.Score, false)
			h.Skill = &sk
		default:
			continue
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// SearchSkillsIn are the arguments of search_skills.
type SearchSkillsIn struct {
	Query      string   `json:"query" jsonschema:"what the procedure should do"`
	Namespaces []string `json:"namespaces,omitempty" jsonschema:"namespaces to search; default the memory this caller reads"`
	Limit      int      `json:"limit,omitempty" jsonschema:"at most this many skills (default 5, at most 50)"`
}

// SaveFactIn are the arguments of save_fact.
type SaveFactIn struct {
	Text       string   `json:"text" jsonschema:"one atomic statement, with its numbers and units"`
	Kind       string   `json:"kind,omitempty" jsonschema:"observation (default), warning, boundary, parameter or reference (a value to consult, such as an experimental or literature value)"`
	Tags       []string `json:"tags,omitempty" jsonschema:"applicability: software, method, material class…"`
	Evidence   []string `json:"evidence,omitempty" jsonschema:"short quotes from the run that support it"`
	Tried      []string `json:"tried,omitempty" jsonschema:"for a guardrail: the settings that failed, as 'name = value'"`
	Worked     []string `json:"worked,omitempty" jsonschema:"for a guardrail: the settings that fixed it, as 'name = value'"`
	Confidence float64  `json:"confidence,omitempty" jsonschema:"0..1"`
	Namespace  string   `json:"namespace,omitempty" jsonschema:"where to store it (default: this caller's fact namespace)"`
	Operations []string `json:"operations,omitempty" jsonschema:"operation ids it was learned from (default: the current one)"`
}

// SaveFactOut is what save_fact did.
type SaveFactOut struct {
	Fact   FactOut `json:"fact"`
	Event  string  `json:"event" jsonschema:"ADD or MERGE"`
	Merged bool    `json:"merged" jsonschema:"the same fact (in these or other words) existed: the two were merged"`
	// Resolution is "side by side" when a close fact saying something different exists.
	Resolution string `json:"resolution,omitempty"`
	Related    string `json:"related,omitempty" jsonschema:"the existing fact it was merged into or kept beside"`
}

// SaveSkillIn are the arguments of save_skill.
type SaveSkillIn struct {
	Name        string   `json:"name" jsonschema:"a new, descriptive name: lowercase letters, digits and hyphens, at most 64 characters"`
	Description string   `json:"description" jsonschema:"what it does and when to use it, at most 1024 characters"`
	Body        string   `json:"body" jsonschema:"the procedure, verbatim (Markdown: when it applies, steps, code, parameters, validation checks, failure modes)"`
	Tags        []string `json:"tags,omitempty"`
	Namespace   string   `json:"namespace,omitempty" jsonschema:"where to store it (default: this caller's skill namespace)"`
	Operations  []string `json:"operations,omitempty" jsonschema:"operation ids that validated it (default: the current one)"`
}

// UpdateSkillIn are the arguments of update_skill.
type UpdateSkillIn struct {
	Name        string   `json:"name" jsonschema:"the skill to revise"`
	Namespace   string   `json:"namespace,omitempty" jsonschema:"its namespace (default: this caller's skill namespace)"`
	Description string   `json:"description,omitempty" jsonschema:"a new description (default: kept)"`
	Body        string   `json:"body,omitempty" jsonschema:"the revised procedure (default: kept)"`
	Tags        []string `json:"tags,omitempty" jsonschema:"new tags (default: kept)"`
	Reason      string   `json:"reason" jsonschema:"why: the run's evidence for the revision or the outcome"`
	Outcome     string   `json:"outcome,omitempty" jsonschema:"success or failure: the skill was used and worked, or did not (moves its counts)"`
	Operations  []string `json:"operations,omitempty" jsonschema:"operation ids of the evidence (default: the current one)"`
}

// SkillWriteOut is what save_skill and update_skill did.
type SkillWriteOut struct {
	Skill   SkillOut `json:"skill"`
	Created bool     `json:"created"`
	Changed bool     `json:"changed" jsonschema:"a new version was written (false: the content was the same)"`
}

// ToolsOptions say where the tools write; nil means the Memory's own namespaces.
type ToolsOptions struct {
	FactNamespace, SkillNamespace string
	// Read are the namespaces searched by default (nil: all for a store's own tools, the
	// Memory's Read otherwise).
	Read []string
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// FactView is a fact as the tools return it.
func FactView(f *memory.Fact, score float64) FactOut {
	return FactOut{ID: f.ID, Namespace: f.Namespace, Kind: string(f.Kind), Text: f.Text, Tags: f.Tags, Evidence: f.Evidence,
		Tried: f.Tried, Worked: f.Worked, Confidence: f.Confidence, Status: string(f.Status),
		Operations: f.Provenance.Operations, Session: f.Provenance.Session, Score: score, Updated: stamp(f.UpdatedAt)}
}

// SkillView is a skill as the tools return it (with its body when body is set).
func SkillView(s *memory.Skill, score float64, body bool) SkillOut {
	o := SkillOut{ID: s.ID, Namespace: s.Namespace, Name: s.Name, Description: s.Description, Tags: s.Tags,
		Version: s.Version, Uses: s.Uses, Successes: s.Successes, Failures: s.Failures, Status: string(s.Status),
		Operations: s.Provenance.Operations, Score: score, Updated: stamp(s.UpdatedAt)}
	if body {
		o.Body = s.Body
	}
	return o
}

// SkillText is a skill as a model reads it.
func SkillText(s *memory.Skill) string {
	return fmt.Sprintf("# %s (%s, version %d, %d uses: %d succeeded, %d failed)\n\n%s\n\n%s",
		s.Name, s.Namespace, s.Version, s.Uses, s.Successes, s.Failures, s.Description, s.Body)
}

func limitOf(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, 50)
}

// Tools returns the memory tools of store s writing to the namespaces of o (defaults: "user"
// and "user/skills"; searches cover every namespace unless o.Read says otherwise).
func Tools(s memory.Store, o *ToolsOptions) []tool.Tool {
	var v ToolsOptions
	if o != nil {
		v = *o
	}
	if v.FactNamespace == "" {
		v.FactNamespace = "user"
	}
	if v.SkillNamespace == "" {
		v.SkillNamespace = v.FactNamespace + "/skills"
	}
	t := &tools{s: s, o: v}
	return []tool.Tool{
		tool.Must("search_memory", "Search long-term memory for facts — observations, warnings and failure boundaries (what failed before and what fixed it), "+
			"parameter choices, reference values (to consult and compare against, never to report as your result) — and skills (procedures with code) from earlier runs.",
			t.searchMemory),
		tool.Must("search_skills", "Search memory for skills: verbatim procedures (when they apply, code, parameters, validation checks, failure modes) that passed their checks before, with their use counts.",
			t.searchSkills),
		tool.Must("save_fact", "Save one atomic fact learned from this run (linked to the current operation). The same fact in other words is merged; "+
			"a statement with another number, unit, sign, polarity or entity is kept beside it. Use kind reference for a value from outside to compare against, "+
			"warning or boundary (with tried/worked settings) for a failure and what fixed it.",
			t.saveFact),
		tool.Must("save_skill", "Save a procedure that this run validated as a new skill (an Agent Skills SKILL.md) under a new, descriptive name. "+
			"To revise an existing skill, use update_skill: a name that exists is refused, never overwritten.",
			t.saveSkill),
		tool.Must("update_skill", "Revise a skill (a new version; the old one stays in its history) and/or record that using it succeeded or failed (its counts).",
			t.updateSkill),
	}
}

type tools struct {
	s memory.Store
	o ToolsOptions
}

// provenance is where a write comes from: the call's origin, or the operations it names.
func provenance(ctx context.Context, ops []string) (memory.Provenance, string) {
	o := tool.OriginOf(ctx)
	p := memory.Provenance{Operations: o.Operations, Session: o.Session, Model: o.Model, Time: time.Now().UTC()}
	if len(ops) > 0 {
		p.Operations = slices.Clone(ops)
	}
	actor := o.Actor
	if actor == "" {
		actor = "tool"
	}
	return p, actor
}

func (t *tools) searchMemory(ctx context.Context, in SearchMemoryIn) (*tool.Result, error) {
	hits, err := Search(ctx, t.s, &in, t.o.Read)
	if err != nil {
		return nil, err
	}
	out := SearchOut{Facts: []FactOut{}, Skills: []SkillOut{}}
	var b strings.Builder
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.r.ID())
		switch {
		case h.Fact != nil:
			out.Facts = append(out.Facts, *h.Fact)
			note := ""
			if h.r.Fact.Kind == memory.KindReference {
				note = " (reference: consult; do not report as your result)"
			}
			fmt.Fprintf(&b, "- [%s %s] %s%s\n", h.r.Fact.Kind, h.r.Fact.ID, h.r.Fact.Text, note)
		case h.Skill != nil:
			out.Skills = append(out.Skills, *h.Skill)
			sk := h.r.Skill
			fmt.Fprintf(&b, "- [skill %s, version %d, %d uses: %d succeeded] %s\n%s\n", sk.Name, sk.Version, sk.Uses, sk.Successes, sk.Description, textcut.Head(sk.Body, 1500))
		}
	}
	if len(hits) == 0 {
		return &tool.Result{Content: fmt.Sprintf("nothing in memory matches %q", in.Query), Data: out}, nil
	}
	return &tool.Result{Content: b.String(), Sources: ids, Data: out}, nil
}

func (t *tools) searchSkills(ctx context.Context, in SearchSkillsIn) (*tool.Result, error) {
	hits, err := Search(ctx, t.s, &SearchMemoryIn{Query: in.Query, Namespaces: in.Namespaces, Kinds: []string{string(memory.KindSkill)},
		Limit: limitOf(in.Limit, 5)}, t.o.Read)
	if err != nil {
		return nil, err
	}
	out := SearchOut{Facts: []FactOut{}, Skills: []SkillOut{}}
	var b strings.Builder
	for _, h := range hits {
		if h.Skill == nil {
			continue
		}
		out.Skills = append(out.Skills, *h.Skill)
		sk := h.r.Skill
		fmt.Fprintf(&b, "- [skill %s, version %d, %d uses: %d succeeded, %d failed] %s\n%s\n", sk.Name, sk.Version, sk.Uses, sk.Successes, sk.Failures, sk.Description, textcut.Head(sk.Body, 1500))
	}
	if len(out.Skills) == 0 {
		return &tool.Result{Content: fmt.Sprintf("no skill matches %q", in.Query), Data: out}, nil
	}
	return &tool.Result{Content: b.String(), Data: out}, nil
}

func (t *tools) saveFact(ctx context.Context, in SaveFactIn) (*tool.Result, error) {
	ns := in.Namespace
	if ns == "" {
		ns = t.o.FactNamespace
	}
	prov, actor := provenance(ctx, in.Operations)
	f := &memory.Fact{Namespace: ns, Text: strings.TrimSpace(in.Text), Kind: memory.Kind(in.Kind), Tags: in.Tags, Evidence: in.Evidence,
		Tried: in.Tried, Worked: in.Worked, Confidence: in.Confidence, Provenance: prov}
	if f.Kind == "" {
		f.Kind = memory.KindObservation
	}
	for _, s := range append(slices.Clone(in.Tried), in.Worked...) {
		if _, _, ok := setting(s); !ok {
			return nil, fmt.Errorf("tried/worked: %q is not a setting 'name = value'", s)
		}
	}
	for _, s := range in.Tried {
		n, _, _ := setting(s)
		f.Tags = append(f.Tags, "param:"+n)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	rep, err := consolidate.Consolidate(ctx, t.s, &consolidate.Input{Namespace: ns, Facts: []*memory.Fact{f}, Provenance: prov, Actor: actor}, nil)
	if err != nil {
		return nil, err
	}
	a := rep.Actions[0]
	e, err := t.s.Get(ctx, &memory.GetParams{ID: a.ID})
	if err != nil {
		return nil, err
	}
	out := SaveFactOut{Fact: FactView(e.Fact, 0), Event: string(a.Event), Merged: a.Event == memory.EventMerge, Resolution: a.Resolution, Related: a.Related}
	msg := fmt.Sprintf("saved fact %s", a.ID)
	switch {
	case out.Merged:
		msg = fmt.Sprintf("the same fact was in memory: merged into %s (%s)", a.ID, textcut.Head(e.Fact.Text, 200))
	case a.Resolution == consolidate.SideBySide:
		msg = fmt.Sprintf("saved fact %s beside %s, which says something different: %s", a.ID, a.Related, a.Reason)
	}
	return &tool.Result{Content: msg, Data: out}, nil
}

func (t *tools) saveSkill(ctx context.Context, in SaveSkillIn) (*tool.Result, error) {
	ns := in.Namespace
	if ns == "" {
		ns = t.o.SkillNamespace
	}
	prov, actor := provenance(ctx, in.Operations)
	sk := &memory.Skill{Namespace: ns, Name: in.Name, Description: in.Description, Body: in.Body, Tags: in.Tags, Provenance: prov}
	if err := sk.Validate(); err != nil {
		return nil, err
	}
	if cur, err := t.s.Get(ctx, &memory.GetParams{Namespace: ns, Name: in.Name}); err == nil {
		return nil, fmt.Errorf("a skill %q exists in %s (version %d: %s): revise it with update_skill, or save this procedure under another name",
			in.Name, ns, cur.Skill.Version, textcut.Head(cur.Skill.Description, 200))
	} else if !errors.Is(err, memory.ErrNotFound) {
		return nil, err
	}
	r, err := t.s.PutSkill(ctx, &memory.PutSkillParams{Skill: sk, Actor: actor, Reason: "saved by the model"})
	if err != nil {
		return nil, err
	}
	return &tool.Result{Content: fmt.Sprintf("saved skill %s (%s, version 1)", r.Skill.Name, ns),
		Data: SkillWriteOut{Skill: SkillView(r.Skill, 0, false), Created: r.Created, Changed: r.Changed}}, nil
}

func (t *tools) updateSkill(ctx context.Context, in UpdateSkillIn) (*tool.Result, error) {
	ns := in.Namespace
	if ns == "" {
		ns = t.o.SkillNamespace
	}
	if strings.TrimSpace(in.Reason) == "" {
		return nil, errors.New("update_skill: reason is required: the evidence for the revision or the outcome")
	}
	e, err := t.s.Get(ctx, &memory.GetParams{Namespace: ns, Name: in.Name})
	if err != nil {
		return nil, err
	}
	prov, actor := provenance(ctx, in.Operations)
	sk := *e.Skill
	out := SkillWriteOut{Skill: SkillView(&sk, 0, false)}
	var msgs []string
	if in.Description != "" || in.Body != "" || in.Tags != nil {
		if in.Description != "" {
			sk.Description = in.Description
		}
		if in.Body != "" {
			sk.Body = in.Body
		}
		if in.Tags != nil {
			sk.Tags = in.Tags
		}
		sk.Provenance.Absorb(prov)
		r, err := t.s.PutSkill(ctx, &memory.PutSkillParams{Skill: &sk, Actor: actor, Reason: in.Reason})
		if err != nil {
			return nil, err
		}
		out = SkillWriteOut{Skill: SkillView(r.Skill, 0, false), Changed: r.Changed}
		if r.Changed {
			msgs = append(msgs, fmt.Sprintf("skill %s is now version %d", r.Skill.Name, r.Skill.Version))
		} else {
			msgs = append(msgs, "the content is the same: no new version")
		}
	}
	switch in.Outcome {
	case "":
	case "success", "failure":
		r, err := t.s.Use(ctx, &memory.UseParams{ID: e.Skill.ID, Success: in.Outcome == "success", Actor: actor})
		if err != nil {
			return nil, err
		}
		out.Skill = SkillView(r.Skill, 0, false)
		msgs = append(msgs, fmt.Sprintf("recorded a %s: %d uses, %d succeeded, %d failed", in.Outcome, r.Skill.Uses, r.Skill.Successes, r.Skill.Failures))
	default:
		return nil, fmt.Errorf("outcome %q: want success or failure", in.Outcome)
	}
	if len(msgs) == 0 {
		return nil, errors.New("update_skill: give a new description, body or tags, or an outcome")
	}
	return &tool.Result{Content: strings.Join(msgs, "; "), Data: out}, nil
}

// Tools returns the memory tools over the Memory's store and namespaces.
func (m *Memory) Tools() []tool.Tool {
	return Tools(m.s, &ToolsOptions{FactNamespace: m.opts.Namespace, SkillNamespace: m.opts.SkillNamespace, Read: m.opts.Read})
}
