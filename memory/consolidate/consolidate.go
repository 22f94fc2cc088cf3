// Package consolidate writes what an agent learned into memory without ever losing what memory
// knew.
//
// With Infer false, the given facts are stored verbatim; exact duplicates are merged by the
// store and near duplicates (the same statement in other words) deterministically here — but a
// statement that differs in any number (after unit normalisation), unit, sign, negation or
// polarity word, comparison or entity name is a different fact (statement.Distinguish) and is kept
// beside the other, the history saying why. A merge keeps the evidence and the provenance of
// both. With Infer true, a model extracts atomic facts from a trace — the agent's and the tools'
// findings as well as the user's words, and the facts given — then, for the nearest entries
// already in scope, shown to it under small integer ids (never real ids, which models invent),
// decides ADD, UPDATE, DELETE or NOOP. Every id it returns is checked, the whole answer is
// validated before anything is written, an UPDATE that changes what a fact says (its numbers,
// polarity, entities) supersedes the old fact with a new one instead of rewriting it, a DELETE
// only invalidates (the entry is kept, with the reason) and is refused while the trace still
// supports the fact, and every change lands in the store's history.
package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// ErrModelOutput is wrapped when the model's answer cannot be used (not JSON, wrong shape):
// nothing is written.
var ErrModelOutput = errors.New("consolidate: unusable model answer")

// Options configure Consolidate; nil means the defaults.
type Options struct {
	// Model extracts and decides when Input.Infer is set.
	Model llm.Model
	// Neighbours is how many existing entries are retrieved per new fact (default 5).
	Neighbours int
	// NearDuplicate is the content-word overlap (statement.ContentSimilarity) at or above which a
	// new fact that statement.Distinguish cannot tell apart from an existing one is merged into it
	// without a model (default 0.7).
	NearDuplicate float64
}

// Input is what to consolidate.
type Input struct {
	Namespace string
	// Facts are stored as given when Infer is false.
	Facts []*memory.Fact
	// Trace is the text facts are extracted from when Infer is true: the task, the agent's
	// messages, code, tool results, perception verdicts.
	Trace string
	Infer bool
	// Provenance is attached to every fact written (Model is filled in from the model).
	Provenance memory.Provenance
	Actor      string
}

// Action is one thing Consolidate did or refused.
type Action struct {
	Event   memory.Event `json:"event"`             // ADD, UPDATE, MERGE, DELETE, NOOP, REFUSED
	ID      string       `json:"id,omitempty"`      // the entry concerned
	Text    string       `json:"text,omitempty"`    // the new text
	Old     string       `json:"old,omitempty"`     // the text before
	Reason  string       `json:"reason,omitempty"`  // the model's reason, or why memory refused
	Refused string       `json:"refused,omitempty"` // for REFUSED: the operation asked for
	// Resolution says how a fact close to an existing one was written: "merged" (the same fact
	// in other words), "side by side" (a different fact: both active), "superseded" (an UPDATE
	// that changed what the fact says: the old fact is kept, superseded by the new one),
	// "refined" (an UPDATE in place that says the same thing better).
	Resolution string `json:"resolution,omitempty"`
	// Related is the existing entry the resolution concerns.
	Related string `json:"related,omitempty"`
}

// Resolutions.
const (
	Merged     = "merged"
	SideBySide = "side by side"
	Superseded = "superseded"
	Refined    = "refined"
)

// Report lists the actions in order.
type Report struct {
	Extracted []string `json:"extracted,omitempty"` // facts the model extracted
	Entities  []string `json:"entities,omitempty"`  // entities the model named (ids)
	Actions   []Action `json:"actions"`
}

// Count is how many actions had event e.
func (r *Report) Count(e memory.Event) int {
	n := 0
	for _, a := range r.Actions {
		if a.Event == e {
			n++
		}
	}
	return n
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Neighbours <= 0 {
		v.Neighbours = 5
	}
	if v.NearDuplicate <= 0 {
		v.NearDuplicate = 0.7
	}
	return v
}

// Consolidate writes in into s.
func Consolidate(ctx context.Context, s memory.Store, in *Input, opts *Options) (*Report, error) {
	o := opts.withDefaults()
	if err := memory.ValidNamespace(in.Namespace); err != nil {
		return nil, err
	}
	if !in.Infer {
		return verbatim(ctx, s, in, &o)
	}
	if o.Model == nil {
		return nil, fmt.Errorf("consolidate: infer needs a model")
	}
	return infer(ctx, s, in, &o)
}

// Similarity is the overlap of the content words of a and b (statement.ContentSimilarity).
func Similarity(a, b string) float64 { return statement.ContentSimilarity(a, b) }

// nearest retrieves the active facts in scope most like text, best first.
func nearest(ctx context.Context, s memory.Reader, ns, text string, n int) ([]*memory.Fact, error) {
	var out []*memory.Fact
	for r, err := range s.Search(ctx, &memory.Query{Text: text, Namespaces: []string{ns}, Kinds: memory.FactKinds, Limit: n}) {
		if err != nil {
			return nil, err
		}
		out = append(out, r.Fact)
	}
	return out, nil
}

// closest is what the nearest facts say about text: the most similar one that states the same
// fact (dup), and the most similar one at or above the threshold that states a different one
// (other, with why). Ties go to the smaller id, so the choice does not depend on search order.
func closest(cands []*memory.Fact, text string, threshold float64) (dup, other *memory.Fact, why string) {
	dupSim, otherSim := 0.0, 0.0
	for _, c := range cands {
		sim := statement.ContentSimilarity(c.Text, text)
		if sim < threshold {
			continue
		}
		if d := statement.Distinguish(c.Text, text); d != "" {
			if other == nil || sim > otherSim || sim == otherSim && c.ID < other.ID {
				other, otherSim, why = c, sim, d
			}
			continue
		}
		if dup == nil || sim > dupSim || sim == dupSim && c.ID < dup.ID {
			dup, dupSim = c, sim
		}
	}
	return dup, other, why
}

func verbatim(ctx context.Context, s memory.Store, in *Input, o *Options) (*Report, error) {
	rep := &Report{}
	for _, f := range in.Facts {
		g := *f
		g.Namespace = in.Namespace
		if g.Provenance.Operations == nil && g.Provenance.Session == "" {
			g.Provenance = in.Provenance
		}
		if g.Kind == "" {
			g.Kind = memory.KindObservation
		}
		if err := g.Validate(); err != nil {
			return rep, err
		}
		a, err := write(ctx, s, &g, in.Actor, "", o)
		if err != nil {
			return rep, err
		}
		rep.Actions = append(rep.Actions, a)
	}
	return rep, nil
}

// write stores one fact without a model: merged into the nearest fact that says the same thing
// in other words, or added — beside a close fact that says something different, the history
// saying why.
func write(ctx context.Context, s memory.Store, g *memory.Fact, actor, reason string, o *Options) (Action, error) {
	cands, err := nearest(ctx, s, g.Namespace, g.Text, o.Neighbours)
	if err != nil {
		return Action{}, err
	}
	dup, other, why := closest(cands, g.Text, o.NearDuplicate)
	if dup != nil && statement.Normalize(dup.Text) != statement.Normalize(g.Text) {
		prov := g.Provenance
		u, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: dup.ID, Tags: union(dup.Tags, g.Tags), Evidence: g.Evidence,
			Confidence: max(dup.Confidence, g.Confidence), Merge: &prov, Tried: g.Tried, Worked: g.Worked,
			Actor: actor, Reason: "the same fact in other words, merged: " + g.Text})
		if err != nil {
			return Action{}, err
		}
		return Action{Event: memory.EventMerge, ID: u.ID, Text: g.Text, Old: dup.Text, Reason: "near duplicate", Resolution: Merged, Related: dup.ID}, nil
	}
	a := Action{Event: memory.EventAdd, Text: g.Text, Reason: reason}
	if other != nil {
		a.Resolution, a.Related = SideBySide, other.ID
		a.Reason = strings.TrimSpace(reason + " kept side by side with " + other.ID + " (" + textcut.Head(other.Text, 120) + "): " + why)
	}
	r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: g, Actor: actor, Reason: a.Reason})
	if err != nil {
		return Action{}, err
	}
	a.ID = r.Fact.ID
	if r.Merged {
		a.Event, a.Old, a.Reason, a.Resolution, a.Related = memory.EventMerge, r.Fact.Text, "exact duplicate", Merged, r.Fact.ID
	}
	return a, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// extracted is the model's first answer.
type extracted struct {
	Facts []struct {
		Text     string   `json:"text"`
		Kind     string   `json:"kind"`
		Tags     []string `json:"tags"`
		Evidence string   `json:"evidence"`
	} `json:"facts"`
	// Entities are the materials, methods, software, parameters and properties the trace
	// names, with the other names they go by, for the entity graph.
	Entities []struct {
		Name    string   `json:"name"`
		Kind    string   `json:"kind"`
		Aliases []string `json:"aliases"`
	} `json:"entities,omitempty"`
}

// decision is one operation of the model's second answer.
type decision struct {
	Event  string `json:"event"`
	ID     *int   `json:"id"`   // an existing entry's small id (UPDATE, DELETE, NOOP)
	Fact   *int   `json:"fact"` // the new fact's index (ADD, UPDATE, NOOP)
	Text   string `json:"text"` // the text to store (ADD, UPDATE); default the new fact's
	Reason string `json:"reason"`
}

type decisions struct {
	Operations []decision `json:"operations"`
}

const extractSystem = `You maintain the long-term memory of a scientific lab agent. From the trace below,
extract atomic facts worth remembering for future experiments: observations, warnings, failure
boundaries, parameter choices that worked, calibrated reference values. Include what the agent and
its tools found (errors, measured values, what fixed a failure), not only what the user said. Each
fact is one self-contained statement; quote the line of the trace that supports it as evidence.
kind is one of observation, warning, boundary, parameter, reference. Also list the entities the
trace names — materials, methods, software (with its version), parameters, properties — each with
its canonical name, its kind and the other names it goes by. Answer with JSON only.`

const decideSystem = `You maintain the long-term memory of a scientific lab agent. You are shown EXISTING
memory entries, each under a small integer id, and NEW facts, each under an index. For each new
fact decide one operation:
- ADD: it is new knowledge ("fact": index).
- UPDATE: it refines or corrects an existing entry ("id": the entry, "fact": index, "text": the
  merged statement).
- DELETE: it shows an existing entry is wrong ("id": the entry); the entry is kept but invalidated.
- NOOP: memory already holds it ("id", "fact").
Use only the ids shown. Give a short reason for each. Answer with JSON only.`

var extractSchema = json.RawMessage(`{"type":"object","required":["facts"],"additionalProperties":false,"properties":{"facts":{"type":"array","items":{"type":"object","required":["text","kind","tags","evidence"],"additionalProperties":false,"properties":{"text":{"type":"string"},"kind":{"type":"string","enum":["observation","warning","boundary","parameter","reference"]},"tags":{"type":"array","items":{"type":"string"}},"evidence":{"type":"string"}}}},"entities":{"type":"array","items":{"type":"object","required":["name","kind","aliases"],"additionalProperties":false,"properties":{"name":{"type":"string"},"kind":{"type":"string","enum":["material","method","software","parameter","property","name"]},"aliases":{"type":"array","items":{"type":"string"}}}}}}}`)

var decideSchema = json.RawMessage(`{"type":"object","required":["operations"],"additionalProperties":false,"properties":{"operations":{"type":"array","items":{"type":"object","required":["event","id","fact","text","reason"],"additionalProperties":false,"properties":{"event":{"type":"string","enum":["ADD","UPDATE","DELETE","NOOP"]},"id":{"type":["integer","null"]},"fact":{"type":["integer","null"]},"text":{"type":"string"},"reason":{"type":"string"}}}}}}`)

// ask sends one request with an output schema and decodes the JSON answer into v.
func ask(ctx context.Context, m llm.Model, system, user, name string, schema json.RawMessage, v any) error {
	temp := 0.0
	resp, err := llm.Generate(ctx, m, &llm.Request{Module: "memory", System: system,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: user}},
		Output:   &llm.OutputSchema{Name: name, Schema: schema}, Temperature: &temp})
	if err != nil {
		return fmt.Errorf("consolidate: %s: %w", name, err)
	}
	text := strings.TrimSpace(resp.Message.Content)
	// Some servers wrap JSON in a Markdown fence despite the schema.
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v (answer: %.200q)", ErrModelOutput, name, err, text)
	}
	if dec.More() {
		return fmt.Errorf("%w: %s: text after the JSON (answer: %.200q)", ErrModelOutput, name, text)
	}
	return nil
}

// newFact is an extracted fact.
type newFact struct {
	fact     *memory.Fact
	evidence string
}

func infer(ctx context.Context, s memory.Store, in *Input, opt *Options) (*Report, error) {
	rep := &Report{}
	var ex extracted
	if strings.TrimSpace(in.Trace) != "" || len(in.Facts) == 0 {
		if err := ask(ctx, opt.Model, extractSystem, "Trace:\n"+in.Trace, "extract_facts", extractSchema, &ex); err != nil {
			return rep, err
		}
	}
	var news []newFact
	// The facts given (by the agent's learning loop) are new facts beside the extracted ones.
	for _, f := range in.Facts {
		g := *f
		g.Namespace = in.Namespace
		if g.Provenance.IsZero() {
			g.Provenance = in.Provenance
		}
		if g.Kind == "" {
			g.Kind = memory.KindObservation
		}
		if err := g.Validate(); err != nil {
			return rep, err
		}
		ev := ""
		if len(g.Evidence) > 0 {
			ev = g.Evidence[0]
		}
		news = append(news, newFact{&g, ev})
	}
	for _, f := range ex.Facts {
		kind := memory.Kind(f.Kind)
		if !slices.Contains(memory.FactKinds, kind) {
			kind = memory.KindObservation
		}
		fact := &memory.Fact{Namespace: in.Namespace, Text: strings.TrimSpace(f.Text), Kind: kind, Tags: f.Tags, Provenance: in.Provenance}
		fact.Provenance.Model = opt.Model.Name()
		if f.Evidence != "" {
			fact.Evidence = []string{f.Evidence}
		}
		if fact.Validate() != nil {
			rep.Actions = append(rep.Actions, Action{Event: memory.EventRefused, Text: f.Text, Refused: "extract", Reason: "empty or invalid fact"})
			continue
		}
		news = append(news, newFact{fact, f.Evidence})
		rep.Extracted = append(rep.Extracted, fact.Text)
	}
	if g, ok := s.(memory.Graph); ok {
		for _, e := range ex.Entities {
			ent := &memory.Entity{Name: strings.TrimSpace(e.Name), Kind: memory.EntityKind(e.Kind), Aliases: e.Aliases, Source: "model:" + opt.Model.Name()}
			if err := ent.Validate(); err != nil {
				rep.Actions = append(rep.Actions, Action{Event: memory.EventRefused, Text: e.Name, Refused: "entity", Reason: err.Error()})
				continue
			}
			if _, err := g.PutEntity(ctx, &memory.PutEntityParams{Entity: ent, Actor: "model:" + opt.Model.Name()}); err != nil {
				return rep, err
			}
			rep.Entities = append(rep.Entities, memory.EntityID(ent.Kind, ent.Name))
		}
	}
	if len(news) == 0 {
		return rep, nil
	}
	// The nearest existing entries of every new fact, numbered 0…n-1 in order of first sight.
	var existing []*memory.Fact
	seen := map[string]bool{}
	for _, n := range news {
		cands, err := nearest(ctx, s, in.Namespace, n.fact.Text, opt.Neighbours)
		if err != nil {
			return rep, err
		}
		for _, c := range cands {
			if !seen[c.ID] {
				seen[c.ID] = true
				existing = append(existing, c)
			}
		}
	}
	var prompt strings.Builder
	prompt.WriteString("EXISTING entries:\n")
	if len(existing) == 0 {
		prompt.WriteString("(none)\n")
	}
	for i, e := range existing {
		fmt.Fprintf(&prompt, "id %d [%s]: %s\n", i, e.Kind, e.Text)
	}
	prompt.WriteString("\nNEW facts:\n")
	for i, n := range news {
		fmt.Fprintf(&prompt, "fact %d [%s]: %s\n", i, n.fact.Kind, n.fact.Text)
	}
	var ds decisions
	if err := ask(ctx, opt.Model, decideSystem, prompt.String(), "memory_operations", decideSchema, &ds); err != nil {
		return rep, err
	}

	// Validate every operation before writing anything; refuse the invalid ones.
	type op struct {
		d    decision
		old  *memory.Fact
		news *newFact
	}
	var ops []op
	usedID := map[int]bool{}
	refuse := func(d decision, why string) {
		rep.Actions = append(rep.Actions, Action{Event: memory.EventRefused, Text: d.Text, Reason: why,
			Refused: fmt.Sprintf("%s id=%s fact=%s", d.Event, intp(d.ID), intp(d.Fact))})
	}
	for _, d := range ds.Operations {
		var x op
		x.d = d
		if d.ID != nil {
			if *d.ID < 0 || *d.ID >= len(existing) {
				refuse(d, fmt.Sprintf("id %d was not shown (ids 0..%d)", *d.ID, len(existing)-1))
				continue
			}
			x.old = existing[*d.ID]
		}
		if d.Fact != nil {
			if *d.Fact < 0 || *d.Fact >= len(news) {
				refuse(d, fmt.Sprintf("fact %d does not exist (facts 0..%d)", *d.Fact, len(news)-1))
				continue
			}
			x.news = &news[*d.Fact]
		}
		switch memory.Event(d.Event) {
		case memory.EventAdd:
			if x.news == nil && strings.TrimSpace(d.Text) == "" {
				refuse(d, "ADD names no fact")
				continue
			}
		case memory.EventUpdate, memory.EventInvalidate:
			if x.old == nil {
				refuse(d, d.Event+" names no existing entry")
				continue
			}
			if usedID[*d.ID] {
				refuse(d, fmt.Sprintf("id %d changed twice in one answer", *d.ID))
				continue
			}
			if memory.Event(d.Event) == memory.EventUpdate && x.news == nil && strings.TrimSpace(d.Text) == "" {
				refuse(d, "UPDATE gives no new text")
				continue
			}
			if memory.Event(d.Event) == memory.EventInvalidate {
				if why := supported(x.old, in.Trace, news, x.news); why != "" {
					refuse(d, "the trace still supports this fact: "+why)
					continue
				}
			}
			usedID[*d.ID] = true
		case memory.EventNoop:
		default:
			refuse(d, fmt.Sprintf("unknown event %q", d.Event))
			continue
		}
		ops = append(ops, x)
	}

	for _, o := range ops {
		d := o.d
		by := in.Actor
		if by == "" {
			by = "model:" + opt.Model.Name()
		}
		switch memory.Event(d.Event) {
		case memory.EventAdd:
			f := &memory.Fact{Namespace: in.Namespace, Kind: memory.KindObservation, Provenance: in.Provenance}
			f.Provenance.Model = opt.Model.Name()
			if o.news != nil {
				g := *o.news.fact
				f = &g
			}
			if t := strings.TrimSpace(d.Text); t != "" {
				f.Text = t
			}
			a := Action{Event: memory.EventAdd, Text: f.Text, Reason: d.Reason}
			// A different fact close to one shown is kept beside it; the history says so.
			if _, other, why := closest(existing, f.Text, opt.NearDuplicate); other != nil {
				a.Resolution, a.Related = SideBySide, other.ID
				a.Reason = strings.TrimSpace(d.Reason + "; kept side by side with " + other.ID + " (" + textcut.Head(other.Text, 120) + "): " + why)
			}
			r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: f, Actor: by, Reason: a.Reason})
			if err != nil {
				return rep, err
			}
			a.ID = r.Fact.ID
			if r.Merged {
				a.Event, a.Resolution, a.Related = memory.EventMerge, Merged, r.Fact.ID
			}
			rep.Actions = append(rep.Actions, a)
		case memory.EventUpdate:
			text := strings.TrimSpace(d.Text)
			if text == "" {
				text = o.news.fact.Text
			}
			var ev []string
			if o.news != nil {
				ev = o.news.fact.Evidence
			}
			if diff := statement.Distinguish(o.old.Text, text); diff != "" {
				// The update changes what the fact says: the old fact is kept, superseded.
				a, err := supersede(ctx, s, in, opt, o.old, o.news, text, by, d.Reason, diff)
				if errors.Is(err, memory.ErrConflict) || errors.Is(err, memory.ErrNotActive) || errors.Is(err, memory.ErrInvalid) {
					refuse(d, err.Error())
					continue
				}
				if err != nil {
					return rep, err
				}
				rep.Actions = append(rep.Actions, a)
				continue
			}
			u, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: o.old.ID, Text: text, Evidence: ev, Actor: by, Reason: d.Reason})
			if errors.Is(err, memory.ErrConflict) || errors.Is(err, memory.ErrNotActive) || errors.Is(err, memory.ErrInvalid) {
				refuse(d, err.Error())
				continue
			}
			if err != nil {
				return rep, err
			}
			rep.Actions = append(rep.Actions, Action{Event: memory.EventUpdate, ID: u.ID, Text: u.Text, Old: o.old.Text, Reason: d.Reason, Resolution: Refined, Related: o.old.ID})
		case memory.EventInvalidate:
			reason := d.Reason
			if reason == "" {
				reason = "contradicted by a later trace"
			}
			if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: o.old.ID, Actor: by, Reason: reason}); err != nil {
				if errors.Is(err, memory.ErrNotActive) {
					refuse(d, err.Error())
					continue
				}
				return rep, err
			}
			rep.Actions = append(rep.Actions, Action{Event: memory.EventInvalidate, ID: o.old.ID, Old: o.old.Text, Reason: reason})
		case memory.EventNoop:
			a := Action{Event: memory.EventNoop, Reason: d.Reason}
			if o.old != nil {
				a.ID, a.Old = o.old.ID, o.old.Text
			}
			rep.Actions = append(rep.Actions, a)
		}
	}
	return rep, nil
}

// supersede writes an UPDATE that changes what old says as a new fact, and marks old
// superseded by it (kept, with the reason and what differs).
func supersede(ctx context.Context, s memory.Store, in *Input, opt *Options, old *memory.Fact, news *newFact, text, by, reason, diff string) (Action, error) {
	f := &memory.Fact{Namespace: in.Namespace, Kind: old.Kind, Tags: old.Tags, Provenance: in.Provenance}
	f.Provenance.Model = opt.Model.Name()
	if news != nil {
		g := *news.fact
		f = &g
	}
	f.ID, f.Text = "", text
	why := fmt.Sprintf("UPDATE of %s, which said %q: %s (%s)", old.ID, textcut.Head(old.Text, 200), orText(reason, "corrected"), diff)
	r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: f, Actor: by, Reason: why})
	if err != nil {
		return Action{}, err
	}
	if r.Fact.ID == old.ID {
		return Action{}, fmt.Errorf("%w: the update of %s is the same fact", memory.ErrConflict, old.ID)
	}
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: old.ID, SupersededBy: r.Fact.ID, Actor: by,
		Reason: fmt.Sprintf("superseded by %s: %s (%s)", r.Fact.ID, orText(reason, "corrected"), diff)}); err != nil {
		return Action{}, err
	}
	return Action{Event: memory.EventUpdate, ID: r.Fact.ID, Text: text, Old: old.Text, Reason: reason, Resolution: Superseded, Related: old.ID}, nil
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func intp(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// supported says why the trace still supports old (empty when it does not): its text or one of
// its evidence quotes appears in the trace, or a fact extracted from this very trace says the
// same thing (other than the one the DELETE is based on).
func supported(old *memory.Fact, trace string, news []newFact, basis *newFact) string {
	nt := statement.Normalize(trace)
	if n := statement.Normalize(old.Text); n != "" && strings.Contains(nt, n) {
		return "its text appears in the trace"
	}
	for _, e := range old.Evidence {
		if n := statement.Normalize(e); len(n) >= 12 && strings.Contains(nt, n) {
			return fmt.Sprintf("its evidence %q appears in the trace", e)
		}
	}
	for i := range news {
		if basis != nil && &news[i] == basis {
			continue
		}
		if Similarity(news[i].fact.Text, old.Text) >= 0.8 {
			return fmt.Sprintf("the trace restates it: %q", news[i].fact.Text)
		}
	}
	return ""
}
