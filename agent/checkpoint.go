package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"time"

	"github.com/labmate/labmate/protocol"
)

// CheckpointLog is what Checkpoints keeps runs in: the protocol log (protocol.Store).
type CheckpointLog interface {
	Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error)
	Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*protocol.EnhancedMessage, error]
	Sessions(ctx context.Context) ([]protocol.SessionInfo, error)
	Operations(ctx context.Context, sessionID string) ([]protocol.OperationInfo, error)
}

// Checkpoints is the Store of runs in the protocol log: each checkpoint is a run_checkpoint
// message of the run's own stream (its session and operation are the run's id, beside its
// run_events, LogRun), its payload the State; Load reads the stream back and takes the last.
// Each Save is committed before it returns when the log can say so (a Sync method, as
// protocol/sqlite's), so that a run killed at any point resumes from its last checkpoint.
type Checkpoints struct {
	log CheckpointLog
}

var _ Store = (*Checkpoints)(nil)

// NewCheckpoints keeps runs' checkpoints in log.
func NewCheckpoints(log CheckpointLog) *Checkpoints { return &Checkpoints{log: log} }

// Save implements Store.
func (c *Checkpoints) Save(ctx context.Context, st *State) error {
	_, err := c.save(ctx, st)
	return err
}

// save appends st to its run's stream and returns the message's seq, which the run's next
// event follows (LogRun).
func (c *Checkpoints) save(ctx context.Context, st *State) (int64, error) {
	m, err := protocol.NewMessage(protocol.TypeRunCheckpoint, st.RunID, st.RunID, st)
	if err != nil {
		return 0, fmt.Errorf("agent: encoding the state of run %s: %w", st.RunID, err)
	}
	if m, err = c.log.Append(ctx, m); err != nil {
		return 0, fmt.Errorf("agent: checkpointing run %s: %w", st.RunID, err)
	}
	if s, ok := c.log.(interface{ Sync(context.Context) error }); ok {
		if err := s.Sync(ctx); err != nil {
			return 0, fmt.Errorf("agent: checkpointing run %s: %w", st.RunID, err)
		}
	}
	return m.Seq, nil
}

// Load implements Store: the run's last checkpoint in its stream.
func (c *Checkpoints) Load(ctx context.Context, id string) (*State, error) {
	var last *protocol.EnhancedMessage
	for m, err := range c.log.Operation(ctx, id, id) {
		if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("agent: reading run %s: %w", id, err)
		}
		if m.Type == protocol.TypeRunCheckpoint {
			last = m
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%w: %q has no checkpoint in the log", ErrUnknownRun, id)
	}
	var st State
	if err := last.Decode(&st); err != nil {
		return nil, fmt.Errorf("agent: the checkpoint of run %s (seq %d) is unreadable: %w", id, last.Seq, err)
	}
	return &st, nil
}

// RunSummary is a run as a list shows it (Checkpoints.Runs).
type RunSummary struct {
	ID    string `json:"id"`
	Goal  string `json:"goal"`
	Mode  string `json:"mode"`
	Phase string `json:"phase"`
	Model string `json:"model,omitempty"`
	// Stop is why the run stopped last; empty while it has not. Resumable says it stopped
	// keeping its phase (interrupted, or its provider failed): Resume continues it.
	Stop      StopReason `json:"stop,omitempty"`
	Resumable bool       `json:"resumable,omitempty"`
	Tokens    int64      `json:"tokens"` // input and output, every module
	Events    int64      `json:"events"`
	Created   time.Time  `json:"created"`
	Updated   time.Time  `json:"updated"`
}

// Summarize is st as a list shows it; created and updated are its stream's first and last
// messages' times.
func Summarize(st *State, created, updated time.Time) RunSummary {
	r := RunSummary{ID: st.RunID, Goal: st.Task.Goal, Mode: string(st.Task.Mode), Phase: string(st.Phase),
		Model: st.Model, Events: st.Seq, Created: created, Updated: updated}
	if st.Stop != nil {
		r.Stop, r.Resumable = st.Stop.Reason, st.Phase != PhaseDone
	}
	for _, mu := range st.Usage {
		r.Tokens += mu.Total()
	}
	return r
}

// Runs lists the runs with a checkpoint in the log, the latest updated first.
func (c *Checkpoints) Runs(ctx context.Context) ([]RunSummary, error) {
	sessions, err := c.log.Sessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent: listing runs: %w", err)
	}
	var out []RunSummary
	for _, si := range sessions {
		ops, err := c.log.Operations(ctx, si.ID)
		if err != nil {
			return nil, fmt.Errorf("agent: listing runs: %w", err)
		}
		for _, op := range ops {
			if op.ID != si.ID || op.Kind != protocol.KindAgentRun {
				continue
			}
			st, err := c.Load(ctx, op.ID)
			if errors.Is(err, ErrUnknownRun) {
				continue // a run that stopped before its first checkpoint
			}
			if err != nil {
				return nil, err
			}
			out = append(out, Summarize(st, unixTime(op.Created), unixTime(op.Updated)))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

func unixTime(f float64) time.Time { return time.Unix(0, int64(f*1e9)) }

// ImportRun puts st, a checkpoint kept before runs were checkpointed in the log (runs.db),
// into run st.RunID's stream, unless the stream has a checkpoint already; it reports whether
// it did. A run the log does not have gets a stream of that checkpoint and a run_end: how the
// run stopped (RunEndOf), or, when it never did (its process was killed), resumable. The
// times are the checkpoint's.
func (c *Checkpoints) ImportRun(ctx context.Context, st *State, updated time.Time) (bool, error) {
	if _, err := c.Load(ctx, st.RunID); err == nil {
		return false, nil
	} else if !errors.Is(err, ErrUnknownRun) {
		return false, err
	}
	fresh := true
	for _, err := range c.log.Operation(ctx, st.RunID, st.RunID) {
		fresh = errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation)
		break
	}
	cp, err := protocol.NewMessage(protocol.TypeRunCheckpoint, st.RunID, st.RunID, st)
	if err != nil {
		return false, err
	}
	cp.Timestamp = float64(updated.UnixNano()) / 1e9
	if _, err := c.log.Append(ctx, cp); err != nil {
		return false, fmt.Errorf("agent: importing run %s: %w", st.RunID, err)
	}
	if !fresh {
		return true, nil
	}
	end := &protocol.RunEnd{Reason: protocol.ReasonProcessDied, Resumable: true,
		Error: "the run stopped (killed?) before runs were logged; its checkpoint continues it"}
	if st.Stop != nil {
		end = RunEndOf(st.Stop)
	}
	m, err := protocol.NewMessage(protocol.TypeRunEnd, st.RunID, st.RunID, end)
	if err == nil {
		m.Timestamp = cp.Timestamp
		_, err = c.log.Append(ctx, m)
	}
	if err != nil {
		return true, fmt.Errorf("agent: importing run %s: %w", st.RunID, err)
	}
	return true, nil
}
