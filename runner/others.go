package runner

import (
	"errors"
	"sync"
	"time"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// The operations other processes run without a runner — labmate exec, lab run, campaign run,
// a labmate run's cells — are ended in the log when their process stops without ending them
// (kill -9, a crash): the server's runner watches every one it sees open (the log at its
// start, then what the others append) and, once the Store that wrote it last is closed
// (sqlite.Store.Writer), appends its end with reason process_died — operation_failed, or
// run_end for a campaign's stream. Without it such a stream stayed open, IN_PROGRESS on the
// dashboard, until the server restarted. Agent runs have their own watcher (local.go); jobs
// outlive the process that started them.

// others are the operations of other processes the runner watches, by session and operation.
type others struct {
	mu  sync.Mutex
	ops map[[2]string]struct{}
}

// note watches m's operation while it is open.
func (o *others) note(m *protocol.EnhancedMessage) {
	k := [2]string{m.SessionID, m.OperationID}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case m.Type.Terminal():
		delete(o.ops, k)
	case o.ops == nil:
		o.ops = map[[2]string]struct{}{k: {}}
	default:
		o.ops[k] = struct{}{}
	}
}

// watched returns the operations watched; drop stops watching one.
func (o *others) watched() [][2]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := make([][2]string, 0, len(o.ops))
	for k := range o.ops {
		keys = append(keys, k)
	}
	return keys
}

func (o *others) drop(k [2]string) {
	o.mu.Lock()
	delete(o.ops, k)
	o.mu.Unlock()
}

// watchOthers ends, every localPoll until the runner closes, the operations of other
// processes that stopped without ending them.
func (s *Runner) watchOthers(st *sqlite.Store) {
	if sessions, err := st.Sessions(s.ctx); err == nil { // what is open at the start
		for _, si := range sessions {
			ops, err := st.Operations(s.ctx, si.ID)
			if err != nil {
				break
			}
			for _, op := range ops {
				if op.State.Live() && op.Kind != protocol.KindJob && op.Kind != protocol.KindAgentRun {
					s.others.note(&protocol.EnhancedMessage{SessionID: si.ID, OperationID: op.ID})
				}
			}
		}
	}
	t := time.NewTicker(localPoll)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		for _, k := range s.others.watched() {
			w, ok := st.Writer(s.ctx, k[0], k[1])
			if ok && w.Live && !w.Self {
				continue
			}
			s.others.drop(k)
			if ok && !w.Self {
				if err := s.endOther(st, k[0], k[1], w); err != nil && s.ctx.Err() == nil {
					s.Logf("operation %s of session %s, run by labmate %s (pid %d), which stopped: not ended: %v", k[1], k[0], w.Role, w.Pid, err)
				}
			}
		}
	}
}

// endOther ends operation op of session, whose process w stopped, unless it ended (its state
// is read once w's Store is closed: anything it appended is in the file).
func (s *Runner) endOther(st *sqlite.Store, session, op string, w sqlite.Writer) error {
	ops, err := st.Operations(s.ctx, session)
	if err != nil {
		return err
	}
	var info *protocol.OperationInfo
	for i := range ops {
		if ops[i].ID == op {
			info = &ops[i]
		}
	}
	if info == nil || !info.State.Live() || info.Kind == protocol.KindJob || info.Kind == protocol.KindAgentRun {
		return nil
	}
	m := w.Died(session, op, info.State)
	var l operation.Log = st // the session's here, when it is live: its followers see the end
	if ss := s.Lookup(session); ss != nil {
		l = ss
	}
	if _, err := l.Append(s.ctx, m); err != nil && !errors.Is(err, protocol.ErrIllegalTransition) {
		return err
	}
	s.Logf("operation %s of session %s: labmate %s (pid %d) stopped while it ran: ended (%s)", op, session, w.Role, w.Pid, protocol.ReasonProcessDied)
	return nil
}
