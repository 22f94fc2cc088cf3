package memorytest

import (
	"slices"
	"testing"
	"time"

	"github.com/labmate/labmate/memory"
)

// RunGraph tests a store's entity graph: entries are linked to the entities they mention,
// retrieval is expanded by them ("Cu" finds "copper" and "fcc Cu"), aliases added by a person
// or a model take part, and invalidation — of an entity, a relation, an entry — keeps
// everything, with validity times.
func RunGraph(t *testing.T, open func(t *testing.T) memory.Store) {
	s := open(t)
	t.Cleanup(func() { s.Close() })
	g, ok := s.(memory.Graph)
	if !ok {
		t.Fatal("the store has no entity graph")
	}
	ctx := t.Context()
	copper := add(t, s, "g", "Annealed copper wire has a resistivity of 1.72e-8 ohm m at 20 °C")
	fcc := add(t, s, "g", "The fcc Cu lattice constant from the EAM Cu_u3 potential is 3.615 Angstrom")
	other := add(t, s, "g", "The aluminium SCF converges with mixing_beta 0.3")
	add(t, s, "g", "Quantum ESPRESSO 7.2 needs ecutwfc 40 Ry for Si")

	ids := func(q *memory.Query) []string {
		var out []string
		for _, r := range search(t, s, q) {
			out = append(out, r.ID())
		}
		return out
	}
	// "Cu" finds copper (an alias) and fcc Cu; "copper" finds fcc Cu; "fcc copper" finds both.
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"Cu", []string{copper.ID, fcc.ID}},
		{"copper", []string{copper.ID, fcc.ID}},
		{"fcc copper", []string{copper.ID, fcc.ID}},
		{"aluminum", []string{other.ID}},
		{"pw.x cutoff", nil}, // filled below
	} {
		got := ids(&memory.Query{Text: c.query, Namespaces: []string{"g"}})
		if c.want == nil {
			if len(got) == 0 {
				t.Errorf("%q (an alias of Quantum ESPRESSO) found nothing", c.query)
			}
			continue
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q found %v; want %s among them", c.query, got, w)
			}
		}
		if slices.Contains(got, other.ID) && c.query != "aluminum" {
			t.Errorf("%q found the aluminium fact", c.query)
		}
	}
	// Entities of an entry, and the phase's relation to its material.
	var names []string
	for e, err := range g.Entities(ctx, &memory.EntityQuery{Entry: fcc.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name)
	}
	for _, want := range []string{"Cu", "fcc Cu", "fcc", "EAM", "Cu_u3", "lattice constant"} {
		if !slices.Contains(names, want) {
			t.Errorf("the fcc fact is linked to %v; want %s", names, want)
		}
	}
	rels, err := g.Relations(ctx, "material:fcc cu")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rels, func(r memory.Relation) bool { return r.Rel == memory.RelPhaseOf && r.To == "material:cu" }) {
		t.Errorf("relations of fcc Cu: %+v", rels)
	}
	var vers []string
	for e, err := range g.Entities(ctx, &memory.EntityQuery{Names: []string{"qe"}, Kinds: []memory.EntityKind{memory.EntitySoftware}}) {
		if err != nil {
			t.Fatal(err)
		}
		vers = append(vers, e.Name)
	}
	if !slices.Equal(vers, []string{"Quantum ESPRESSO"}) {
		t.Errorf("entities named qe: %v", vers)
	}
	// An alias a person adds expands retrieval.
	if got := ids(&memory.Query{Text: "Mishin1999", Namespaces: []string{"g"}}); slices.Contains(got, fcc.ID) {
		t.Fatalf("found before the alias existed: %v", got)
	}
	if _, err := g.PutEntity(ctx, &memory.PutEntityParams{Entity: &memory.Entity{Name: "Cu_u3", Kind: memory.EntityName, Aliases: []string{"Mishin1999"}}, Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(&memory.Query{Text: "Mishin1999", Namespaces: []string{"g"}}); !slices.Contains(got, fcc.ID) {
		t.Errorf("the alias does not expand retrieval: %v", got)
	}
	// Invalidating the entity: kept, no longer expanding after its invalid_at; a query valid
	// before it still expands.
	before := time.Now()
	time.Sleep(5 * time.Millisecond)
	if err := g.InvalidateEntity(ctx, &memory.InvalidateEntityParams{ID: "name:cu_u3", Reason: "a wrong alias", Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(&memory.Query{Text: "Mishin1999", Namespaces: []string{"g"}}); slices.Contains(got, fcc.ID) {
		t.Errorf("an invalidated entity still expands retrieval: %v", got)
	}
	var kept *memory.Entity
	for e, err := range g.Entities(ctx, &memory.EntityQuery{Names: []string{"cu_u3"}, Status: []memory.Status{memory.StatusInvalidated}}) {
		if err != nil {
			t.Fatal(err)
		}
		kept = e
	}
	if kept == nil || kept.Reason != "a wrong alias" || kept.InvalidAt.Before(before) || !slices.Contains(kept.Aliases, "mishin1999") {
		t.Errorf("the invalidated entity: %+v", kept)
	}
	if err := g.InvalidateEntity(ctx, &memory.InvalidateEntityParams{ID: "name:cu_u3", Reason: "again"}); err == nil {
		t.Error("invalidating twice succeeded")
	}
	// A relation is invalidated with a time; a query valid before sees it.
	if err := g.InvalidateEntity(ctx, &memory.InvalidateEntityParams{ID: "material:fcc cu", Rel: memory.RelPhaseOf, To: "material:cu", Reason: "test", At: before}); err != nil {
		t.Fatal(err)
	}
	rels, _ = g.Relations(ctx, "material:fcc cu")
	if i := slices.IndexFunc(rels, func(r memory.Relation) bool { return r.Rel == memory.RelPhaseOf }); i < 0 || rels[i].InvalidAt.IsZero() {
		t.Errorf("the invalidated relation: %+v", rels)
	}
	if err := g.Relate(ctx, &memory.RelateParams{Relation: &memory.Relation{From: "material:fcc cu", Rel: memory.RelPhaseOf, To: "material:cu"}, Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	rels, _ = g.Relations(ctx, "material:fcc cu")
	if i := slices.IndexFunc(rels, func(r memory.Relation) bool { return r.Rel == memory.RelPhaseOf }); i < 0 || !rels[i].InvalidAt.IsZero() || rels[i].Source != "user:ann" {
		t.Errorf("the relation made valid again: %+v", rels)
	}
	if err := g.Relate(ctx, &memory.RelateParams{Relation: &memory.Relation{From: "material:nope", Rel: "x", To: "material:cu"}}); err == nil {
		t.Error("a relation from an unknown entity was stored")
	}
	// An invalidated entry's links are kept, with their invalid_at: it no longer counts for the
	// entity, and a new fact is linked at once.
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: copper.ID, Reason: "the wire was hard-drawn"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for e, err := range g.Entities(ctx, &memory.EntityQuery{Entry: copper.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		_ = e
	}
	if n != 0 {
		t.Errorf("an invalidated fact still has %d valid links", n)
	}
	if _, err := g.PutEntity(ctx, &memory.PutEntityParams{Entity: &memory.Entity{Name: "x", Kind: "colour"}}); err == nil {
		t.Error("an entity of an unknown kind was stored")
	}
}
