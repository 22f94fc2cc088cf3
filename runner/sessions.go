package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labmate/labmate/protocol"
)

// A session's name and whether it is closed live in its own stream (protocol.SessionStream)
// of session_update messages, each carrying both: the latest says. PATCH /v1/sessions/ID
// names a session; POST /v1/sessions/ID/close interrupts its operations, closes its kernels
// and drops it from memory (as idle reaping does), then logs it closed. A closed session is
// still listed and its log still served; a later operation in it reopens it: a
// session_update closed:false is logged just before the operation_request.

// MaxSessionName caps a session's name, in characters.
const MaxSessionName = 80

// closeWait bounds how long closing a session waits for its interrupted operations to end.
const closeWait = 15 * time.Second

// SessionListing is one row of GET /v1/sessions: the store's SessionInfo (Operations counts
// operations and runs, not the session's own stream), its name and whether it is closed
// (from its latest session_update), and, for the session of an agent run or a campaign, the
// run's kind.
type SessionListing struct {
	protocol.SessionInfo
	Name   string `json:"name,omitempty"`
	Closed bool   `json:"closed"`
	Kind   string `json:"kind,omitempty"`
	// Title says what the session is, for a session nobody named: an agent run's task, a
	// campaign's name, a job's name or command, the file its first cell came from (labmate exec
	// FILE --server), or the first line of its first cell (its leading comment, as a script's
	// first line says what it does).
	Title string `json:"title,omitempty"`
	// Updated is the time of its latest message (Unix seconds).
	Updated float64 `json:"updated,omitempty"`
}

// ListSessions lists the sessions of store as GET /v1/sessions does, in the store's order:
// what the dashboard, the REST API and labmate session list show.
func ListSessions(ctx context.Context, store protocol.Store) ([]SessionListing, error) {
	list, err := store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SessionListing, 0, len(list))
	for _, si := range list {
		row, err := listSession(ctx, store, si)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// ListSession is the listing of session id of store (see ListSessions); an unknown one is an
// error wrapping protocol.ErrUnknownSession.
func ListSession(ctx context.Context, store protocol.Store, id string) (SessionListing, error) {
	list, err := store.Sessions(ctx)
	if err != nil {
		return SessionListing{}, err
	}
	for _, si := range list {
		if si.ID == id {
			return listSession(ctx, store, si)
		}
	}
	return SessionListing{}, fmt.Errorf("%w: %s", protocol.ErrUnknownSession, id)
}

func listSession(ctx context.Context, store protocol.Store, si protocol.SessionInfo) (SessionListing, error) {
	row := SessionListing{SessionInfo: si}
	ops, err := store.Operations(ctx, si.ID)
	if err != nil {
		return row, err
	}
	for _, op := range ops {
		switch {
		case op.ID == protocol.SessionStream && op.Kind == protocol.KindSession:
			row.Operations--
			u, err := latestUpdate(ctx, store, si.ID)
			if err != nil {
				return row, err
			}
			row.Name, row.Closed = u.Name, u.Closed
		case op.ID == si.ID && (op.Kind == protocol.KindAgentRun || op.Kind == protocol.KindCampaign):
			row.Kind = op.Kind
		}
	}
	row.Title = sessionTitle(ctx, store, si.ID)
	for m, err := range store.After(ctx, si.ID, si.LastSeq-1) {
		if err == nil {
			row.Updated = m.Timestamp
		}
	}
	return row, nil
}

// latestUpdate reads session id's latest session_update from store; the zero value when it
// has none.
func latestUpdate(ctx context.Context, store protocol.Store, id string) (protocol.SessionUpdate, error) {
	var u protocol.SessionUpdate
	for m, err := range store.Operation(ctx, id, protocol.SessionStream) {
		if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
			return protocol.SessionUpdate{}, nil
		}
		if err != nil {
			return u, err
		}
		if m.Type != protocol.TypeSessionUpdate {
			continue
		}
		var next protocol.SessionUpdate
		if err := m.Decode(&next); err != nil {
			return u, err
		}
		u = next
	}
	return u, nil
}

// Known reports whether session id exists: in the log, or live (opened, nothing logged yet).
func (s *Runner) Known(ctx context.Context, id string) (bool, error) {
	if s.Lookup(id) != nil {
		return true, nil
	}
	_, err := s.store.Operations(ctx, id)
	if errors.Is(err, protocol.ErrUnknownSession) {
		return false, nil
	}
	return err == nil, err
}

// CheckSessionName validates a session's name: 1–MaxSessionName printable characters after
// trimming spaces. It returns the trimmed name.
func CheckSessionName(name string) (string, error) {
	n := strings.TrimSpace(name)
	switch c := utf8.RuneCountInString(n); {
	case c == 0:
		return "", fmt.Errorf("name %q: empty; want 1 to %d printable characters", name, MaxSessionName)
	case c > MaxSessionName:
		return "", fmt.Errorf("name %q: %d characters; want at most %d", name, c, MaxSessionName)
	}
	for i, r := range []rune(n) {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("name %q: character %d (%U) is not printable; want 1 to %d printable characters", name, i+1, r, MaxSessionName)
		}
	}
	return n, nil
}

// metaLocked returns the session's latest update, read from the log on first use. ss.metaMu
// is held.
func (ss *Session) metaLocked(ctx context.Context) (protocol.SessionUpdate, error) {
	if ss.meta == nil {
		u, err := latestUpdate(ctx, ss.s.store, ss.id)
		if err != nil {
			return u, err
		}
		ss.meta = &u
	}
	return *ss.meta, nil
}

// Update logs a session_update: the latest one changed by edit.
func (ss *Session) Update(ctx context.Context, edit func(*protocol.SessionUpdate)) (protocol.SessionUpdate, error) {
	ss.metaMu.Lock()
	defer ss.metaMu.Unlock()
	u, err := ss.updateLocked(ctx, edit)
	if err == nil {
		err = ss.s.durable(ctx) // the caller tells its client: the log has it for good first
	}
	return u, err
}

func (ss *Session) updateLocked(ctx context.Context, edit func(*protocol.SessionUpdate)) (protocol.SessionUpdate, error) {
	u, err := ss.metaLocked(ctx)
	if err != nil {
		return u, err
	}
	edit(&u)
	m, err := protocol.NewMessage(protocol.TypeSessionUpdate, ss.id, protocol.SessionStream, u)
	if err != nil {
		return u, err
	}
	if _, err := ss.Append(ctx, m); err != nil {
		return u, err
	}
	ss.meta = &u
	return u, nil
}

// reopenLocked logs the session open again when it is closed: an operation is about to be
// logged in it. ss.metaMu is held.
func (ss *Session) reopenLocked(ctx context.Context) error {
	u, err := ss.metaLocked(ctx)
	if err != nil || !u.Closed {
		return err
	}
	_, err = ss.updateLocked(ctx, func(u *protocol.SessionUpdate) { u.Closed = false })
	return err
}

// Close interrupts the session's operations, waits for them to end, closes its kernels and
// logs it closed. A request arriving meanwhile waits (metaMu), then reopens the session.
func (ss *Session) Close(ctx context.Context) (protocol.SessionUpdate, error) {
	ss.metaMu.Lock()
	defer ss.metaMu.Unlock()
	ss.mu.Lock()
	ids := slices.Collect(maps.Keys(ss.running))
	ss.mu.Unlock()
	for _, id := range ids {
		if err := ss.Interrupt(ctx, id, &protocol.Interrupt{Why: "the session was closed"}); err != nil {
			return protocol.SessionUpdate{}, err
		}
	}
	for deadline := time.Now().Add(closeWait); ; time.Sleep(20 * time.Millisecond) {
		ss.mu.Lock()
		n := len(ss.running)
		ss.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			return protocol.SessionUpdate{}, fmt.Errorf("closing session %s: %d operations still running %v after their interrupt", ss.id, n, closeWait)
		}
	}
	ss.closeKernels(0)
	ctx = context.WithoutCancel(ctx)
	u, err := ss.updateLocked(ctx, func(u *protocol.SessionUpdate) { u.Closed = true })
	if err == nil {
		err = ss.s.durable(ctx) // the caller tells its client: the log has it for good first
	}
	return u, err
}

// maxTitle caps SessionListing.Title, in characters.
const maxTitle = 80

// sessionTitle says what session id is, from its first messages (see SessionListing.Title).
func sessionTitle(ctx context.Context, store protocol.Store, id string) string {
	n := 0
	for m, err := range store.After(ctx, id, 0) {
		if err != nil || n > 16 {
			break
		}
		n++
		var p struct {
			Kind string
			Name string
			Code string
			Type string
			Job  *struct {
				Name, Script string
				Command      []string
			}
			Start    *struct{ Task struct{ Goal string } }
			Campaign *struct{ Space, Objective, Planner string }
		}
		if json.Unmarshal(m.Payload, &p) != nil {
			continue
		}
		switch {
		case m.Type == protocol.TypeRunEvent && p.Start != nil && p.Start.Task.Goal != "":
			return clip(p.Start.Task.Goal)
		case m.Type == protocol.TypeRunEvent && p.Campaign != nil:
			return clip(fmt.Sprintf("%s: %s (%s planner)", p.Campaign.Space, p.Campaign.Objective, p.Campaign.Planner))
		case m.Type == protocol.TypeRequest && p.Name != "" && p.Job == nil:
			return clip(p.Name)
		case m.Type == protocol.TypeRequest && p.Job != nil:
			return clip(cmp.Or(p.Job.Name, strings.Join(p.Job.Command, " "), firstLine(p.Job.Script)))
		case m.Type == protocol.TypeRequest && p.Code != "":
			return clip(firstLine(p.Code))
		}
	}
	return ""
}

// firstLine is code's first non-blank line, a leading comment marker (%, #, //) taken off.
func firstLine(code string) string {
	for line := range strings.Lines(code) {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "#!") {
			continue
		}
		for _, c := range []string{"%%", "%", "##", "#", "//"} {
			if t, ok := strings.CutPrefix(l, c); ok {
				l = strings.TrimSpace(t)
				break
			}
		}
		if l != "" {
			return l
		}
	}
	return ""
}

// clip shortens s to maxTitle characters, printable ones only.
func clip(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }), " ")
	if r := []rune(s); len(r) > maxTitle {
		return string(r[:maxTitle-1]) + "…"
	}
	return s
}
