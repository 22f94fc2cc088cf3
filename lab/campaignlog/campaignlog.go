// Package campaignlog writes the campaigns a process plays into the protocol log, as labmate
// serve writes its own: each campaign a stream of its own session, named by the campaign's id,
// so that a campaign played from the command line (labmate campaign run) is listed and followed
// live by the dashboard like one the server plays:
//
//	run_event {"kind": "campaign", "type": "start", "campaign": lab.Campaign, "scale": lab.Scale}
//	run_event {"kind": "campaign", "type": "step", "step": lab.Step, "advantage": A, "nma": N}  (one per turn)
//	run_end   {"reason": "budget_spent" | "exhausted" | "error", "error": why}
package campaignlog

import (
	"context"
	"fmt"
	"iter"
	"math"
	"sync"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/protocol"
)

// Log is where the streams go (operation.Log, protocol.Store).
type Log interface {
	Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error)
}

// Event is the payload of a campaign's run_event: its start or one turn (the server's
// CampaignEvent).
type Event struct {
	Kind      string        `json:"kind"` // protocol.KindCampaign
	Type      string        `json:"type"` // "start" or "step"
	Campaign  *lab.Campaign `json:"campaign,omitempty"`
	Scale     *lab.Scale    `json:"scale,omitempty"`
	Step      *lab.Step     `json:"step,omitempty"`
	Advantage *float64      `json:"advantage,omitempty"`
	NMA       *float64      `json:"nma,omitempty"`
}

// The reasons of a campaign's run_end.
const (
	EndBudget    protocol.Reason = "budget_spent"
	EndExhausted protocol.Reason = "exhausted"
	EndError                     = protocol.ReasonError
)

// Store is a lab.Store that also logs every campaign it records to log: Begin its start, Record
// each turn. scale gives a campaign's group's scale (for the advantage and NMA of each turn).
// End closes a campaign's stream. Its errors are the log's, wrapped.
type Store struct {
	lab.Store
	log   Log
	scale func(group string) lab.Scale

	mu    sync.Mutex
	camps map[string]*played
}

// played is what Store keeps of a campaign being played.
type played struct {
	budget int
	scale  lab.Scale
	steps  []lab.Step
}

// New returns the Store that records to store (nil: nothing) and logs to log.
func New(store lab.Store, log Log, scale func(group string) lab.Scale) *Store {
	return &Store{Store: store, log: log, scale: scale, camps: map[string]*played{}}
}

func (s *Store) appendEvent(ctx context.Context, id string, t protocol.Type, payload any) error {
	m, err := protocol.NewMessage(t, id, id, payload)
	if err == nil {
		_, err = s.log.Append(context.WithoutCancel(ctx), m)
	}
	if err != nil {
		return fmt.Errorf("campaignlog: campaign %s: %w", id, err)
	}
	return nil
}

// Begin implements lab.Store: it logs the campaign's start.
func (s *Store) Begin(ctx context.Context, c *lab.Campaign) error {
	if s.Store != nil {
		if err := s.Store.Begin(ctx, c); err != nil {
			return err
		}
	}
	p := &played{budget: c.Budget, scale: s.scale(c.Group)}
	s.mu.Lock()
	s.camps[c.ID] = p
	s.mu.Unlock()
	return s.appendEvent(ctx, c.ID, protocol.TypeRunEvent, &Event{Kind: protocol.KindCampaign, Type: "start", Campaign: c, Scale: &p.scale})
}

// Record implements lab.Store: it logs the turn, with its advantage and the NMA so far.
func (s *Store) Record(ctx context.Context, st *lab.Step) error {
	if s.Store != nil {
		if err := s.Store.Record(ctx, st); err != nil {
			return err
		}
	}
	s.mu.Lock()
	p := s.camps[st.Campaign]
	if p == nil {
		s.mu.Unlock()
		return fmt.Errorf("campaignlog: step %d of campaign %s, which did not begin here", st.N, st.Campaign)
	}
	p.steps = append(p.steps, *st)
	curves := lab.Score(p.steps, p.scale, len(p.steps))
	i := len(p.steps) - 1
	ev := &Event{Kind: protocol.KindCampaign, Type: "step", Step: st, Advantage: finite(curves.Advantage[i]), NMA: finite(curves.NMA[i])}
	s.mu.Unlock()
	return s.appendEvent(ctx, st.Campaign, protocol.TypeRunEvent, ev)
}

// Steps implements lab.Store.
func (s *Store) Steps(ctx context.Context, q *lab.Query) iter.Seq2[*lab.Step, error] {
	if s.Store == nil {
		return func(func(*lab.Step, error) bool) {}
	}
	return s.Store.Steps(ctx, q)
}

// End closes the stream of every campaign that began and has not ended: played to the budget,
// exhausted before it, or stopped by err.
func (s *Store) End(ctx context.Context, err error) error {
	s.mu.Lock()
	camps := s.camps
	s.camps = map[string]*played{}
	s.mu.Unlock()
	var first error
	for id, p := range camps {
		end := &protocol.RunEnd{Reason: EndBudget}
		switch {
		case err != nil:
			end = &protocol.RunEnd{Reason: EndError, Error: err.Error()}
		case len(p.steps) < p.budget:
			end.Reason = EndExhausted
		}
		if e := s.appendEvent(ctx, id, protocol.TypeRunEnd, end); e != nil && first == nil {
			first = e
		}
	}
	return first
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
