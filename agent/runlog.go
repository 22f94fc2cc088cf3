package agent

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// LogRun writes run id's events to l as the run's stream in the protocol log — the one story
// every client follows — and yields each event as logged, its seq the session's. The stream is in the
// run's own session, named by its id, beside the operations of the run's cells (Options.Cells)
// and the run's checkpoints (Checkpoints, saved before the event they precede): one run_event
// per event, its payload the event with its seq set to the seq the message is expected to get
// in the session (a reader takes the message's, EventOf, so that a follower's after=SEQ is the
// seq of the last event it read), then a run_end: endOf of the stop event, or the error that
// ended the run. The run_end is logged whatever ctx says, so that a cancelled run's end is
// recorded. A message l refuses goes to warn and does not stop the run.
func LogRun(ctx context.Context, l operation.Log, id string, next int64, events iter.Seq2[*Event, error],
	endOf func(*Stop) *protocol.RunEnd, warn func(error)) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		logCtx := context.WithoutCancel(ctx)
		end := &protocol.RunEnd{Reason: protocol.ReasonError, Error: "the run ended without stopping"}
		defer func() {
			if _, err := AppendRun(logCtx, l, protocol.TypeRunEnd, id, end); err != nil {
				warn(fmt.Errorf("run %s: logging its end: %w", id, err))
			}
		}()
		for ev, err := range events {
			if err != nil {
				end = &protocol.RunEnd{Reason: protocol.ReasonError, Error: err.Error()}
				if !yield(nil, err) {
					return
				}
				continue
			}
			if ev.Type == EventStop && ev.Stop != nil {
				end = endOf(ev.Stop)
			}
			// The agent's seq counts its events; a follower needs the session's, after the
			// run's checkpoints (Checkpoints), which are in the same stream.
			logged := *ev
			if ev.after >= next {
				next = ev.after + 1
			}
			logged.Seq = next
			if m, err := AppendRun(logCtx, l, protocol.TypeRunEvent, id, &logged); err != nil {
				warn(fmt.Errorf("run %s: logging event %d: %w", id, ev.Seq, err))
			} else {
				// The run's cells (Options.Cells) write in the session too: the seq
				// expected is then behind, and readers take the message's (EventOf).
				logged.Seq, next = m.Seq, m.Seq+1
			}
			if !yield(&logged, nil) {
				return
			}
		}
	}
}

// EventOf decodes the event run_event m carries, its Seq the message's seq in the session.
func EventOf(m *protocol.EnhancedMessage) (*Event, error) {
	var ev Event
	if err := m.Decode(&ev); err != nil {
		return nil, err
	}
	ev.Seq = m.Seq
	return &ev, nil
}

// CellEvent is a message of one of run id's cells (an operation of the run's session, with
// Options.Cells) as the run's event stream reports it: the operation event a run with kernels
// of its own emits, its seq the message's.
func CellEvent(id string, m *protocol.EnhancedMessage) *Event {
	return &Event{RunID: id, Seq: m.Seq, Type: EventOperation, Time: time.Unix(0, int64(m.Timestamp*1e9)), Message: m}
}

// RunEndOf is the run_end of a run that stopped so: its reason, error and whether it can be
// resumed.
func RunEndOf(stop *Stop) *protocol.RunEnd {
	return &protocol.RunEnd{Reason: protocol.Reason(stop.Reason), Error: stop.Error, Resumable: stop.Resumable}
}

// AppendRun logs a message of run id in its session, which has the run's id.
func AppendRun(ctx context.Context, l operation.Log, t protocol.Type, id string, payload any) (*protocol.EnhancedMessage, error) {
	m, err := protocol.NewMessage(t, id, id, payload)
	if err != nil {
		return nil, err
	}
	return l.Append(ctx, m)
}
