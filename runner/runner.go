// Package runner is the one place that decides how anything runs: sessions with their
// kernels (the first one pre-warmed) and queues of operations run in order through package
// operation, agent runs, jobs followed in the log, campaigns, the lab bench of a session, and
// the limits on all of them. Every face calls it — the HTTP server (package server), MCP over
// HTTP or stdio (package server/mcp), the CLI — and none of them decides how a cell, a run or a
// job runs. A command-line process that runs its operations itself, without a runner
// (labmate exec, lab run, campaign run), takes the interrupts other processes ask of them
// through the log with a Host.
//
// A session fans its log out to every subscriber; a subscriber too slow for the live stream is
// cut off (see Subscribe for the drop policy) and told where to resume. Live sessions,
// kernels, queued operations and agent runs are capped (Config.Limits): a request beyond a cap
// is refused with an error wrapping ErrBusy (a *BusyError says whether one session or the
// whole runner is at its limit), and the runner keeps running. Idle sessions are reaped: their
// kernels closed, the session dropped, its log kept.
package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Config configures a Runner. Store is required.
type Config struct {
	Store protocol.Store
	// Kernels starts the kernels operations run in, and lists them; it is where the sandbox
	// is chosen. Nil: the runner accepts no operations.
	Kernels Kernels
	// Memory, when set, is browsed by the dashboard (GET /v1/memory/…, POST /v1/memory/freeze).
	Memory memory.Store
	// Campaigns, when set, sets campaigns up (dataset instrument, planner) for StartCampaign,
	// the MCP campaign tools and the dashboard's campaign page. Each campaign is a stream in
	// Store (see CampaignEvent).
	Campaigns Campaigns
	// Artifacts, when set, keeps a copy of every artifact a cell reports, by its digest, so
	// that figures and tables outlive workspaces and the server (GET /v1/artifacts/SHA/NAME,
	// and OpenArtifact). Nil: artifacts are served from live workspaces only.
	Artifacts *artifact.Store
	// Workspaces is the directory under which each session gets its workspace.
	Workspaces string
	// Prewarm lists the kernels kept started ahead of use, one each, so that a session's first
	// cell does not pay the start-up.
	Prewarm []string
	// Limits caps what the runner holds and runs at once; a zero field takes its default.
	Limits Limits
	// Judge gets ambiguous perception windows (see operation.Options).
	Judge perception.Judge
	// Log receives operational log lines (default log.Default()).
	Log *log.Logger
	// Agents runs agent tasks posted to /v1/runs and resumes runs from their checkpoints:
	// POST /v1/runs/ID/resume, and at start-up every run a previous server left running (it
	// was killed). Nil: the server runs and resumes no agent.
	Agents Agents
	// LocalRuns, when set, are the agent runs other processes of this machine (labmate run)
	// run over the same log, appending their streams themselves (runner/local.go). Such a run
	// is left open at start-up while its process lives; one whose process died is ended as
	// process_died, resumable. The run_end of a run that can be resumed — it was cancelled, its
	// provider failed, the server stopped while it ran — says how: POST /v1/runs/ID/resume, or
	// LocalRuns.ResumeCommand. Nil, and no Agents: a run the server stopped is closed as one
	// that cannot be resumed.
	LocalRuns LocalRuns
	// Guest makes the runner one labmate process among others over the data directory's log
	// (labmate run: its agent run's cells are operations of the run's session, as in a
	// server): it runs its own operations, follows the interrupts other processes append for
	// them (elsewhere.go), and leaves alone what it did not start — it closes no stream left
	// open, resumes no run and follows no job at its start (that is labmate serve's part).
	Guest bool
	// Jobs are the job schedulers, by kind ("local", "slurm"), whose jobs the server submits,
	// watches with perception and follows in its log. Nil: the server runs no jobs.
	Jobs job.Schedulers
	// JobPoll is how often the server looks for jobs submitted without it (labmate job submit
	// over the same data directory) to follow them (default 3s).
	JobPoll time.Duration
}

// Kernels starts kernels by name ("octave", "python", "shell") in a workspace, and lists
// those it can start with their interpreter versions (GET /v1/kernels, the MCP kernels tool).
type Kernels interface {
	Start(ctx context.Context, name, workspace string) (kernel.Kernel, error)
	List(ctx context.Context) []KernelInfo
}

// Agents runs agent tasks (cmd/labmate gives each run an agent.Agent with a workspace of
// its own). The runner logs what they yield as the run's stream (runs.go).
type Agents interface {
	// Run runs task, whose ID the runner has set.
	Run(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error]
	// Resume continues run id from its checkpoint. A checkpoint that cannot be continued is
	// its first error, e.g. one wrapping agent.ErrFinished.
	Resume(ctx context.Context, id string) iter.Seq2[*agent.Event, error]
	// Model names the model the runs use, for the dashboard (GET /v1/runs says it in its
	// Labmate-Model header).
	Model() string
}

// LocalRuns are the agent runs that other processes of this machine (labmate run) run over
// the runner's log; package runner/locallog implements it (locallog.Runs).
type LocalRuns interface {
	// Owner says whether run id is run by such a process: found when one wrote its stream
	// last, live while it runs, and its pid.
	Owner(id string) (pid int, found, live bool)
	// ResumeCommand is the command that continues run id from its checkpoint without the
	// server (labmate run --resume ID --data DIR).
	ResumeCommand(id string) string
}

// Limits caps what a runner holds and runs at once. A request beyond one is refused with an
// error wrapping ErrBusy, and the runner keeps running.
type Limits struct {
	// Sessions caps the live sessions: those with a connection, an operation or kernels
	// (default 256).
	Sessions int
	// Kernels caps the kernels started at once, pre-warmed ones included (default 16).
	Kernels int
	// Queue caps the operations queued or running in one session (default 64), and
	// Operations those of the whole runner (default 1024).
	Queue, Operations int
	// Runs caps the agent runs running at once (default 4).
	Runs int
	// Idle is how long a session's kernels live without an operation (default 15m); then
	// they are closed, and the session, when nobody holds it, is dropped from memory (its log
	// stays; a later request for it starts it anew in a fresh workspace).
	Idle time.Duration
	// SubscriberBuffer is how many messages a subscriber may lag before it is cut off
	// (default 8192; see Subscribe).
	SubscriberBuffer int
}

// KernelInfo describes one kernel a server can start.
type KernelInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty" jsonschema:"why the kernel is not available"`
}

// Runner runs sessions, agent runs, jobs and campaigns over one protocol.Store. Create it
// with New; stop it with Close.
type Runner struct {
	cfg   Config
	store protocol.Store
	pool  *pool
	ops   *counter // operations queued or running

	ctx    context.Context // cancelled first by Close, with errShutdown: operations stop and write their ends
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // session workers, the pool's refills, the janitor
	// streams is cancelled once every operation has ended: subscribers drain and close.
	streams       context.Context
	cancelStreams context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*Session
	closing  bool
	runs     map[string]context.CancelFunc // the agent runs running now
	local    map[string]*LocalRun          // the runs other processes run, appending to the log themselves

	camps    campaigns
	runsSeen runRows
	parks    parkWatch // the jobs parked runs wait for
	jobs     jobTracker
	shown    shown  // what it appended, until the log has committed it (subscribe.go)
	others   others // the operations of other processes it watches (others.go)
}

// New starts a server over cfg.Store. Operations a crash left open are closed first, FAILED
// with reason server_restart, and so are agent runs, with a run_end that says how to resume
// them (Config.LocalRuns, Config.Agents); with Config.Agents, those runs are resumed at once. Job
// operations stay open: their jobs ran on, and the server follows them again (see jobs.go).
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is nil")
	}
	if cfg.Limits.Idle <= 0 {
		cfg.Limits.Idle = 15 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = log.Default()
	}
	for _, d := range []struct {
		v   *int
		def int
	}{{&cfg.Limits.Sessions, 256}, {&cfg.Limits.Kernels, 16}, {&cfg.Limits.Queue, 64}, {&cfg.Limits.Operations, 1024}, {&cfg.Limits.Runs, 4}, {&cfg.Limits.SubscriberBuffer, 8192}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	var runs []string
	var local map[string]int
	if !cfg.Guest {
		var err error
		if runs, local, err = recoverLog(ctx, &cfg); err != nil {
			return nil, err
		}
	}
	s := &Runner{cfg: cfg, store: cfg.Store, sessions: map[string]*Session{}, ops: newCounter(cfg.Limits.Operations),
		runs: map[string]context.CancelFunc{}, local: map[string]*LocalRun{}}
	s.camps.byID, s.camps.setting = map[string]*campaign{}, make(chan struct{}, maxSettingUp)
	s.jobs.follows, s.jobs.settled = map[job.ID]bool{}, map[job.ID]bool{}
	s.parks.run, s.runsSeen.byID = map[string]string{}, map[string]*runRead{}
	s.shown.idle = sync.NewCond(&s.shown.mu)
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	s.streams, s.cancelStreams = context.WithCancel(context.Background())
	var start func(context.Context, string, string) (kernel.Kernel, error)
	if cfg.Kernels != nil {
		start = cfg.Kernels.Start
	}
	s.pool = newPool(s.ctx, start, cfg.Workspaces, cfg.Prewarm, cfg.Limits.Kernels, cfg.Limits.Idle, cfg.Log.Printf)
	s.wg.Go(s.janitor)
	s.wg.Go(s.tailLog) // what other processes append (local.go)
	if st, ok := s.store.(*sqlite.Store); ok && !cfg.Guest {
		s.wg.Go(func() { s.watchOthers(st) }) // and what they leave open (others.go)
	}
	for id, pid := range local {
		if err := s.adoptLocal(id, pid); err != nil {
			s.Logf("run %s of labmate run (pid %d): not followed: %v", id, pid, err)
		}
	}
	s.resumeClosed(runs)
	if cfg.Jobs != nil && !cfg.Guest {
		if s.cfg.JobPoll <= 0 {
			s.cfg.JobPoll = defaultJobPoll
		}
		s.reattachJobs(ctx)
		s.wg.Go(s.adopter)
	}
	if cfg.Guest {
		return s, nil
	}
	if err := s.watchParkedRuns(ctx); err != nil {
		s.Logf("parked runs: not watched again: %v", err)
	}
	return s, nil
}

// recoverLog closes what a previous server left open in cfg.Store (closeRuns, Recover), but
// the runs other processes run: those it returns in local, by id, with their pids.
func recoverLog(ctx context.Context, cfg *Config) (runs []string, local map[string]int, err error) {
	runs, local, err = closeRuns(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("server: closing runs left open: %w", err)
	}
	if len(runs) > 0 {
		cfg.Log.Printf("closed %d agent runs left running by the previous server (server_restart)", len(runs))
	}
	recovered, err := cfg.Store.Recover(ctx, func(_, id string) bool { _, ok := local[id]; return ok })
	if err != nil {
		return nil, nil, fmt.Errorf("server: recovering operations left open: %w", err)
	}
	if len(recovered) > 0 {
		cfg.Log.Printf("closed %d operations (failed) and campaigns (run_end) left running by the previous server: server_restart", len(recovered))
	}
	return runs, local, nil
}

// Logf logs a line to Config.Log.
func (s *Runner) Logf(format string, args ...any) { s.cfg.Log.Printf(format, args...) }

// errShutdown is the cause Close cancels the server's context with: the error of the
// operations it interrupted.
var errShutdown = errors.New("the server shut down while the operation ran")

// stopReason says why an operation ends without running to completion.
func (s *Runner) stopReason(when string) string {
	if s.ctx.Err() != nil {
		return "the server shut down " + when
	}
	return "interrupted " + when
}

// janitor reaps idle sessions and their kernels, and refills the pre-warmed kernels that
// could not be started for want of room.
func (s *Runner) janitor() {
	t := time.NewTicker(min(s.cfg.Limits.Idle/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.reap(s.cfg.Limits.Idle)
			s.pool.refillAll()
		case <-s.ctx.Done():
			return
		}
	}
}

// goWorker runs a session worker, counted in wg unless Close is waiting on it already (a
// WaitGroup must not grow then): such a worker sees the server stopped and ends at once,
// failing whatever was queued.
func (s *Runner) goWorker(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		go f()
		return
	}
	s.wg.Go(f)
}

// Close stops the server: running operations end FAILED (the server shut down), queued ones
// too, every stream ends, kernels close. Jobs run on: the server detaches from them, their
// operations open in the log for the next server to follow. The store stays open; closing it is the caller's.
func (s *Runner) Close() error {
	s.mu.Lock()
	s.closing = true // no session worker joins wg from now on
	s.mu.Unlock()
	s.cancel(errShutdown)
	s.closeCampaigns()
	s.wg.Wait()
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	for _, ss := range all {
		ss.closeKernels(0)
	}
	s.pool.close()
	s.cancelStreams()
	return nil
}
