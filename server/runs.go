package server

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/agent"
)

// RunFunc runs an agent task (cmd/labmate wires agent.Agent.Run with a workspace per run).
type RunFunc func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error]

// agentRun is one run started over the API: its events so far, kept in memory for the
// server's lifetime (the durable record is the agent's checkpoint store), and a channel closed
// and replaced at every new event, so followers wait without polling.
type agentRun struct {
	mu      sync.Mutex
	task    agent.Task
	events  []*agent.Event
	err     string
	done    bool
	changed chan struct{}
	created time.Time
	cancel  context.CancelFunc
}

func (r *agentRun) add(ev *agent.Event, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev != nil {
		r.events = append(r.events, ev)
	}
	if err != nil {
		r.err = err.Error()
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *agentRun) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	close(r.changed)
	r.changed = make(chan struct{})
}

// after returns the events after seq, whether the run has ended, and the channel that closes at
// the next change.
func (r *agentRun) after(seq int64) ([]*agent.Event, bool, string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 0
	for i < len(r.events) && r.events[i].Seq <= seq {
		i++
	}
	return r.events[i:], r.done, r.err, r.changed
}

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
	run := &agentRun{task: task, changed: make(chan struct{}), created: time.Now(), cancel: cancel}
	if err := s.addRun(run); err != nil {
		cancel()
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	s.wg.Go(func() {
		defer run.finish()
		defer cancel()
		for ev, err := range s.cfg.Runs(ctx, &task) {
			run.add(ev, err)
			if err != nil {
				s.logf("run %s: %v", task.ID, err)
			}
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]string{"id": task.ID})
}

// keptRuns is how many ended runs the server keeps in memory (GET /v1/runs and their
// events); the oldest ended ones are forgotten first. Their checkpoints stay in the store.
const keptRuns = 256

// addRun registers a new run, unless Config.MaxRuns are running already; it forgets the
// oldest ended runs beyond keptRuns.
func (s *Server) addRun(run *agentRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*agentRun{}
	}
	var running int
	var ended []*agentRun
	for _, r := range s.runs {
		r.mu.Lock()
		if r.done {
			ended = append(ended, r)
		} else {
			running++
		}
		r.mu.Unlock()
	}
	if running >= s.cfg.MaxRuns {
		return busy(http.StatusServiceUnavailable, "%d agent runs are running, the server's limit (labmate serve --max-runs): wait for one to end or cancel one (POST /v1/runs/ID/cancel)", running)
	}
	if len(ended) >= keptRuns {
		slices.SortFunc(ended, func(a, b *agentRun) int { return a.created.Compare(b.created) })
		for _, r := range ended[:len(ended)-keptRuns+1] {
			delete(s.runs, r.task.ID)
		}
	}
	s.runs[run.task.ID] = run
	return nil
}

// cancelRun stops a run: its running operation is interrupted and the run ends, checkpointed
// so that labmate run --resume ID can continue it.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	run := s.runs[r.PathValue("id")]
	s.mu.Unlock()
	if run == nil {
		httpError(w, http.StatusNotFound, "no run "+r.PathValue("id")+" on this server")
		return
	}
	run.cancel()
	writeJSON(w, http.StatusAccepted, map[string]string{"id": r.PathValue("id")})
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	type row struct {
		ID      string     `json:"id"`
		Task    agent.Task `json:"task"`
		Events  int        `json:"events"`
		Done    bool       `json:"done"`
		Created time.Time  `json:"created"`
	}
	s.mu.Lock()
	list := make([]row, 0, len(s.runs))
	for id, run := range s.runs {
		run.mu.Lock()
		list = append(list, row{id, run.task, len(run.events), run.done, run.created})
		run.mu.Unlock()
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, list)
}

// runEvents streams a run's events after ?after=SEQ as NDJSON, live until the run ends; a
// follower that lost its connection comes back with the last seq it read.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	run := s.runs[r.PathValue("id")]
	s.mu.Unlock()
	if run == nil {
		httpError(w, http.StatusNotFound, "no run "+r.PathValue("id")+" on this server")
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flush := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	for {
		evs, done, failure, changed := run.after(after)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				return
			}
			after = ev.Seq
		}
		if done {
			if failure != "" {
				enc.Encode(map[string]string{"error": failure})
			}
			flush.Flush()
			return
		}
		flush.Flush()
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.streams.Done():
			return
		}
	}
}
