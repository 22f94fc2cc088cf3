package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

func (s *Server) runRoutes() {
	s.mux.HandleFunc("POST /v1/runs", s.postRun)
	s.mux.HandleFunc("GET /v1/runs", s.listRuns)
	s.mux.HandleFunc("GET /v1/runs/{id}/events", s.runEvents)
	s.mux.HandleFunc("POST /v1/runs/{id}/cancel", s.cancelRun)
	s.mux.HandleFunc("POST /v1/runs/{id}/resume", s.postResume)
}

// postRun starts a run of the task in the body ({"goal", "kernel", "mode"}); the reply names it.
// Its events stream from GET /v1/runs/ID/events.
func (s *Server) postRun(w http.ResponseWriter, r *http.Request) {
	if !s.RunsAgents() {
		httpError(w, http.StatusNotImplemented, "this server runs no agent: start labmate serve with --model (or $LABMATE_MODEL)")
		return
	}
	var task runner.Task
	if !s.decode(w, r, "run task", &task) {
		return
	}
	id, err := s.StartRun(&task) // a task it refuses as written is a 400 (runner.ErrBadTask)
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}

// postResume continues an ended run from its checkpoint, when its last run_end says it can
// be: a run_resume is logged and the resumed run's events follow in its stream. The reply
// names it.
func (s *Server) postResume(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.RunInfo(r.Context(), id); err != nil && s.Running(id) == nil {
		storeError(w, err) // 404 for a run the log does not have
		return
	}
	if !s.RunsAgents() {
		httpError(w, http.StatusNotImplemented, "this server resumes no run: start labmate serve with --model (or $LABMATE_MODEL)")
		return
	}
	if err := s.Resume(r.Context(), id, "POST /v1/runs/ID/resume"); err != nil {
		code := statusOf(err, http.StatusInternalServerError)
		if errors.Is(err, protocol.ErrUnknownOperation) {
			code = http.StatusNotFound
		}
		httpError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}

// cancelRun stops a run: its running operation is interrupted and the run ends, checkpointed
// so that labmate run --resume ID can continue it.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	cancel := s.Running(id)
	if cancel == nil {
		if _, err := s.RunInfo(r.Context(), id); err != nil {
			storeError(w, err)
			return
		}
		httpError(w, http.StatusConflict, "run "+id+" has ended")
		return
	}
	cancel()
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}

// listRuns lists the runs in the log, oldest first, each with its task (from its first
// event), its events counted, its tokens, and its last run_end when it has ended. A resumed run
// is running again until its next run_end.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sessions, err := s.Store().Sessions(ctx)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	list := []runner.RunRow{}
	for _, si := range sessions {
		op, err := s.RunInfo(ctx, si.ID)
		if errors.Is(err, protocol.ErrUnknownOperation) {
			continue // a session of operations
		}
		if err == nil {
			var rw runner.RunRow
			rw, err = s.ReadRun(ctx, si.ID)
			rw.State, rw.Done, rw.Created, rw.Updated = op.State, op.State.Terminal(), fromUnix(op.Created), fromUnix(op.Updated)
			if !rw.Done {
				rw.End = nil
			}
			list = append(list, rw)
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if s.RunsAgents() {
		model := s.Model()
		if model == "" {
			model = "unnamed model"
		}
		w.Header().Set(ModelHeader, model)
	}
	writeJSON(w, http.StatusOK, list)
}

// runEvents streams a run's events after ?after=SEQ as NDJSON, from the log, live until the run
// ends; a follower that lost its connection comes back with the seq of the last line it read
// (an event's seq is its seq in the run's session). A run that ended without the agent's stop
// event (it failed, or the server stopped while it ran) has its run_end streamed as a line
// {"type": "run_end", "seq", "reason", "error", "resumable", "resume"}. The stream goes on
// across a resume (the resumed run's events begin with a run_start): it ends at a run_end
// that nothing follows while the run is not running; a follower that asks again after a
// resumable end gets what a later resume logged.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := r.PathValue("id")
	if s.Running(id) == nil {
		if _, err := s.RunInfo(r.Context(), id); err != nil {
			storeError(w, err)
			return
		}
	}
	if err := s.CheckAfter(r.Context(), id, after); err != nil {
		afterError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flush := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	var prev *protocol.EnhancedMessage // the run's latest message read
	story := agent.NewStory(id)
	for m, err := range s.FollowRun(r.Context(), id, after) {
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			return
		}
		if m.Type == protocol.TypeRunCheckpoint { // a checkpoint is the resume's, not the story's
			continue
		}
		if m.OperationID != id {
			// A message of one of the run's cells (an operation of its session): the line
			// of an operation event, as a run with kernels of its own reports it.
			if !story.In(m) {
				continue
			}
			if err := enc.Encode(story.Cell(m)); err != nil {
				return
			}
			flush.Flush()
			continue
		}
		last := prev
		prev = m
		switch m.Type {
		case protocol.TypeRunEvent:
			data, err := story.JSON(m) // the payload itself, shared with the log, when its seq is the message's
			if err != nil {
				enc.Encode(map[string]string{"error": err.Error()})
				return
			}
			if _, err := fmt.Fprintf(w, "%s\n", data); err != nil {
				return
			}
		case protocol.TypeRunEnd:
			if last == nil && m.Seq > 1 { // the follower came back after the last event: read it
				for p, err := range s.Store().After(r.Context(), id, m.Seq-2) {
					if err == nil && p.OperationID == id {
						last = p
					}
					break
				}
			}
			if last != nil && runner.StopEvent(last) {
				continue // the stop event said it all
			}
			var end protocol.RunEnd
			if err := m.Decode(&end); err != nil {
				enc.Encode(map[string]string{"error": err.Error()})
				return
			}
			line := struct {
				Type protocol.Type `json:"type"`
				Seq  int64         `json:"seq"`
				protocol.RunEnd
			}{protocol.TypeRunEnd, m.Seq, end}
			if err := enc.Encode(&line); err != nil {
				return
			}
		default:
			continue // a run_resume: the resumed run's run_start says it
		}
		flush.Flush()
	}
}

// ModelHeader is the header of GET /v1/runs that names the model agent runs use
// (Config.Agents); absent when the server runs no agent.
const ModelHeader = "Labmate-Model"

func fromUnix(f float64) time.Time { return time.Unix(0, int64(f*1e9)) }
