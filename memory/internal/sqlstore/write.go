package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/memory"
)

// AddFact implements memory.Store.
func (s *Store) AddFact(ctx context.Context, p *memory.AddFactParams) (*memory.AddFactResult, error) {
	if p == nil || p.Fact == nil {
		return nil, fmt.Errorf("%w: AddFact without a fact", memory.ErrInvalid)
	}
	f := *p.Fact
	f.Tags, f.Evidence = slices.Clone(f.Tags), slices.Clone(f.Evidence)
	f.Provenance.Operations = slices.Clone(f.Provenance.Operations)
	if f.Kind == "" {
		f.Kind = memory.KindObservation
	}
	f.Status, f.Reason, f.SupersededBy, f.InvalidAt = memory.StatusActive, "", "", time.Time{}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.ID == "" {
		f.ID = newID()
	}
	vec, err := s.vector(ctx, row{fact: &f}.searchText())
	if err != nil {
		return nil, err
	}
	var res memory.AddFactResult
	err = s.write(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		if err := s.frozen(ctx, tx, f.Namespace); err != nil {
			return err
		}
		var id string
		err := s.queryRow(ctx, tx, "SELECT id FROM entries WHERE namespace = ? AND norm = ?", f.Namespace, normKey(f.Text)).Scan(&id)
		if err == nil { // an exact duplicate: merge into it
			old, err := s.get(ctx, tx, id)
			if err != nil {
				return err
			}
			m := old.fact
			m.Tags = union(m.Tags, f.Tags)
			m.Evidence = union(m.Evidence, f.Evidence)
			m.Tried, m.Worked = union(m.Tried, f.Tried), union(m.Worked, f.Worked)
			m.Provenance.Absorb(f.Provenance)
			m.Confidence = max(m.Confidence, f.Confidence)
			m.UpdatedAt = now
			if err := s.put(ctx, tx, row{fact: m}, false); err != nil {
				return err
			}
			res = memory.AddFactResult{Fact: m, Merged: true}
			return s.log(ctx, tx, &memory.Change{EntryID: m.ID, Namespace: m.Namespace, Event: memory.EventMerge,
				Old: m.Text, New: f.Text, Actor: p.Actor, Reason: orDefault(p.Reason, "exact duplicate"), Time: now})
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		g := f
		g.CreatedAt, g.UpdatedAt = now, now
		if g.ValidFrom.IsZero() {
			g.ValidFrom = now
		}
		if err := s.put(ctx, tx, row{fact: &g}, true); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, g.ID, vec); err != nil {
			return err
		}
		res = memory.AddFactResult{Fact: &g}
		return s.log(ctx, tx, &memory.Change{EntryID: g.ID, Namespace: g.Namespace, Event: memory.EventAdd,
			New: g.Text, Actor: p.Actor, Reason: p.Reason, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("adding a fact to %s: %w", f.Namespace, err)
	}
	return &res, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// UpdateFact implements memory.Store.
func (s *Store) UpdateFact(ctx context.Context, p *memory.UpdateFactParams) (*memory.Fact, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: UpdateFact without an id", memory.ErrInvalid)
	}
	var vec []float32
	if p.Text != "" || p.Tags != nil {
		// Embed before the transaction; the text may still be refused below.
		cur, err := s.Get(ctx, &memory.GetParams{ID: p.ID})
		if err == nil && cur.Fact != nil {
			f := *cur.Fact
			if p.Text != "" {
				f.Text = p.Text
			}
			if p.Tags != nil {
				f.Tags = p.Tags
			}
			if vec, err = s.vector(ctx, row{fact: &f}.searchText()); err != nil {
				return nil, err
			}
		}
	}
	var out *memory.Fact
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if r.fact == nil {
			return fmt.Errorf("%w: %q is a skill, not a fact", memory.ErrInvalid, p.ID)
		}
		f := r.fact
		if err := s.frozen(ctx, tx, f.Namespace); err != nil {
			return err
		}
		if f.Status != memory.StatusActive {
			return fmt.Errorf("%w: fact %q is %s", memory.ErrNotActive, f.ID, f.Status)
		}
		old := f.Text
		if p.Text != "" {
			f.Text = p.Text
		}
		if p.Kind != "" {
			f.Kind = p.Kind
		}
		if p.Tags != nil {
			f.Tags = slices.Clone(p.Tags)
		}
		f.Evidence = union(f.Evidence, p.Evidence)
		f.Tried, f.Worked = union(f.Tried, p.Tried), union(f.Worked, p.Worked)
		event := memory.EventUpdate
		if p.Merge != nil {
			f.Provenance.Absorb(*p.Merge)
			event = memory.EventMerge
		}
		if p.Confidence != 0 {
			f.Confidence = p.Confidence
		}
		if err := f.Validate(); err != nil {
			return err
		}
		f.UpdatedAt = s.stamp()
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, f.ID, vec); err != nil {
			return err
		}
		out = f
		return s.log(ctx, tx, &memory.Change{EntryID: f.ID, Namespace: f.Namespace, Event: event,
			Old: old, New: f.Text, Actor: p.Actor, Reason: p.Reason, Time: f.UpdatedAt})
	})
	if err != nil {
		return nil, fmt.Errorf("updating fact %s: %w", p.ID, err)
	}
	return out, nil
}

// Invalidate implements memory.Store.
func (s *Store) Invalidate(ctx context.Context, p *memory.InvalidateParams) (*memory.Entry, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: Invalidate without an id", memory.ErrInvalid)
	}
	if strings.TrimSpace(p.Reason) == "" {
		return nil, fmt.Errorf("%w: invalidating %s: a reason is required", memory.ErrInvalid, p.ID)
	}
	if p.SupersededBy == p.ID {
		return nil, fmt.Errorf("%w: %s cannot supersede itself", memory.ErrInvalid, p.ID)
	}
	var out *memory.Entry
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if err := s.frozen(ctx, tx, r.namespace()); err != nil {
			return err
		}
		if p.SupersededBy != "" {
			if _, err := s.get(ctx, tx, p.SupersededBy); err != nil {
				return fmt.Errorf("superseded by: %w", err)
			}
		}
		now := s.stamp()
		at := p.At.UTC()
		if p.At.IsZero() {
			at = now
		}
		status, event := memory.StatusInvalidated, memory.EventInvalidate
		if p.SupersededBy != "" {
			status, event = memory.StatusSuperseded, memory.EventSupersede
		}
		var text string
		if f := r.fact; f != nil {
			if f.Status != memory.StatusActive {
				return fmt.Errorf("%w: fact %q is already %s", memory.ErrNotActive, f.ID, f.Status)
			}
			f.Status, f.Reason, f.SupersededBy, f.InvalidAt, f.UpdatedAt = status, p.Reason, p.SupersededBy, at, now
			text = f.Text
		} else {
			sk := r.skill
			if sk.Status != memory.StatusActive {
				return fmt.Errorf("%w: skill %q is already %s", memory.ErrNotActive, sk.Name, sk.Status)
			}
			sk.Status, sk.Reason, sk.UpdatedAt = status, p.Reason, now
			text = sk.Body
		}
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		out = r.entry()
		return s.log(ctx, tx, &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: event,
			Old: text, Actor: p.Actor, Reason: p.Reason, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("invalidating %s: %w", p.ID, err)
	}
	return out, nil
}

// skillContent is what versions a skill.
func skillContent(sk *memory.Skill) string {
	b, _ := json.Marshal([]any{sk.Description, sk.Body, sk.License, sk.Compatibility, sk.AllowedTools, sk.Metadata, uniq(sk.Tags)})
	return string(b)
}

// PutSkill implements memory.Store.
func (s *Store) PutSkill(ctx context.Context, p *memory.PutSkillParams) (*memory.PutSkillResult, error) {
	if p == nil || p.Skill == nil {
		return nil, fmt.Errorf("%w: PutSkill without a skill", memory.ErrInvalid)
	}
	in := *p.Skill
	in.Status = memory.StatusActive
	if err := in.Validate(); err != nil {
		return nil, err
	}
	vec, err := s.vector(ctx, row{skill: &in}.searchText())
	if err != nil {
		return nil, err
	}
	var res memory.PutSkillResult
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := s.frozen(ctx, tx, in.Namespace); err != nil {
			return err
		}
		now := s.stamp()
		var id string
		err := s.queryRow(ctx, tx, "SELECT id FROM entries WHERE namespace = ? AND name = ?", in.Namespace, in.Name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			sk := in
			if sk.ID == "" {
				sk.ID = newID()
			}
			sk.Version, sk.Uses, sk.Successes, sk.Failures, sk.Reason = 1, 0, 0, 0, ""
			sk.CreatedAt, sk.UpdatedAt = now, now
			if err := s.put(ctx, tx, row{skill: &sk}, true); err != nil {
				return err
			}
			if err := s.putVector(ctx, tx, sk.ID, vec); err != nil {
				return err
			}
			res = memory.PutSkillResult{Skill: &sk, Created: true, Changed: true}
			return s.log(ctx, tx, &memory.Change{EntryID: sk.ID, Namespace: sk.Namespace, Event: memory.EventAdd,
				New: sk.Body, Actor: p.Actor, Reason: p.Reason, Time: now})
		}
		if err != nil {
			return err
		}
		r, err := s.get(ctx, tx, id)
		if err != nil {
			return err
		}
		cur := r.skill
		if skillContent(cur) == skillContent(&in) && cur.Status == memory.StatusActive {
			res = memory.PutSkillResult{Skill: cur}
			return nil
		}
		sk := in
		sk.ID, sk.CreatedAt, sk.UpdatedAt = cur.ID, cur.CreatedAt, now
		sk.Version, sk.Uses, sk.Successes, sk.Failures = cur.Version+1, cur.Uses, cur.Successes, cur.Failures
		if sk.Provenance.Operations == nil && sk.Provenance.Session == "" && sk.Provenance.Model == "" && sk.Provenance.Source == "" {
			sk.Provenance = cur.Provenance
		}
		if err := s.put(ctx, tx, row{skill: &sk}, false); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, sk.ID, vec); err != nil {
			return err
		}
		res = memory.PutSkillResult{Skill: &sk, Changed: true}
		return s.log(ctx, tx, &memory.Change{EntryID: sk.ID, Namespace: sk.Namespace, Event: memory.EventVersion,
			Old: cur.Body, New: sk.Body, Actor: p.Actor, Reason: orDefault(p.Reason, fmt.Sprintf("version %d", sk.Version)), Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("storing skill %s/%s: %w", in.Namespace, in.Name, err)
	}
	return &res, nil
}

// Use implements memory.Store.
func (s *Store) Use(ctx context.Context, p *memory.UseParams) (*memory.Entry, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: Use without an id", memory.ErrInvalid)
	}
	var out *memory.Entry
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if err := s.frozen(ctx, tx, r.namespace()); err != nil {
			return err
		}
		now := s.stamp()
		outcome := "failure"
		if p.Success {
			outcome = "success"
		}
		if f := r.fact; f != nil {
			if p.Success {
				f.Successes++
			} else {
				f.Failures++
			}
			f.UpdatedAt = now
		} else {
			sk := r.skill
			sk.Uses++
			if p.Success {
				sk.Successes++
			} else {
				sk.Failures++
			}
			sk.UpdatedAt = now
		}
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		out = r.entry()
		return s.log(ctx, tx, &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: memory.EventUse,
			Actor: p.Actor, Reason: outcome, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("recording a use of %s: %w", p.ID, err)
	}
	return out, nil
}
