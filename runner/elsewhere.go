package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner/locallog"
)

// Operations another process runs. Every labmate process that runs a runner over the data
// directory's log — labmate serve, labmate run (Config.Guest), labmate mcp --log — runs its
// operations itself, in its own kernels. An interrupt asked of another one (the dashboard's
// Interrupt, POST /v1/sessions/S/operations/OP/interrupt, a WebSocket operation_interrupt, the
// MCP interrupt tool) reaches the process that runs the operation through the log, the one bus
// they share: the runner asked appends the operation_interrupt, checked against the
// operation's state in the file like any message, and the runner of the owning process, which
// follows what others append (tailLog), stops its operation as its own Interrupt would
// (interrupted, the workspace kept). An operation whose process stopped while it ran is ended
// in the log (process_died) and the interrupt refused, saying so; one whose process follows no
// interrupts is refused, naming that process. The processes that run operations without a
// runner — labmate exec, lab run, campaign run (a campaign's stream is interrupted as an
// operation is) — follow them with a Host (host.go).

// followsInterrupts are the roles (sqlite.OpenAs) of the processes that follow the interrupts
// other processes append for their operations: with a runner, or a Host.
var followsInterrupts = []string{"serve", "run", "mcp", "exec", "lab", "campaign"}

// interruptElsewhere is Interrupt of operation opID of session, which this runner does not run.
func (s *Runner) interruptElsewhere(ctx context.Context, session, opID string, in *protocol.Interrupt) error {
	ops, err := s.store.Operations(ctx, session)
	if err != nil && !errors.Is(err, protocol.ErrUnknownSession) {
		return err
	}
	i := slices.IndexFunc(ops, func(o protocol.OperationInfo) bool { return o.ID == opID })
	switch {
	case i < 0:
		return fmt.Errorf("%w: operation %q of session %q: the log has no such operation (%w)", ErrNotRunning, opID, session, protocol.ErrIllegalTransition)
	case ops[i].State.Terminal():
		return fmt.Errorf("%w: operation %q of session %q has ended (%s)", ErrNotRunning, opID, session, ops[i].State)
	case ops[i].Kind == protocol.KindJob:
		return refuse(ErrUnsupported, "operation %s of session %s is a job: cancel the job (POST /v1/jobs/ID/cancel, labmate job cancel ID)", opID, session)
	case ops[i].Kind == protocol.KindAgentRun:
		return refuse(ErrUnsupported, "%s is an agent run: cancel it (POST /v1/runs/%s/cancel)", opID, opID)
	}
	st, ok := s.store.(*sqlite.Store)
	if !ok { // a log no other process writes
		return fmt.Errorf("%w: operation %q of session %q is not queued or running in this process", ErrNotRunning, opID, session)
	}
	var l operation.Log // the session's here, when it is live: its followers see what is appended
	if ss := s.Lookup(session); ss != nil {
		l = ss
	}
	w, live, err := locallog.Elsewhere(ctx, st, l, session, opID)
	switch {
	case err != nil:
		return err
	case !live && w.Role != "" && !w.Self:
		return fmt.Errorf("%w: operation %q of session %q was run by labmate %s (pid %d), which stopped while it ran: the log now ends it (%s)",
			ErrNotRunning, opID, session, w.Role, w.Pid, protocol.ReasonProcessDied)
	case !live:
		return fmt.Errorf("%w: operation %q of session %q is not queued or running in this process, and no other process runs it", ErrNotRunning, opID, session)
	case !slices.Contains(followsInterrupts, w.Role):
		return refuse(ErrUnsupported, "operation %s of session %s is run by labmate %s (pid %d), which takes no interrupts from other processes: stop it there (Ctrl-C)",
			opID, session, w.Role, w.Pid)
	}
	m, err := protocol.NewMessage(protocol.TypeInterrupt, session, opID, in)
	if err != nil {
		return err
	}
	if l == nil {
		l = s.store
	}
	if _, err := l.Append(ctx, m); err != nil {
		if errors.Is(err, protocol.ErrIllegalTransition) {
			return fmt.Errorf("%w: operation %q of session %q: %w", ErrNotRunning, opID, session, err)
		}
		return err
	}
	return s.durable(ctx) // the caller tells its client the interrupt is taken: the other process sees it then
}

// interrupted stops operation opID of ss when this runner runs it: another process appended
// an operation_interrupt for it (tailLog).
func (ss *Session) interrupted(opID string) {
	ss.mu.Lock()
	o := ss.running[opID]
	ss.mu.Unlock()
	if o != nil {
		ss.stop(o)
	}
}
