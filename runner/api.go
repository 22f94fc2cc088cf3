package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/protocol"
)

// Task is an agent run's task (see StartRun).
type Task = agent.Task

// Context is the runner's lifetime: cancelled when Close begins.
func (s *Runner) Context() context.Context { return s.ctx }

// Streams is done once Close has ended every operation: a subscriber drains what was
// published to it and goes.
func (s *Runner) Streams() context.Context { return s.streams }

// ID is the session's id.
func (ss *Session) ID() string { return ss.id }

// ErrBadTask is wrapped by the error of a task StartRun refuses as written.
var ErrBadTask = errors.New("run task")

// StopEvent says whether m is an agent run's stop event (which says all its run_end would).
func StopEvent(m *protocol.EnhancedMessage) bool {
	var ev struct{ Type agent.EventType }
	return m.Type == protocol.TypeRunEvent && m.Decode(&ev) == nil && ev.Type == agent.EventStop
}

// StartRun starts an agent run of task (Config.Agents) in a new session named by the run's
// new id, which it returns; its events stream into that session's log. A task without a goal,
// or with a mode other than agent, direct or codeact (empty: agent), is refused with an error
// wrapping ErrBadTask; a run beyond Limits.Runs with one wrapping ErrBusy.
func (s *Runner) StartRun(task *Task) (string, error) {
	if s.cfg.Agents == nil {
		return "", &Refusal{kind: ErrUnsupported, msg: "this server runs no agent: start labmate serve with --model (or $LABMATE_MODEL)"}
	}
	if strings.TrimSpace(task.Goal) == "" {
		return "", refuse(ErrBadTask, "%v: goal: missing", ErrBadTask)
	}
	switch task.Mode {
	case "", agent.ModeAgent, agent.ModeDirect, agent.ModeCodeAct:
	default:
		return "", refuse(ErrBadTask, "%v: mode %q: choose agent, direct or codeact", ErrBadTask, task.Mode)
	}
	t := *task
	t.ID = uuid.NewString()
	ctx, cancel := context.WithCancel(s.ctx)
	if err := s.claimRun(t.ID, cancel); err != nil {
		cancel()
		return "", err
	}
	ss, err := s.Open(t.ID)
	if err != nil {
		s.endRun(t.ID)
		cancel()
		return "", err
	}
	s.wg.Go(func() {
		s.runAndWatch(ss, t.ID, cancel, func() string {
			return s.record(ctx, ss, t.ID, s.cfg.Agents.Run(ctx, &t), 1) // a new session: its first seq is 1
		})
	})
	return t.ID, nil
}

// RunsAgents says whether the runner runs and resumes agent tasks (Config.Agents).
func (s *Runner) RunsAgents() bool { return s.cfg.Agents != nil }

// Model names the model agent runs use (Config.Agents), "" when there are none.
func (s *Runner) Model() string {
	if s.cfg.Agents == nil {
		return ""
	}
	return s.cfg.Agents.Model()
}

// ReadRun is agent run id's row: its task, events counted, tokens, and its last run_end.
func (s *Runner) ReadRun(ctx context.Context, id string) (RunRow, error) {
	return s.runsSeen.read(ctx, s.store, id)
}

// CloseSession closes ss (its operations interrupted, its kernels closed, a session_update
// that says so) and releases it; it leaves the runner's memory when nobody else holds it.
func (s *Runner) CloseSession(ctx context.Context, ss *Session) (protocol.SessionUpdate, error) {
	u, err := ss.Close(ctx)
	s.Release(ss)
	if err != nil {
		return u, err
	}
	s.mu.Lock()
	if s.sessions[ss.id] == ss && ss.refs == 0 {
		delete(s.sessions, ss.id)
	}
	s.mu.Unlock()
	return u, nil
}

// BenchView is the bench of session id as the dashboard draws it.
func (s *Runner) BenchView(ctx context.Context, id string) (*BenchView, error) {
	d, err := s.Bench(ctx, id)
	if err != nil {
		return nil, err
	}
	lib, err := spectra()
	if err != nil {
		return nil, fmt.Errorf("bench spectra: %w", err)
	}
	v, err := benchrun.View(d, lib)
	if err != nil {
		return nil, err
	}
	return &BenchView{Labware: v, Readings: s.Readings(id)}, nil
}
