// Package campaignlog writes the campaigns a process plays into the protocol log, as labmate
// serve writes its own: each campaign a stream of its own session, named by the campaign's id,
// so that a campaign played from the command line (labmate campaign run) is listed and followed
// live by the dashboard like one the server plays:
//
//	run_event {"kind": "campaign", "type": "start", "campaign": lab.Campaign, "scale": lab.Scale}
//	run_event {"kind": "campaign", "type": "step", "step": lab.Step, "advantage": A, "nma": N}  (one per turn)
//	run_end   {"reason": "budget_spent" | "exhausted" | "interrupted" | "error", "error": why}
//
// The log is the campaigns' only store: Steps reads the turns of earlier campaigns from it, the
// prior of a memory-informed planner, and Import puts in it those an earlier labmate recorded
// in campaigns.db.
package campaignlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

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
	Type      string        `json:"type"` // Start or Step
	Campaign  *lab.Campaign `json:"campaign,omitempty"`
	Scale     *lab.Scale    `json:"scale,omitempty"`
	Step      *lab.Step     `json:"step,omitempty"`
	Advantage *float64      `json:"advantage,omitempty"` // of the turn's measurement
	NMA       *float64      `json:"nma,omitempty"`       // of the best measurement so far
}

// The types of an Event.
const (
	Start = "start"
	Step  = "step"
)

// The reasons of a campaign's run_end.
const (
	EndBudget    protocol.Reason = "budget_spent"
	EndExhausted protocol.Reason = "exhausted"
	EndError                     = protocol.ReasonError
)

// Store is a lab.Store that logs every campaign it records to log: Begin its start, Record
// each turn; the campaigns in the log are what Steps reads (or those of the store it also
// records to, when it has one). scale gives a campaign's group's scale (for the advantage and NMA of each turn).
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
	return s.appendEvent(ctx, c.ID, protocol.TypeRunEvent, &Event{Kind: protocol.KindCampaign, Type: Start, Campaign: c, Scale: &p.scale})
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
	ev := &Event{Kind: protocol.KindCampaign, Type: Step, Step: st, Advantage: finite(curves.Advantage[i]), NMA: finite(curves.NMA[i])}
	s.mu.Unlock()
	return s.appendEvent(ctx, st.Campaign, protocol.TypeRunEvent, ev)
}

// Steps implements lab.Store: the steps of the store it records to, else of the campaigns in
// its log (Steps) when the log can be read.
func (s *Store) Steps(ctx context.Context, q *lab.Query) iter.Seq2[*lab.Step, error] {
	if s.Store != nil {
		return s.Store.Steps(ctx, q)
	}
	if r, ok := s.log.(Reader); ok {
		return Steps(ctx, r, q)
	}
	return func(func(*lab.Step, error) bool) {}
}

// End closes the stream of every campaign that began and has not ended: played to the budget,
// exhausted before it, or stopped by err: interrupted when err is context.Canceled (another
// process interrupted it, say), else an error.
func (s *Store) End(ctx context.Context, err error) error {
	s.mu.Lock()
	camps := s.camps
	s.camps = map[string]*played{}
	s.mu.Unlock()
	var first error
	for id, p := range camps {
		end := &protocol.RunEnd{Reason: EndBudget}
		switch {
		case errors.Is(err, context.Canceled):
			end = &protocol.RunEnd{Reason: protocol.ReasonInterrupted, Error: err.Error()}
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

// Reader is what Steps reads the log with (protocol.Store).
type Reader interface {
	Sessions(ctx context.Context) ([]protocol.SessionInfo, error)
	Operations(ctx context.Context, sessionID string) ([]protocol.OperationInfo, error)
	Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*protocol.EnhancedMessage, error]
}

// Steps yields the steps of the campaigns in log on q.Space and q.Objective outside
// q.ExcludeGroup, in the order of the campaigns' starts, then of their turns: the log as
// lab.Store.Steps, what memory-informed planners learn from.
func Steps(ctx context.Context, log Reader, q *lab.Query) iter.Seq2[*lab.Step, error] {
	return func(yield func(*lab.Step, error) bool) {
		camps, err := campaigns(ctx, log, q)
		if err != nil {
			yield(nil, fmt.Errorf("campaignlog: %w", err))
			return
		}
		for _, c := range camps {
			for _, st := range c.steps {
				st.Group = c.Group
				if !yield(st, nil) {
					return
				}
			}
		}
	}
}

// logged is a campaign as its stream has it.
type logged struct {
	*lab.Campaign
	steps []*lab.Step
}

// campaigns reads the streams of the campaigns in log that q selects, ordered by start.
func campaigns(ctx context.Context, log Reader, q *lab.Query) ([]logged, error) {
	sessions, err := log.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	var out []logged
	for _, si := range sessions {
		ops, err := log.Operations(ctx, si.ID)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ops, func(o protocol.OperationInfo) bool { return o.ID == si.ID && o.Kind == protocol.KindCampaign }) {
			continue
		}
		var c logged
		for m, err := range log.Operation(ctx, si.ID, si.ID) {
			if err != nil {
				return nil, err
			}
			if m.Type != protocol.TypeRunEvent {
				continue
			}
			var ev Event
			if err := m.Decode(&ev); err != nil {
				return nil, fmt.Errorf("campaign %s, seq %d: %w", si.ID, m.Seq, err)
			}
			switch {
			case ev.Type == Start && ev.Campaign != nil:
				c.Campaign = ev.Campaign
			case ev.Type == Step && ev.Step != nil && c.Campaign != nil:
				c.steps = append(c.steps, ev.Step)
			}
		}
		if c.Campaign != nil && c.Space == q.Space && c.Objective == q.Objective && c.Group != q.ExcludeGroup {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b logged) int {
		return cmp.Or(a.Started.Compare(b.Started), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// ImportLog is what Import writes to and reads (protocol.Store).
type ImportLog interface {
	Log
	Reader
}

// Import puts campaign c and its steps, recorded before campaigns were only in the log
// (campaigns.db), into log as the stream it would have had (without the advantage and NMA,
// which need the group's scale), unless log has a session of its id already; it reports
// whether it did. The stream ends as the campaign did: its budget played, or exhausted.
func Import(ctx context.Context, log ImportLog, c *lab.Campaign, steps []lab.Step) (bool, error) {
	if _, err := log.Operations(ctx, c.ID); !errors.Is(err, protocol.ErrUnknownSession) {
		return false, err
	}
	add := func(t protocol.Type, payload any, when time.Time) error {
		m, err := protocol.NewMessage(t, c.ID, c.ID, payload)
		if err != nil {
			return err
		}
		m.Timestamp = float64(when.UnixNano()) / 1e9
		if _, err := log.Append(ctx, m); err != nil {
			return fmt.Errorf("campaignlog: importing campaign %s: %w", c.ID, err)
		}
		return nil
	}
	if err := add(protocol.TypeRunEvent, &Event{Kind: protocol.KindCampaign, Type: Start, Campaign: c}, c.Started); err != nil {
		return false, err
	}
	last := c.Started
	for i := range steps {
		if err := add(protocol.TypeRunEvent, &Event{Kind: protocol.KindCampaign, Type: Step, Step: &steps[i]}, steps[i].Time); err != nil {
			return true, err
		}
		last = steps[i].Time
	}
	end := &protocol.RunEnd{Reason: EndBudget}
	if len(steps) < c.Budget {
		end.Reason = EndExhausted
	}
	return true, add(protocol.TypeRunEnd, end, last)
}
