package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

func (s *Server) jobRoutes() {
	s.mux.HandleFunc("POST /v1/jobs", s.postJob)
	s.mux.HandleFunc("GET /v1/jobs", s.listJobs)
	s.mux.HandleFunc("GET /v1/jobs/{id}", s.getJob)
	s.mux.HandleFunc("GET /v1/jobs/{id}/logs", s.jobLogs)
	s.mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.cancelJob)
}

// JobView is a job as GET /v1/jobs lists it: its status, the scheduler that holds it, and
// the session and operation that follow it in the log (empty while the log has none).
type JobView struct {
	*job.Status
	Scheduler string `json:"scheduler"`
	Session   string `json:"session"`
	Operation string `json:"operation"`
}

// jobBody is POST /v1/jobs: a job.Spec and the scheduler to submit it to.
type jobBody struct {
	job.Spec
	Scheduler string `json:"scheduler,omitempty"`
}

func (s *Server) noJobs(w http.ResponseWriter) bool {
	if s.cfg.Jobs == nil {
		httpError(w, http.StatusNotImplemented, "this server runs no jobs: labmate serve runs them where local jobs can run (bubblewrap) or a Slurm cluster is configured")
		return true
	}
	return false
}

func (s *Server) postJob(w http.ResponseWriter, r *http.Request) {
	if s.noJobs(w) {
		return
	}
	var b jobBody
	if !s.decode(w, r, "job spec", &b) {
		return
	}
	kind := b.Scheduler
	if kind == "" {
		kind = "local"
		if s.cfg.Jobs["local"] == nil && len(s.JobKinds()) == 1 {
			kind = s.JobKinds()[0]
		}
	}
	id, err := s.SubmitJob(r.Context(), kind, &b.Spec)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, runner.ErrJobSpec) {
			code = http.StatusBadRequest
		}
		httpError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": string(id), "session": string(id), "operation": string(id)})
}

// view is st with where it is in the log.
func (s *Server) view(ctx context.Context, st *job.Status) *JobView {
	v := &JobView{Status: st, Scheduler: job.Kind(st.ID)}
	id := string(st.ID)
	logged := s.Followed(st.ID)
	if !logged {
		if ops, err := s.Store().Operations(ctx, id); err == nil {
			logged = slices.ContainsFunc(ops, func(o protocol.OperationInfo) bool { return o.ID == id })
		}
	}
	if logged {
		v.Session, v.Operation = id, id
	}
	return v
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	if s.noJobs(w) {
		return
	}
	all, err := s.cfg.Jobs.List(r.Context())
	if err != nil {
		httpError(w, http.StatusBadGateway, err.Error())
		return
	}
	slices.Reverse(all)
	out := make([]*JobView, 0, len(all))
	for _, st := range all {
		out = append(out, s.view(r.Context(), st))
	}
	writeJSON(w, http.StatusOK, out)
}

// jobStatus is the status of the job the path names, or a reply saying why there is none.
func (s *Server) jobStatus(w http.ResponseWriter, r *http.Request) (job.Scheduler, *job.Status, bool) {
	if s.noJobs(w) {
		return nil, nil, false
	}
	id := job.ID(r.PathValue("id"))
	sched, err := s.cfg.Jobs.For(id)
	if err == nil {
		var st *job.Status
		if st, err = sched.Status(r.Context(), id); err == nil {
			return sched, st, true
		}
	}
	code := http.StatusBadGateway
	if errors.Is(err, job.ErrUnknownJob) {
		code = http.StatusNotFound
	}
	httpError(w, code, err.Error())
	return nil, nil, false
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	if _, st, ok := s.jobStatus(w, r); ok {
		writeJSON(w, http.StatusOK, s.view(r.Context(), st))
	}
}

// jobLogs serves GET /v1/jobs/ID/logs?after=N&follow=1: the job's log lines with seq > N as
// NDJSON (job.Line); with follow, more as they come until the job has ended. An error after
// the first line is a last line {"error": …}.
func (s *Server) jobLogs(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	follow := false
	switch f := r.URL.Query().Get("follow"); f {
	case "", "0", "false":
	case "1", "true":
		follow = true
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("follow %q: give 1 or 0", f))
		return
	}
	sched, st, ok := s.jobStatus(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	ctx := r.Context()
	if follow {
		// A follower outlives no server: it ends when the server does.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.Context(), cancel)
		defer stop()
	}
	for l, err := range sched.Logs(ctx, st.ID, after, follow) {
		if err != nil {
			if ctx.Err() == nil {
				enc.Encode(map[string]string{"error": err.Error()})
			}
			return
		}
		if enc.Encode(l) != nil {
			return
		}
		if follow && fl != nil {
			fl.Flush()
		}
	}
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Why string `json:"why"`
	}
	if r.ContentLength != 0 && !s.decode(w, r, "cancel", &in) {
		return
	}
	sched, st, ok := s.jobStatus(w, r)
	if !ok {
		return
	}
	why := in.Why
	if why == "" {
		why = "cancelled over REST (POST /v1/jobs/ID/cancel)"
	}
	if err := sched.Cancel(r.Context(), st.ID, why); err != nil {
		httpError(w, http.StatusBadGateway, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": string(st.ID)})
}
