package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// History implements memory.Store.
func (s *Store) History(ctx context.Context, p *memory.HistoryParams) iter.Seq2[*memory.Change, error] {
	return func(yield func(*memory.Change, error) bool) {
		if s.closed.Load() {
			yield(nil, memory.ErrClosed)
			return
		}
		if p == nil {
			p = &memory.HistoryParams{}
		}
		var conds []string
		args := []any{p.After}
		conds = append(conds, "seq > ?")
		if p.EntryID != "" {
			conds = append(conds, "entry_id = ?")
			args = append(args, p.EntryID)
		}
		if p.Namespace != "" {
			conds = append(conds, "(namespace = ? OR substr(namespace, 1, ?) = ?)")
			args = append(args, p.Namespace, len(p.Namespace)+1, p.Namespace+"/")
		}
		query := "SELECT seq, entry_id, namespace, event, old, new, actor, reason, time FROM history WHERE " + strings.Join(conds, " AND ") + " ORDER BY seq"
		if p.Limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", p.Limit)
		}
		rows, err := s.db.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			yield(nil, fmt.Errorf("memory: history: %w", err))
			return
		}
		var out []*memory.Change
		for rows.Next() {
			var c memory.Change
			var t int64
			var event string
			if err := rows.Scan(&c.Seq, &c.EntryID, &c.Namespace, &event, &c.Old, &c.New, &c.Actor, &c.Reason, &t); err != nil {
				rows.Close()
				yield(nil, fmt.Errorf("memory: history: %w", err))
				return
			}
			c.Event, c.Time = memory.Event(event), time.Unix(0, t).UTC()
			out = append(out, &c)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			yield(nil, fmt.Errorf("memory: history: %w", err))
			return
		}
		for _, c := range out {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Namespaces implements memory.Store.
func (s *Store) Namespaces(ctx context.Context) ([]memory.Namespace, error) {
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	byName := map[string]*memory.Namespace{}
	ns := func(name string) *memory.Namespace {
		if byName[name] == nil {
			byName[name] = &memory.Namespace{Name: name}
		}
		return byName[name]
	}
	rows, err := s.db.QueryContext(ctx, `SELECT namespace, kind, status, count(*) FROM entries GROUP BY namespace, kind, status`)
	if err != nil {
		return nil, fmt.Errorf("memory: namespaces: %w", err)
	}
	for rows.Next() {
		var name, kind, status string
		var n int
		if err := rows.Scan(&name, &kind, &status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		x := ns(name)
		x.Entries += n
		if status == string(memory.StatusActive) {
			if kind == string(memory.KindSkill) {
				x.Skills += n
			} else {
				x.Facts += n
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, `SELECT name FROM namespaces WHERE frozen = 1`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		ns(name).Frozen = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	var out []memory.Namespace
	for _, x := range byName {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b memory.Namespace) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Freeze implements memory.Store.
func (s *Store) Freeze(ctx context.Context, p *memory.FreezeParams) error {
	if p == nil {
		return fmt.Errorf("%w: Freeze without parameters", memory.ErrInvalid)
	}
	if err := memory.ValidNamespace(p.Namespace); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var frozen int
		err := s.queryRow(ctx, tx, "SELECT frozen FROM namespaces WHERE name = ?", p.Namespace).Scan(&frozen)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		want := 0
		event := memory.EventUnfreeze
		if p.Frozen {
			want, event = 1, memory.EventFreeze
		}
		if frozen == want {
			return nil
		}
		if errors.Is(err, sql.ErrNoRows) {
			_, err = s.exec(ctx, tx, "INSERT INTO namespaces (name, frozen) VALUES (?, ?)", p.Namespace, want)
		} else {
			_, err = s.exec(ctx, tx, "UPDATE namespaces SET frozen = ? WHERE name = ?", want, p.Namespace)
		}
		if err != nil {
			return err
		}
		return s.log(ctx, tx, &memory.Change{Namespace: p.Namespace, Event: event, Actor: p.Actor, Time: s.stamp()})
	})
}

// Import implements memory.Store.
func (s *Store) Import(ctx context.Context, p *memory.ImportParams) (*memory.ImportResult, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: Import without parameters", memory.ErrInvalid)
	}
	// Validate everything before writing anything.
	ids := map[string]bool{}
	norms := map[[2]string]string{}
	names := map[[2]string]bool{}
	var rows []row
	for _, f := range p.Facts {
		if f.ID == "" {
			return nil, fmt.Errorf("%w: imported fact %q has no id", memory.ErrInvalid, f.Text)
		}
		if f.Status == "" {
			return nil, fmt.Errorf("%w: imported fact %s has no status", memory.ErrInvalid, f.ID)
		}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		if ids[f.ID] {
			return nil, fmt.Errorf("%w: id %s imported twice", memory.ErrConflict, f.ID)
		}
		ids[f.ID] = true
		if f.Status == memory.StatusActive {
			k := [2]string{f.Namespace, statement.Normalize(f.Text)}
			if other, dup := norms[k]; dup {
				return nil, fmt.Errorf("%w: facts %s and %s in %s are duplicates", memory.ErrConflict, other, f.ID, f.Namespace)
			}
			norms[k] = f.ID
		}
		g := *f
		rows = append(rows, row{fact: &g})
	}
	for _, sk := range p.Skills {
		if sk.ID == "" {
			return nil, fmt.Errorf("%w: imported skill %q has no id", memory.ErrInvalid, sk.Name)
		}
		if err := sk.Validate(); err != nil {
			return nil, err
		}
		if ids[sk.ID] {
			return nil, fmt.Errorf("%w: id %s imported twice", memory.ErrConflict, sk.ID)
		}
		ids[sk.ID] = true
		k := [2]string{sk.Namespace, sk.Name}
		if names[k] {
			return nil, fmt.Errorf("%w: skill %s imported twice into %s", memory.ErrConflict, sk.Name, sk.Namespace)
		}
		names[k] = true
		g := *sk
		if g.Status == "" {
			g.Status = memory.StatusActive
		}
		rows = append(rows, row{skill: &g})
	}
	for _, e := range p.Entities {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if e.ID == "" {
			return nil, fmt.Errorf("%w: imported entity %q has no id", memory.ErrInvalid, e.Name)
		}
	}
	for _, r := range p.Relations {
		if r.From == "" || r.To == "" || r.Rel == "" {
			return nil, fmt.Errorf("%w: imported relation %+v needs from, rel and to", memory.ErrInvalid, r)
		}
	}
	vecs := make([][]float32, len(rows))
	if s.emb != nil && len(rows) > 0 {
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.searchText()
		}
		for i := 0; i < len(texts); i += 256 {
			vs, err := s.emb.Embed(ctx, texts[i:min(i+256, len(texts))])
			if err != nil {
				return nil, fmt.Errorf("memory: import: embedding with %s: %w", s.emb.Name(), err)
			}
			if len(vs) != min(256, len(texts)-i) {
				return nil, fmt.Errorf("memory: import: embedding with %s: %d vectors for %d texts", s.emb.Name(), len(vs), min(256, len(texts)-i))
			}
			copy(vecs[i:], vs)
		}
	}
	var res memory.ImportResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		res = memory.ImportResult{}
		checked := map[string]bool{}
		now := s.stamp()
		for i, r := range rows {
			if ns := r.namespace(); !checked[ns] {
				if err := s.frozen(ctx, tx, ns); err != nil {
					return err
				}
				checked[ns] = true
			}
			old, err := s.get(ctx, tx, r.id())
			exists := err == nil
			if err != nil && !errors.Is(err, memory.ErrNotFound) {
				return err
			}
			if exists && (old.skill == nil) != (r.skill == nil) {
				return fmt.Errorf("%w: %s is stored as a different kind of entry", memory.ErrConflict, r.id())
			}
			// A stored entry in the way of this one's unique key (an active fact with the same
			// text, a skill with the same name) is a conflict, reported by put.
			if err := s.put(ctx, tx, r, !exists); err != nil {
				return err
			}
			if err := s.putVector(ctx, tx, r.id(), vecs[i]); err != nil {
				return err
			}
			c := &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: memory.EventImport, Actor: p.Actor, Time: now}
			if r.skill != nil {
				c.New = r.skill.Body
				if exists {
					c.Old = old.skill.Body
				}
				res.Skills++
			} else {
				c.New = r.fact.Text
				if exists {
					c.Old = old.fact.Text
				}
				res.Facts++
			}
			if err := s.log(ctx, tx, c); err != nil {
				return err
			}
		}
		return s.importGraph(ctx, tx, p.Entities, p.Relations)
	})
	if err != nil {
		return nil, fmt.Errorf("import (nothing was written): %w", err)
	}
	return &res, nil
}
