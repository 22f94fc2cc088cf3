package locallog

import (
	"context"
	"errors"
	"fmt"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Orphaned ends as failed (reason process_died) every operation of session that is open in
// st while the process that wrote it last no longer runs — a cell of a labmate run killed
// while its cell ran; the ends are appended to l (nil: st), the session's
// log in a runner that shows them to its subscribers. A run's own stream, jobs (they outlive
// the process that started them) and streams written by a live process or by st itself are
// left alone.
func Orphaned(ctx context.Context, st *sqlite.Store, l operation.Log, session string) error {
	ops, err := st.Operations(ctx, session)
	if errors.Is(err, protocol.ErrUnknownSession) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !op.State.Live() || op.Kind == protocol.KindAgentRun || op.Kind == protocol.KindJob || op.ID == session {
			continue
		}
		w, ok := st.Writer(ctx, session, op.ID)
		if !ok || w.Live || w.Self {
			continue
		}
		if err := endOrphan(ctx, l, st, session, op.ID, w); err != nil {
			return err
		}
	}
	return nil
}

// endOrphan ends operation op of session, whose process w stopped while it ran, as failed with
// reason process_died. An operation that ended meanwhile is left as it ended.
func endOrphan(ctx context.Context, l operation.Log, st *sqlite.Store, session, op string, w sqlite.Writer) error {
	if l == nil {
		l = st
	}
	m, err := protocol.NewMessage(protocol.TypeFailed, session, op, &protocol.Failed{Reason: protocol.ReasonProcessDied,
		Error: fmt.Sprintf("labmate %s (pid %d) stopped (killed?) while the operation ran", w.Role, w.Pid)})
	if err != nil {
		return err
	}
	if _, err := l.Append(ctx, m); err != nil && !errors.Is(err, protocol.ErrIllegalTransition) {
		return fmt.Errorf("locallog: ending operation %s of session %s: %w", op, session, err)
	}
	return nil
}

// Elsewhere says who runs operation op of session in st when st's own process does not: the
// live process that wrote it last (ok), or nobody (ok false: its process stopped, or it ended).
// An operation whose process stopped is ended (process_died) in l (nil: st), as Orphaned does.
func Elsewhere(ctx context.Context, st *sqlite.Store, l operation.Log, session, op string) (w sqlite.Writer, ok bool, err error) {
	w, found := st.Writer(ctx, session, op)
	if !found || w.Self {
		return w, false, nil
	}
	if !w.Live {
		return w, false, endOrphan(ctx, l, st, session, op, w)
	}
	return w, true, nil
}
