package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// The entity graph: entities (one row each, the entity as JSON in data), their aliases (one row
// per normalised alias), links from entities to the entries that mention them, and relations
// between entities. Every entry written is linked to the entities statement.Extract finds in it; a
// link of an entry that stops mentioning an entity, or stops being active, gets its invalid_at
// (it is kept). Entities and relations are invalidated, never deleted.

var _ memory.Graph = (*Store)(nil)

// graphText is what an entry's entities are extracted from: a fact's text and tags; a skill's
// name, description, tags and the prose of its body (not its code, whose variable names are not
// entities).
func (r row) graphText() string {
	if sk := r.skill; sk != nil {
		var b strings.Builder
		b.WriteString(strings.ReplaceAll(sk.Name, "-", " ") + ". " + sk.Description + "\n")
		for _, t := range sk.Tags {
			b.WriteString(t + ". ")
		}
		fence := false
		for line := range strings.Lines(sk.Body) {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
				continue
			}
			if !fence {
				b.WriteString(line)
			}
		}
		return b.String()
	}
	text := r.fact.Text
	for _, t := range r.fact.Tags {
		text += ". " + t
	}
	return text
}

func (r row) active() bool {
	if r.skill != nil {
		return r.skill.Status == memory.StatusActive || r.skill.Status == ""
	}
	return r.fact.Status == memory.StatusActive
}

// aliasKey is how aliases are stored and looked up: statement.Words.
func aliasKey(alias string) string { return statement.Words(alias) }

// ensureEntity stores a mentioned entity unless it exists (it is then left as it is: a person's
// invalidation stands).
func (s *Store) ensureEntity(ctx context.Context, tx *sql.Tx, m memory.Mention, now time.Time) error {
	e := &memory.Entity{ID: m.ID, Name: m.Name, Kind: m.Kind, Aliases: m.Aliases, Status: memory.StatusActive,
		Source: "extracted", ValidFrom: now, CreatedAt: now, UpdatedAt: now}
	if len(e.Aliases) == 0 {
		e.Aliases = []string{strings.ToLower(m.Name)}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	res, err := s.exec(ctx, tx, `INSERT INTO entities (id, kind, name, status, data, valid_from, invalid_at, updated) VALUES (?, ?, ?, ?, ?, ?, NULL, ?) ON CONFLICT (id) DO NOTHING`,
		e.ID, string(e.Kind), e.Name, string(e.Status), data, nanos(now), nanos(now))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	return s.putAliases(ctx, tx, e)
}

func (s *Store) putAliases(ctx context.Context, tx *sql.Tx, e *memory.Entity) error {
	keys := []string{aliasKey(e.Name)}
	for _, a := range e.Aliases {
		keys = append(keys, aliasKey(a))
	}
	for _, k := range uniq(keys) {
		if k == "" {
			continue
		}
		if _, err := s.exec(ctx, tx, "INSERT INTO entity_aliases (alias, entity_id) VALUES (?, ?) ON CONFLICT DO NOTHING", k, e.ID); err != nil {
			return err
		}
	}
	return nil
}

// link keeps an entry's links in step with its text and status.
func (s *Store) link(ctx context.Context, tx *sql.Tx, r row, insert bool, now time.Time) error {
	mentions, rels := statement.Extract(r.graphText())
	want := map[string]bool{}
	for _, m := range mentions {
		want[m.ID] = true
	}
	have := map[string]bool{} // entity id → the link is valid now
	if !insert {
		rows, err := tx.QueryContext(ctx, s.q("SELECT entity_id, invalid_at FROM entity_links WHERE entry_id = ?"), r.id())
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			var inv sql.NullInt64
			if err := rows.Scan(&id, &inv); err != nil {
				rows.Close()
				return err
			}
			have[id] = !inv.Valid
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	active := r.active()
	for _, m := range mentions {
		valid, exists := have[m.ID]
		switch {
		case !exists:
			if err := s.ensureEntity(ctx, tx, m, now); err != nil {
				return err
			}
			var inv any
			if !active {
				inv = nanos(now)
			}
			if _, err := s.exec(ctx, tx, "INSERT INTO entity_links (entity_id, entry_id, valid_from, invalid_at) VALUES (?, ?, ?, ?)", m.ID, r.id(), nanos(now), inv); err != nil {
				return err
			}
		case valid && !active:
			if _, err := s.exec(ctx, tx, "UPDATE entity_links SET invalid_at = ? WHERE entity_id = ? AND entry_id = ?", nanos(now), m.ID, r.id()); err != nil {
				return err
			}
		case !valid && active:
			if _, err := s.exec(ctx, tx, "UPDATE entity_links SET invalid_at = NULL, valid_from = ? WHERE entity_id = ? AND entry_id = ?", nanos(now), m.ID, r.id()); err != nil {
				return err
			}
		}
	}
	for id, valid := range have {
		if valid && !want[id] {
			if _, err := s.exec(ctx, tx, "UPDATE entity_links SET invalid_at = ? WHERE entity_id = ? AND entry_id = ?", nanos(now), id, r.id()); err != nil {
				return err
			}
		}
	}
	for _, rel := range rels {
		if _, err := s.exec(ctx, tx, "INSERT INTO relations (src, rel, dst, source, valid_from, invalid_at) VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING",
			rel.From, rel.Rel, rel.To, "extracted", nanos(now)); err != nil {
			return err
		}
	}
	return nil
}

// maxExpansion bounds the terms a query gains from its entities.
const maxExpansion = 16

// maxGrams bounds the words and phrases of a query looked up as entity aliases.
const maxGrams = 200

var expandQuery = `SELECT e.data FROM entities e WHERE e.status = 'active' AND (e.valid_from IS NULL OR e.valid_from <= ?) AND (e.invalid_at IS NULL OR e.invalid_at > ?)
	AND (e.id IN (SELECT entity_id FROM entity_aliases WHERE alias IN (` + marks(maxGrams) + `))
	OR e.id IN (SELECT r.dst FROM relations r WHERE r.rel IN ('` + memory.RelPhaseOf + `', '` + memory.RelVersionOf + `') AND r.valid_from <= ? AND (r.invalid_at IS NULL OR r.invalid_at > ?)
		AND r.src IN (SELECT entity_id FROM entity_aliases WHERE alias IN (` + marks(maxGrams) + `))))`

// expand returns the aliases of the entities a query names (and of the materials and software
// its phases and versions belong to), as search terms the query does not already have: "Cu"
// gains "copper", "copper" gains "cu" (which finds "fcc Cu"), "fcc Cu" gains "copper". Only
// entities active and valid at t count.
func (s *Store) expand(ctx context.Context, text string, terms []string, t time.Time) ([]string, error) {
	words := strings.Fields(statement.Words(text))
	var grams []any
	seen := map[string]bool{}
	for n := 1; n <= 3; n++ {
		for i := 0; i+n <= len(words); i++ {
			g := strings.Join(words[i:i+n], " ")
			if !seen[g] {
				seen[g] = true
				grams = append(grams, g)
			}
		}
	}
	if len(grams) == 0 {
		return nil, nil
	}
	// Always maxGrams placeholders (NULL matches no alias): one statement, prepared once.
	grams = grams[:min(len(grams), maxGrams)]
	for len(grams) < maxGrams {
		grams = append(grams, nil)
	}
	at := t.UnixNano()
	args := append(append(append([]any{at, at}, grams...), at, at), grams...)
	st, err := s.stmt(ctx, expandQuery)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, t := range terms {
		have[t] = true
	}
	var out []string
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			rows.Close()
			return nil, err
		}
		var e memory.Entity
		if err := json.Unmarshal(data, &e); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decoding a stored entity: %w", err)
		}
		for _, a := range append([]string{e.Name}, e.Aliases...) {
			k := aliasKey(a)
			if k != "" && !have[k] && len(out) < maxExpansion {
				have[k] = true
				out = append(out, k)
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

func decodeEntity(data []byte) (*memory.Entity, error) {
	var e memory.Entity
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("decoding a stored entity: %w", err)
	}
	return &e, nil
}

// Entities implements memory.Graph.
func (s *Store) Entities(ctx context.Context, q *memory.EntityQuery) iter.Seq2[*memory.Entity, error] {
	return func(yield func(*memory.Entity, error) bool) {
		if s.closed.Load() {
			yield(nil, memory.ErrClosed)
			return
		}
		if q == nil {
			q = &memory.EntityQuery{}
		}
		var conds []string
		var args []any
		if len(q.Names) > 0 {
			var keys []any
			for _, n := range q.Names {
				keys = append(keys, aliasKey(n))
			}
			conds = append(conds, "e.id IN (SELECT entity_id FROM entity_aliases WHERE alias IN ("+marks(len(keys))+"))")
			args = append(args, keys...)
		}
		if len(q.Kinds) > 0 {
			conds = append(conds, "e.kind IN ("+marks(len(q.Kinds))+")")
			for _, k := range q.Kinds {
				args = append(args, string(k))
			}
		}
		if q.Entry != "" {
			conds = append(conds, "e.id IN (SELECT entity_id FROM entity_links WHERE entry_id = ? AND invalid_at IS NULL)")
			args = append(args, q.Entry)
		}
		status := q.Status
		if len(status) == 0 {
			status = []memory.Status{memory.StatusActive}
		}
		conds = append(conds, "e.status IN ("+marks(len(status))+")")
		for _, st := range status {
			args = append(args, string(st))
		}
		query := "SELECT e.data FROM entities e WHERE " + strings.Join(conds, " AND ") + " ORDER BY e.id"
		if q.Limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", q.Limit)
		}
		rows, err := s.db.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			yield(nil, fmt.Errorf("memory: entities: %w", err))
			return
		}
		var out []*memory.Entity
		for rows.Next() {
			var data []byte
			if err := rows.Scan(&data); err != nil {
				rows.Close()
				yield(nil, err)
				return
			}
			e, err := decodeEntity(data)
			if err != nil {
				rows.Close()
				yield(nil, err)
				return
			}
			out = append(out, e)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			yield(nil, err)
			return
		}
		for _, e := range out {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Relations implements memory.Graph: the relations from or to an entity, valid or not.
func (s *Store) Relations(ctx context.Context, id string) ([]memory.Relation, error) {
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT src, rel, dst, source, valid_from, invalid_at FROM relations WHERE src = ? OR dst = ? ORDER BY src, rel, dst"), id, id)
	if err != nil {
		return nil, fmt.Errorf("memory: relations: %w", err)
	}
	var out []memory.Relation
	for rows.Next() {
		var r memory.Relation
		var from int64
		var inv sql.NullInt64
		if err := rows.Scan(&r.From, &r.Rel, &r.To, &r.Source, &from, &inv); err != nil {
			rows.Close()
			return nil, err
		}
		r.ValidFrom = time.Unix(0, from).UTC()
		if inv.Valid {
			r.InvalidAt = time.Unix(0, inv.Int64).UTC()
		}
		out = append(out, r)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

func (s *Store) getEntity(ctx context.Context, q queryer, id string) (*memory.Entity, error) {
	var data []byte
	err := s.queryRow(ctx, q, "SELECT data FROM entities WHERE id = ?", id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: entity %q", memory.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	return decodeEntity(data)
}

func (s *Store) writeEntity(ctx context.Context, tx *sql.Tx, e *memory.Entity, insert bool) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if insert {
		_, err = s.exec(ctx, tx, `INSERT INTO entities (id, kind, name, status, data, valid_from, invalid_at, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, string(e.Kind), e.Name, string(e.Status), data, nanos(e.ValidFrom), nanos(e.InvalidAt), nanos(e.UpdatedAt))
	} else {
		_, err = s.exec(ctx, tx, `UPDATE entities SET kind = ?, name = ?, status = ?, data = ?, valid_from = ?, invalid_at = ?, updated = ? WHERE id = ?`,
			string(e.Kind), e.Name, string(e.Status), data, nanos(e.ValidFrom), nanos(e.InvalidAt), nanos(e.UpdatedAt), e.ID)
	}
	if err != nil {
		return err
	}
	return s.putAliases(ctx, tx, e)
}

// PutEntity implements memory.Graph: a new entity, or more aliases for one that exists.
func (s *Store) PutEntity(ctx context.Context, p *memory.PutEntityParams) (*memory.Entity, error) {
	if p == nil || p.Entity == nil {
		return nil, fmt.Errorf("%w: PutEntity without an entity", memory.ErrInvalid)
	}
	in := *p.Entity
	if in.ID == "" {
		in.ID = memory.EntityID(in.Kind, in.Name)
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var out *memory.Entity
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		cur, err := s.getEntity(ctx, tx, in.ID)
		if errors.Is(err, memory.ErrNotFound) {
			e := in
			e.Aliases = lowerAll(e.Aliases)
			e.Status, e.Source, e.CreatedAt, e.UpdatedAt = memory.StatusActive, orDefault(e.Source, p.Actor), now, now
			if e.ValidFrom.IsZero() {
				e.ValidFrom = now
			}
			e.InvalidAt = time.Time{}
			out = &e
			if err := s.writeEntity(ctx, tx, &e, true); err != nil {
				return err
			}
			return s.log(ctx, tx, &memory.Change{EntryID: e.ID, Event: memory.EventAdd, New: e.Name + " (" + strings.Join(e.Aliases, ", ") + ")", Actor: p.Actor, Time: now})
		}
		if err != nil {
			return err
		}
		old := strings.Join(cur.Aliases, ", ")
		cur.Aliases = union(cur.Aliases, lowerAll(in.Aliases))
		if strings.Join(cur.Aliases, ", ") == old {
			out = cur
			return nil
		}
		cur.UpdatedAt = now
		out = cur
		if err := s.writeEntity(ctx, tx, cur, false); err != nil {
			return err
		}
		return s.log(ctx, tx, &memory.Change{EntryID: cur.ID, Event: memory.EventUpdate, Old: old, New: strings.Join(cur.Aliases, ", "), Actor: p.Actor, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("storing entity %s: %w", in.ID, err)
	}
	return out, nil
}

func lowerAll(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = strings.ToLower(strings.TrimSpace(x)); x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Relate implements memory.Graph.
func (s *Store) Relate(ctx context.Context, p *memory.RelateParams) error {
	if p == nil || p.Relation == nil || p.Relation.From == "" || p.Relation.To == "" || strings.TrimSpace(p.Relation.Rel) == "" {
		return fmt.Errorf("%w: a relation needs from, rel and to", memory.ErrInvalid)
	}
	r := *p.Relation
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, id := range []string{r.From, r.To} {
			if _, err := s.getEntity(ctx, tx, id); err != nil {
				return err
			}
		}
		now := s.stamp()
		if r.ValidFrom.IsZero() {
			r.ValidFrom = now
		}
		res, err := s.exec(ctx, tx, "UPDATE relations SET invalid_at = NULL, valid_from = ?, source = ? WHERE src = ? AND rel = ? AND dst = ? AND invalid_at IS NOT NULL",
			nanos(r.ValidFrom), orDefault(r.Source, p.Actor), r.From, r.Rel, r.To)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := s.exec(ctx, tx, "INSERT INTO relations (src, rel, dst, source, valid_from, invalid_at) VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING",
				r.From, r.Rel, r.To, orDefault(r.Source, p.Actor), nanos(r.ValidFrom)); err != nil {
				return err
			}
		}
		return s.log(ctx, tx, &memory.Change{EntryID: r.From, Event: memory.EventAdd, New: r.Rel + " " + r.To, Actor: p.Actor, Time: now})
	})
}

// InvalidateEntity implements memory.Graph.
func (s *Store) InvalidateEntity(ctx context.Context, p *memory.InvalidateEntityParams) error {
	if p == nil || p.ID == "" {
		return fmt.Errorf("%w: InvalidateEntity without an id", memory.ErrInvalid)
	}
	if strings.TrimSpace(p.Reason) == "" {
		return fmt.Errorf("%w: invalidating %s: a reason is required", memory.ErrInvalid, p.ID)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		at := p.At.UTC()
		if p.At.IsZero() {
			at = now
		}
		if p.Rel != "" {
			res, err := s.exec(ctx, tx, "UPDATE relations SET invalid_at = ? WHERE src = ? AND rel = ? AND dst = ? AND invalid_at IS NULL", nanos(at), p.ID, p.Rel, p.To)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("%w: no valid relation %s %s %s", memory.ErrNotFound, p.ID, p.Rel, p.To)
			}
			return s.log(ctx, tx, &memory.Change{EntryID: p.ID, Event: memory.EventInvalidate, Old: p.Rel + " " + p.To, Actor: p.Actor, Reason: p.Reason, Time: now})
		}
		e, err := s.getEntity(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if e.Status != memory.StatusActive {
			return fmt.Errorf("%w: entity %s is already %s", memory.ErrNotActive, e.ID, e.Status)
		}
		e.Status, e.Reason, e.InvalidAt, e.UpdatedAt = memory.StatusInvalidated, p.Reason, at, now
		if err := s.writeEntity(ctx, tx, e, false); err != nil {
			return err
		}
		return s.log(ctx, tx, &memory.Change{EntryID: e.ID, Event: memory.EventInvalidate, Old: e.Name, Actor: p.Actor, Reason: p.Reason, Time: now})
	})
}

// importGraph writes entities and relations verbatim (Import).
func (s *Store) importGraph(ctx context.Context, tx *sql.Tx, ents []*memory.Entity, rels []memory.Relation) error {
	for _, e := range ents {
		_, err := s.getEntity(ctx, tx, e.ID)
		exists := err == nil
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			return err
		}
		if err := s.writeEntity(ctx, tx, e, !exists); err != nil {
			return err
		}
	}
	for _, r := range rels {
		if _, err := s.exec(ctx, tx, "DELETE FROM relations WHERE src = ? AND rel = ? AND dst = ?", r.From, r.Rel, r.To); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, "INSERT INTO relations (src, rel, dst, source, valid_from, invalid_at) VALUES (?, ?, ?, ?, ?, ?)",
			r.From, r.Rel, r.To, r.Source, nanos(r.ValidFrom), nanos(r.InvalidAt)); err != nil {
			return err
		}
	}
	return nil
}

// GraphExport is what the entries do not imply: entities and relations not made by extraction,
// or invalidated, or with aliases extraction does not know. Export writes them beside the entries.
func (s *Store) GraphExport(ctx context.Context) ([]*memory.Entity, []memory.Relation, error) {
	var ents []*memory.Entity
	for e, err := range s.Entities(ctx, &memory.EntityQuery{Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated}}) {
		if err != nil {
			return nil, nil, err
		}
		if e.Source != "extracted" || e.Status != memory.StatusActive {
			ents = append(ents, e)
		}
	}
	rows, err := s.db.QueryContext(ctx, "SELECT src, rel, dst, source, valid_from, invalid_at FROM relations WHERE source <> 'extracted' OR invalid_at IS NOT NULL ORDER BY src, rel, dst")
	if err != nil {
		return nil, nil, err
	}
	var rels []memory.Relation
	for rows.Next() {
		var r memory.Relation
		var from int64
		var inv sql.NullInt64
		if err := rows.Scan(&r.From, &r.Rel, &r.To, &r.Source, &from, &inv); err != nil {
			rows.Close()
			return nil, nil, err
		}
		r.ValidFrom = time.Unix(0, from).UTC()
		if inv.Valid {
			r.InvalidAt = time.Unix(0, inv.Int64).UTC()
		}
		rels = append(rels, r)
	}
	return ents, rels, errors.Join(rows.Err(), rows.Close())
}
