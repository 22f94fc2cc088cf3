package consolidate_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/sqlite"
)

func store(t *testing.T) memory.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func add(t *testing.T, s memory.Store, text string, evidence ...string) *memory.Fact {
	t.Helper()
	r, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "lab", Text: text, Evidence: evidence}, Actor: "user:a"})
	if err != nil {
		t.Fatal(err)
	}
	return r.Fact
}

// snapshot is every entry and every change, to show that a refused answer changed nothing.
func snapshot(t *testing.T, s memory.Store) string {
	t.Helper()
	var b strings.Builder
	for r, err := range s.Search(t.Context(), &memory.Query{Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated, memory.StatusSuperseded}}) {
		if err != nil {
			t.Fatal(err)
		}
		f := r.Fact
		b.WriteString(f.ID + " " + string(f.Status) + " " + f.Text + " " + f.UpdatedAt.String() + "\n")
	}
	for c, err := range s.History(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(string(c.Event) + " " + c.EntryID + "\n")
	}
	return b.String()
}

func get(t *testing.T, s memory.Store, id string) *memory.Fact {
	t.Helper()
	e, err := s.Get(t.Context(), &memory.GetParams{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return e.Fact
}

func TestVerbatim(t *testing.T) {
	s := store(t)
	ctx := t.Context()
	old := add(t, s, "ode45 diverges on the stiff Robertson problem", "t=0.3 NaN")
	rep, err := consolidate.Consolidate(ctx, s, &consolidate.Input{Namespace: "lab", Actor: "user:b", Facts: []*memory.Fact{
		{Text: "ode45 diverges on the stiff Robertson problem!", Tags: []string{"octave"}},           // exact
		{Text: "ode45 diverges on the stiff Robertson problem quickly", Evidence: []string{"run 9"}}, // near
		{Text: "the balance needs calibrating daily", Kind: memory.KindWarning},                      // new
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []memory.Event
	for _, a := range rep.Actions {
		evs = append(evs, a.Event)
	}
	if want := []memory.Event{memory.EventMerge, memory.EventMerge, memory.EventAdd}; !slices.Equal(evs, want) {
		t.Fatalf("actions %v; want %v (%+v)", evs, want, rep.Actions)
	}
	f := get(t, s, old.ID)
	if f.Text != old.Text || !slices.Equal(f.Tags, []string{"octave"}) || !slices.Equal(f.Evidence, []string{"t=0.3 NaN", "run 9"}) {
		t.Errorf("merged fact: %+v", f)
	}
	n := 0
	for range s.Search(ctx, &memory.Query{Namespaces: []string{"lab"}}) {
		n++
	}
	if n != 2 {
		t.Errorf("%d facts; want 2", n)
	}
	// Deterministic: the same input on a fresh store gives the same actions.
	s2 := store(t)
	add(t, s2, "ode45 diverges on the stiff Robertson problem", "t=0.3 NaN")
	rep2, _ := consolidate.Consolidate(ctx, s2, &consolidate.Input{Namespace: "lab", Actor: "user:b", Facts: []*memory.Fact{
		{Text: "ode45 diverges on the stiff Robertson problem!", Tags: []string{"octave"}},
		{Text: "ode45 diverges on the stiff Robertson problem quickly", Evidence: []string{"run 9"}},
		{Text: "the balance needs calibrating daily", Kind: memory.KindWarning},
	}}, nil)
	strip := func(r *consolidate.Report) []memory.Event {
		var out []memory.Event
		for _, a := range r.Actions {
			out = append(out, a.Event)
		}
		return out
	}
	if diff := cmp.Diff(strip(rep), strip(rep2)); diff != "" {
		t.Errorf("not deterministic: %s", diff)
	}
	if _, err := consolidate.Consolidate(ctx, s, &consolidate.Input{Namespace: "lab", Infer: true, Trace: "x"}, nil); err == nil {
		t.Error("infer without a model succeeded")
	}
}

const trace = `user: tune the PID for the maglev plant, overshoot < 5%
agent: running step response with Kp=5
tool: overshoot 38%, oscillation at 3.1 Hz
agent: Kp=5 oscillates; trying Kp=2.5
tool: overshoot 3.8%, settling 0.41 s
agent: the sensor sample rate is 1 kHz`

func TestInfer(t *testing.T) {
	s := store(t)
	ctx := t.Context()
	f0 := add(t, s, "maglev PID with Kp=5 is stable")                                  // contradicted: may be deleted
	f1 := add(t, s, "maglev plant overshoot is 10% with Kp=2.5")                       // to update
	f2 := add(t, s, "the sensor sample rate is 1 kHz")                                 // restated by the trace: may not be deleted
	f3 := add(t, s, "maglev coil current is limited to 2 A", "coil current limit 2 A") // untouched
	srv := llmtest.NewServer(t,
		llmtest.JSON(map[string]any{"facts": []map[string]any{
			{"text": "maglev PID with Kp=5 oscillates (overshoot 38%)", "kind": "boundary", "tags": []string{"maglev", "pid"}, "evidence": "overshoot 38%, oscillation at 3.1 Hz"},
			{"text": "maglev PID with Kp=2.5 gives overshoot 3.8% and settling 0.41 s", "kind": "parameter", "tags": []string{"maglev"}, "evidence": "overshoot 3.8%, settling 0.41 s"},
			{"text": "the maglev sensor samples at 1 kHz", "kind": "reference", "tags": []string{}, "evidence": "the sensor sample rate is 1 kHz"},
		}, "entities": []map[string]any{
			{"name": "maglev plant", "kind": "name", "aliases": []string{"magnetic levitation rig"}},
			{"name": "x", "kind": "colour", "aliases": []string{}},
		}}),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			// The model sees small integer ids, never the store's.
			user := c.Request.Messages[0].Content
			for _, f := range []*memory.Fact{f0, f1, f2, f3} {
				if strings.Contains(user, f.ID) {
					t.Errorf("the model was shown a real id: %s", user)
				}
			}
			if !strings.Contains(user, "id 0") || c.Request.Output == nil {
				t.Errorf("decision request: %s", user)
			}
			// Map ids by text, as a model reading the prompt would.
			id := func(text string) int {
				for line := range strings.Lines(user) {
					var n int
					if strings.Contains(line, text) && strings.HasPrefix(line, "id ") {
						for _, r := range line[3:] {
							if r < '0' || r > '9' {
								break
							}
							n = n*10 + int(r-'0')
						}
						return n
					}
				}
				t.Fatalf("%q not shown: %s", text, user)
				return -1
			}
			return llmtest.JSON(map[string]any{"operations": []map[string]any{
				{"event": "DELETE", "id": id("Kp=5 is stable"), "fact": 0, "text": "", "reason": "Kp=5 oscillates"},
				{"event": "ADD", "id": nil, "fact": 0, "text": "", "reason": "new boundary"},
				{"event": "UPDATE", "id": id("overshoot is 10%"), "fact": 1, "text": "", "reason": "measured again"},
				{"event": "DELETE", "id": id("sample rate"), "fact": nil, "text": "", "reason": "looks redundant"},
				{"event": "NOOP", "id": id("sample rate"), "fact": 2, "text": "", "reason": "known"},
				{"event": "UPDATE", "id": 42, "fact": 1, "text": "invented", "reason": "made up"},
				{"event": "DELETE", "id": -1, "fact": nil, "text": "", "reason": "made up"},
				{"event": "ADD", "id": nil, "fact": 9, "text": "", "reason": "no such fact"},
				{"event": "MERGE", "id": 0, "fact": 0, "text": "", "reason": "unknown event"},
			}})
		}},
	)
	m := openai.New("fake", &openai.Options{Provider: "test", BaseURL: srv.OpenAIBaseURL()})
	rep, err := consolidate.Consolidate(ctx, s, &consolidate.Input{Namespace: "lab", Trace: trace, Infer: true,
		Provenance: memory.Provenance{Operations: []string{"op-9"}, Session: "sess-2"}}, &consolidate.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	// The entity the model named is in the graph, with its alias; the one of no known kind is refused.
	var ents []string
	for e, err := range s.(memory.Graph).Entities(ctx, &memory.EntityQuery{Names: []string{"magnetic levitation rig"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e.ID+" "+e.Source)
	}
	if !slices.Equal(ents, []string{"name:maglev plant model:test:fake"}) || !slices.Equal(rep.Entities, []string{"name:maglev plant"}) {
		t.Errorf("entities: %v, report %v", ents, rep.Entities)
	}
	if rep.Count(memory.EventAdd) != 1 || rep.Count(memory.EventUpdate) != 1 || rep.Count(memory.EventInvalidate) != 1 ||
		rep.Count(memory.EventNoop) != 1 || rep.Count(memory.EventRefused) != 6 {
		t.Errorf("report: %+v", rep.Actions)
	}
	// DELETE invalidated and kept f0, with the reason and the model as actor.
	if f := get(t, s, f0.ID); f.Status != memory.StatusInvalidated || f.Reason != "Kp=5 oscillates" || f.Text != f0.Text {
		t.Errorf("deleted fact: %+v", f)
	}
	// The DELETE of a fact the trace still supports was refused.
	if f := get(t, s, f2.ID); f.Status != memory.StatusActive || f.Text != f2.Text {
		t.Errorf("supported fact: %+v", f)
	}
	// The UPDATE changed what f1 says (its numbers): f1 is kept, superseded by a new fact.
	var upd consolidate.Action
	for _, a := range rep.Actions {
		if a.Event == memory.EventUpdate {
			upd = a
		}
	}
	if upd.Resolution != consolidate.Superseded || upd.Related != f1.ID || upd.ID == f1.ID {
		t.Errorf("update action: %+v", upd)
	}
	if f := get(t, s, f1.ID); f.Status != memory.StatusSuperseded || f.SupersededBy != upd.ID || f.Text != f1.Text || !strings.Contains(f.Reason, "different") {
		t.Errorf("superseded fact: %+v", f)
	}
	if f := get(t, s, upd.ID); f.Text != "maglev PID with Kp=2.5 gives overshoot 3.8% and settling 0.41 s" || !slices.Contains(f.Evidence, "overshoot 3.8%, settling 0.41 s") || f.Status != memory.StatusActive {
		t.Errorf("updated fact: %+v", f)
	}
	if f := get(t, s, f3.ID); f.Text != f3.Text || f.Status != memory.StatusActive || !f.UpdatedAt.Equal(f3.UpdatedAt) {
		t.Errorf("untouched fact changed: %+v", f)
	}
	var added *memory.Fact
	for _, a := range rep.Actions {
		if a.Event == memory.EventAdd && a.Resolution == "" {
			added = get(t, s, a.ID)
		}
	}
	if added == nil || added.Kind != memory.KindBoundary || added.Provenance.Model != "test:fake" || !slices.Equal(added.Provenance.Operations, []string{"op-9"}) || added.Evidence[0] != "overshoot 38%, oscillation at 3.1 Hz" {
		t.Errorf("added fact: %+v", added)
	}
	// Every change is in the history, with old and new text and the model as actor.
	var h []*memory.Change
	for c, err := range s.History(ctx, &memory.HistoryParams{Namespace: "lab", After: 4}) {
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, c)
	}
	var evs []memory.Event
	for _, c := range h {
		evs = append(evs, c.Event)
		if c.Actor != "model:test:fake" {
			t.Errorf("actor %q", c.Actor)
		}
	}
	if want := []memory.Event{memory.EventInvalidate, memory.EventAdd, memory.EventAdd, memory.EventSupersede}; !slices.Equal(evs, want) {
		t.Errorf("history %v; want %v", evs, want)
	}
	if len(h) == 4 && (h[2].New != upd.Text || !strings.Contains(h[2].Reason, f1.Text) || h[3].Old != f1.Text || h[3].EntryID != f1.ID) {
		t.Errorf("update changes: %+v %+v", h[2], h[3])
	}
	// The extraction request carried the trace.
	if calls := srv.Calls(); len(calls) != 2 || !strings.Contains(calls[0].Request.Messages[0].Content, "oscillation at 3.1 Hz") {
		t.Errorf("calls: %d", len(calls))
	}
}

func TestInferBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns []llmtest.Turn
		want  error
	}{
		{"extraction not JSON", []llmtest.Turn{llmtest.Text("Sure! Here are the facts: Kp=5 oscillates.")}, consolidate.ErrModelOutput},
		{"extraction wrong shape", []llmtest.Turn{llmtest.Text(`{"facts": "Kp=5 oscillates"}`)}, consolidate.ErrModelOutput},
		{"decision truncated", []llmtest.Turn{
			llmtest.JSON(map[string]any{"facts": []map[string]any{{"text": "Kp=5 oscillates", "kind": "boundary", "tags": []string{}, "evidence": "38%"}}}),
			llmtest.Text(`{"operations": [{"event": "DELETE", "id": 0, `),
		}, consolidate.ErrModelOutput},
		{"decision extra field", []llmtest.Turn{
			llmtest.JSON(map[string]any{"facts": []map[string]any{{"text": "Kp=5 oscillates", "kind": "boundary", "tags": []string{}, "evidence": "38%"}}}),
			llmtest.Text(`{"operations": [], "delete_all": true}`),
		}, consolidate.ErrModelOutput},
		{"provider error", []llmtest.Turn{llmtest.Fail(400, "bad request")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store(t)
			add(t, s, "maglev PID with Kp=5 is stable")
			add(t, s, "the coil current is limited to 2 A")
			before := snapshot(t, s)
			srv := llmtest.NewServer(t, tc.turns...)
			m := openai.New("fake", &openai.Options{Provider: "test", BaseURL: srv.OpenAIBaseURL()})
			_, err := consolidate.Consolidate(t.Context(), s, &consolidate.Input{Namespace: "lab", Trace: trace, Infer: true}, &consolidate.Options{Model: m})
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v; want %v", err, tc.want)
			}
			if after := snapshot(t, s); after != before {
				t.Errorf("a bad answer changed memory:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
