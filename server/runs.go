package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// RunFunc runs an agent task (cmd/labmate wires agent.Agent.Run with a workspace per run).
type RunFunc func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error]

// Each agent run is a stream in the protocol log: its own session, named by the run's id, in
// which the run's id is the operation id of one run_event per agent event — the event's seq is
// its seq in the session — and then one run_end. Clients follow it from the log, on
// GET /v1/runs/ID/events (the events as NDJSON) or the session's WebSocket (the messages). The
// server keeps in memory only how to cancel the runs it is running.

func (s *Server) runRoutes() {
	s.mux.HandleFunc("POST /v1/runs", s.postRun)
	s.mux.HandleFunc("GET /v1/runs", s.listRuns)
	s.mux.HandleFunc("GET /v1/runs/{id}/events", s.runEvents)
	s.mux.HandleFunc("POST /v1/runs/{id}/cancel", s.cancelRun)
}

// postRun starts a run of the task in the body ({"goal", "kernel", "mode"}); the reply names it.
// Its events stream from GET /v1/runs/ID/events.
func (s *Server) postRun(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Runs == nil {
		httpError(w, http.StatusNotImplemented, "this server runs no agent: start labmate serve with --model (or $LABMATE_MODEL)")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageBytes)
	var task agent.Task
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&task); err != nil {
		httpError(w, http.StatusBadRequest, "run task: "+err.Error())
		return
	}
	if strings.TrimSpace(task.Goal) == "" {
		httpError(w, http.StatusBadRequest, "run task: goal: missing")
		return
	}
	switch task.Mode {
	case "", agent.ModeAgent, agent.ModeDirect, agent.ModeCodeAct:
	default:
		httpError(w, http.StatusBadRequest, `run task: mode "`+string(task.Mode)+`": choose agent, direct or codeact`)
		return
	}
	task.ID = uuid.NewString()
	ctx, cancel := context.WithCancel(s.ctx)
	ss, err := s.startRun(task.ID, cancel)
	if err != nil {
		cancel()
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	s.wg.Go(func() {
		defer s.release(ss)
		defer s.endRun(task.ID)
		defer cancel()
		s.record(ctx, ss, &task)
	})
	writeJSON(w, http.StatusAccepted, map[string]string{"id": task.ID})
}

// startRun registers run id, unless Config.MaxRuns are running already, and opens its session.
func (s *Server) startRun(id string, cancel context.CancelFunc) (*session, error) {
	s.mu.Lock()
	if len(s.runs) >= s.cfg.MaxRuns {
		n := len(s.runs)
		s.mu.Unlock()
		return nil, busy(http.StatusServiceUnavailable, "%d agent runs are running, the server's limit (labmate serve --max-runs): wait for one to end or cancel one (POST /v1/runs/ID/cancel)", n)
	}
	if s.runs == nil {
		s.runs = map[string]context.CancelFunc{}
	}
	s.runs[id] = cancel
	s.mu.Unlock()
	ss, err := s.open(id)
	if err != nil {
		s.endRun(id)
		return nil, err
	}
	return ss, nil
}

func (s *Server) endRun(id string) {
	s.mu.Lock()
	delete(s.runs, id)
	s.mu.Unlock()
}

// record runs the task and logs its events in its session, then its run_end: how the agent
// stopped, or the error that ended the run. The log is written whatever ctx says, so that a
// cancelled run's end is recorded.
func (s *Server) record(ctx context.Context, ss *session, task *agent.Task) {
	logCtx := context.WithoutCancel(ctx)
	end := &protocol.RunEnd{Reason: protocol.ReasonError, Error: "the run ended without stopping"}
	for ev, err := range s.cfg.Runs(ctx, task) {
		if err != nil {
			s.logf("run %s: %v", task.ID, err)
			end = &protocol.RunEnd{Reason: protocol.ReasonError, Error: err.Error()}
			continue
		}
		if ev.Type == agent.EventStop && ev.Stop != nil {
			end = &protocol.RunEnd{Reason: protocol.Reason(ev.Stop.Reason), Error: ev.Stop.Error, Resumable: ev.Stop.Resumable}
			if end.Resumable && s.cfg.ResumeCommand != nil {
				end.Resume = s.cfg.ResumeCommand(task.ID)
			}
		}
		if err := appendRun(logCtx, ss, protocol.TypeRunEvent, task.ID, ev); err != nil {
			s.logf("run %s: logging event %d: %v", task.ID, ev.Seq, err)
		}
	}
	if err := appendRun(logCtx, ss, protocol.TypeRunEnd, task.ID, end); err != nil {
		s.logf("run %s: logging its end: %v", task.ID, err)
	}
}

// appendRun logs a message of run id in its session, which has the run's id.
func appendRun(ctx context.Context, l operation.Log, t protocol.Type, id string, payload any) error {
	m, err := protocol.NewMessage(t, id, id, payload)
	if err != nil {
		return err
	}
	_, err = l.Append(ctx, m)
	return err
}

// closeRuns ends the runs a previous server left running (killed, or the machine went down)
// with a run_end of reason server_restart that says how to resume them from their checkpoints
// (Config.ResumeCommand), or that this server cannot. It returns how many it closed.
func closeRuns(ctx context.Context, store protocol.Store, resume func(id string) string) (int, error) {
	sessions, err := store.Sessions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, si := range sessions {
		ops, err := store.Operations(ctx, si.ID)
		if err != nil {
			return n, err
		}
		for _, op := range ops {
			if op.Kind != protocol.KindAgentRun || !op.State.Live() {
				continue
			}
			end := &protocol.RunEnd{Reason: protocol.ReasonServerRestart,
				Error: "the server stopped while the run ran, and this server cannot resume runs"}
			if resume != nil {
				end.Resumable, end.Resume = true, resume(op.ID)
				end.Error = "the server stopped while the run ran; its checkpoint continues it: " + end.Resume
			}
			m, err := protocol.NewMessage(protocol.TypeRunEnd, si.ID, op.ID, end)
			if err == nil {
				_, err = store.Append(ctx, m)
			}
			if err != nil {
				return n, fmt.Errorf("closing run %s: %w", op.ID, err)
			}
			n++
		}
	}
	return n, nil
}

// running returns the cancel function of run id when the server is running it.
func (s *Server) running(id string) context.CancelFunc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// runInfo returns run id's stream as the log lists it, or an error wrapping
// protocol.ErrUnknownOperation when the log has no such run. A run that has only just
// started may have nothing in the log yet: see running.
func (s *Server) runInfo(ctx context.Context, id string) (*protocol.OperationInfo, error) {
	ops, err := s.store.Operations(ctx, id)
	if errors.Is(err, protocol.ErrUnknownSession) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.ID == id && op.Kind == protocol.KindAgentRun {
			return &op, nil
		}
	}
	return nil, fmt.Errorf("%w: no run %s on this server", protocol.ErrUnknownOperation, id)
}

// cancelRun stops a run: its running operation is interrupted and the run ends, checkpointed
// so that labmate run --resume ID can continue it.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	cancel := s.running(id)
	if cancel == nil {
		if _, err := s.runInfo(r.Context(), id); err != nil {
			storeError(w, err)
			return
		}
		httpError(w, http.StatusConflict, "run "+id+" has ended")
		return
	}
	cancel()
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}

// listRuns lists the runs in the log, oldest first, each with its task (from its first event)
// and, once it has ended, its run_end's reason and whether it is resumable, and its tokens.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	type row struct {
		ID      string         `json:"id"`
		Task    *agent.Task    `json:"task,omitempty"`
		State   protocol.State `json:"state"`
		Events  int64          `json:"events"`
		Done    bool           `json:"done"`
		Created time.Time      `json:"created"`
		Updated time.Time      `json:"updated"`
		// From the run's latest run_end, once it has ended: why, and whether it can be resumed.
		Reason    protocol.Reason `json:"reason,omitempty"`
		Error     string          `json:"error,omitempty"`
		Resumable bool            `json:"resumable,omitempty"`
		// The tokens the run's model calls used (input + output), from its stop event.
		Tokens int64 `json:"tokens,omitempty"`
	}
	ctx := r.Context()
	sessions, err := s.store.Sessions(ctx)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	list := []row{}
	for _, si := range sessions {
		op, err := s.runInfo(ctx, si.ID)
		if errors.Is(err, protocol.ErrUnknownOperation) {
			continue // a session of operations
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		rw := row{ID: op.ID, State: op.State, Events: si.LastSeq, Done: op.State.Terminal(),
			Created: fromUnix(op.Created), Updated: fromUnix(op.Updated)}
		if rw.Done {
			rw.Events-- // its run_end
			s.runEnd(ctx, &si, &rw.Reason, &rw.Error, &rw.Resumable, &rw.Tokens)
		}
		if n, err := s.updates(ctx, si.ID); err == nil {
			rw.Events -= n // the session's own stream (its name)
		}
		for m, err := range s.store.Operation(ctx, si.ID, op.ID) {
			var ev agent.Event
			if err == nil && m.Type == protocol.TypeRunEvent && m.Decode(&ev) == nil && ev.Start != nil {
				rw.Task = &ev.Start.Task
			}
			break
		}
		list = append(list, rw)
	}
	if s.cfg.Runs != nil {
		model := s.cfg.Model
		if model == "" {
			model = "unnamed model"
		}
		w.Header().Set(ModelHeader, model)
	}
	writeJSON(w, http.StatusOK, list)
}

// ModelHeader is the header of GET /v1/runs that names the model agent runs use
// (Config.Model); absent when the server runs no agent.
const ModelHeader = "Labmate-Model"

// runEnd reads an ended run's latest run_end and stop event, from the end of its session.
func (s *Server) runEnd(ctx context.Context, si *protocol.SessionInfo, reason *protocol.Reason, msg *string, resumable *bool, tokens *int64) {
	const tail = 8 // the stop event and the run_end, and the session's updates that followed them
	for m, err := range s.store.After(ctx, si.ID, si.LastSeq-tail) {
		if err != nil {
			return
		}
		switch {
		case m.OperationID != si.ID:
		case m.Type == protocol.TypeRunEnd:
			var e protocol.RunEnd
			if m.Decode(&e) == nil {
				*reason, *msg, *resumable = e.Reason, e.Error, e.Resumable
			}
		case m.Type == protocol.TypeRunEvent:
			var ev agent.Event
			if m.Decode(&ev) == nil && ev.Type == agent.EventStop && ev.Stop != nil {
				*tokens = 0
				for _, u := range ev.Stop.Stats.Modules {
					*tokens += u.Total()
				}
			}
		}
	}
}

// updates counts the session_update messages of session id.
func (s *Server) updates(ctx context.Context, id string) (int64, error) {
	var n int64
	for _, err := range s.store.Operation(ctx, id, protocol.SessionStream) {
		if errors.Is(err, protocol.ErrUnknownOperation) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func fromUnix(f float64) time.Time { return time.Unix(0, int64(f*1e9)) }

// runEvents streams a run's events after ?after=SEQ as NDJSON, from the log, live until the run
// ends; a follower that lost its connection comes back with the last seq it read. A run that
// ended without the agent's stop event (it failed, or the server stopped while it ran) ends the
// stream with its run_end's payload, which says why ("error") and how to resume it.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := r.PathValue("id")
	if s.running(id) == nil {
		if _, err := s.runInfo(r.Context(), id); err != nil {
			storeError(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flush := http.NewResponseController(w)
	var prev *protocol.EnhancedMessage // the run's latest event streamed
	for m, err := range s.followRun(r.Context(), id, after) {
		if err != nil {
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		if m.OperationID != id {
			continue
		}
		switch m.Type {
		case protocol.TypeRunEvent:
			prev = m
		case protocol.TypeRunEnd:
			if prev == nil && m.Seq > 1 { // the follower resumed after the last event: read it
				for p, err := range s.store.After(r.Context(), id, m.Seq-2) {
					if err == nil && p.Type == protocol.TypeRunEvent {
						prev = p
					}
					break
				}
			}
			var ev struct{ Type agent.EventType }
			if prev != nil && prev.Decode(&ev) == nil && ev.Type == agent.EventStop {
				continue
			}
		default:
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", m.Payload); err != nil { // the payload is shared with the log
			return
		}
		flush.Flush()
	}
}

// followRun yields the messages of run id's session with seq > after, from the log, live until
// the run's run_end. The live session's fan-out only says that something was appended: a
// subscriber with room for one frame, which is cut off (and so woken) at the second.
func (s *Server) followRun(ctx context.Context, id string, after int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		for {
			ss := s.lookup(id)
			var sub *subscriber
			if ss != nil {
				sub = ss.subscribe(1)
			}
			done := func() bool {
				if ss != nil {
					defer ss.unsubscribe(sub)
				}
				for m, err := range s.store.After(ctx, id, after) {
					if errors.Is(err, protocol.ErrUnknownSession) && ss != nil {
						break // the run has only just started: nothing is logged yet
					}
					if err != nil {
						yield(nil, err)
						return true
					}
					after = m.Seq
					if !yield(m, nil) || (m.Type == protocol.TypeRunEnd && m.OperationID == id) {
						return true
					}
				}
				if ss == nil {
					yield(nil, fmt.Errorf("run %s is not running on this server and its log has no end", id))
					return true
				}
				select {
				case <-sub.ch:
				case <-sub.dropped:
				case <-ctx.Done():
					return true
				}
				return false
			}()
			if done {
				return
			}
		}
	}
}
