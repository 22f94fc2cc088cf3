package agent

import (
	"context"
	"fmt"
	"iter"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// LogRun writes run id's events to l as the run's stream in the protocol log — the one story
// every client follows — and yields each event as logged, its seq the session's. The stream is in the
// run's own session, named by its id, whose one writer is the caller: one run_event per
// event, its payload the event with its seq set to the message's seq in the session (next,
// next+1, …, so that a follower's after=SEQ is the seq of the last event it read), then a
// run_end: endOf of the stop event, or the error that ended the run. The run's checkpoints
// (Checkpoints), saved in the same stream before the event they precede, take their seqs.
// The run_end is logged whatever ctx says, so that a cancelled run's end is recorded. A
// message l refuses goes to warn and does not stop the run.
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
				if m.Seq != logged.Seq {
					warn(fmt.Errorf("run %s: event %d logged at seq %d, not %d: something else writes in the run's session", id, ev.Seq, m.Seq, logged.Seq))
				}
				next = m.Seq + 1
			}
			if !yield(&logged, nil) {
				return
			}
		}
	}
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
