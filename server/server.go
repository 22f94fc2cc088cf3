// Package server is labmate serve: the transport of package runner. It speaks the
// Asynchronous State Sync Protocol over WebSocket (resumable with after=SEQ), REST for
// sessions, operations and their histories and the files their cells wrote (artifacts, served
// as hostile content: see runner.Runner.OpenArtifact), agent runs, jobs, campaigns and memory,
// a health endpoint and the embedded web dashboard — one http.Handler over a runner.Runner,
// which decides how everything runs. In-process callers (the MCP server, package server/mcp)
// use the runner directly and mount their endpoints with Handle.
//
// Every request passes one guard (middleware) before the routes: a Host allow-list against
// DNS rebinding (loopback names, the listening address's host, Config.AllowHosts), an Origin
// check and application/json on every request that changes state, and the bearer token
// (LoadToken keeps a random one in the data directory). Serve adds header, request and idle
// timeouts and a cap on connections. A request beyond one of the runner's limits is refused
// with 429 (one session asks too much) or 503 (the runner is full), and the server keeps
// serving. A client names a session (PATCH /v1/sessions/ID) and closes it (POST
// /v1/sessions/ID/close) in the session's own stream of session_update messages.
package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// Config configures a Server: its runner (see runner.Config) and its transport. Store is required.
type Config struct {
	Store protocol.Store
	// Start starts a kernel by name ("octave", "python", "shell") in a workspace; it is where
	// the sandbox is chosen. Nil: the server accepts no operations.
	Start func(ctx context.Context, kernel, workspace string) (kernel.Kernel, error)
	// Kernels lists the kernels Start can start, with their interpreter versions (GET
	// /v1/kernels, the MCP kernels tool). Nil: none are listed.
	Kernels func(ctx context.Context) []KernelInfo
	// Memory, when set, is browsed by the dashboard (GET /v1/memory/…, POST /v1/memory/freeze).
	Memory memory.Store
	// Campaign, when set, sets campaigns up (dataset instrument, planner) for StartCampaign,
	// the MCP campaign tools and the dashboard's campaign page. Each campaign is a stream in
	// Store (see CampaignEvent).
	Campaign func(ctx context.Context, spec *CampaignSpec) (*CampaignSetup, error)
	// Artifacts, when set, keeps a copy of every artifact a cell reports, by its digest, so
	// that figures and tables outlive workspaces and the server (GET /v1/artifacts/SHA/NAME,
	// and OpenArtifact). Nil: artifacts are served from live workspaces only.
	Artifacts *artifact.Store
	// Workspaces is the directory under which each session gets its workspace.
	Workspaces string
	// Prewarm lists the kernels kept started ahead of use, one each, so that a session's first
	// cell does not pay the start-up.
	Prewarm []string
	// Token, when set, is required as "Authorization: Bearer TOKEN" on every endpoint but
	// /healthz and the dashboard's page and assets (a browser's WebSocket offers it as the
	// subprotocol "labmate.bearer.BASE64URL(TOKEN)"). Empty: no token (labmate serve allows
	// that on loopback only).
	Token string
	// Addr is the address the server listens on: its host is allowed in the Host header
	// (an unspecified one, 0.0.0.0 or [::], allows any IP address). Loopback names and
	// addresses (localhost, *.localhost, 127.0.0.0/8, ::1) always are.
	Addr string
	// AllowHosts are more names the Host header may carry (a name, an IP address, or
	// *.domain for its subdomains), e.g. the name of a reverse proxy in front of the server.
	AllowHosts []string
	// BodyTimeout bounds the time a client may take to send a request, headers and body
	// (default 30s; http.Server.ReadTimeout of HTTPServer and Serve).
	BodyTimeout time.Duration
	// MaxSessions caps the live sessions: those with a connection, an operation or kernels
	// (default 256).
	MaxSessions int
	// MaxKernels caps the kernels started at once, pre-warmed ones included (default 16).
	MaxKernels int
	// MaxQueue caps the operations queued or running in one session (default 64), and
	// MaxOperations those of the whole server (default 1024).
	MaxQueue, MaxOperations int
	// MaxRuns caps the agent runs running at once (default 4).
	MaxRuns int
	// MaxConns caps the connections Serve holds open at once (default 1024); more wait to be
	// accepted.
	MaxConns int
	// Judge gets ambiguous perception windows (see operation.Options).
	Judge perception.Judge
	// IdleTimeout is how long a session's kernels live without an operation (default 15m);
	// then they are closed, and the session, when nobody is connected to it, is dropped from
	// memory (its log stays; a later request for it starts it anew in a fresh workspace).
	IdleTimeout time.Duration
	// MaxMessageBytes caps a client message or request body (default 1 MiB).
	MaxMessageBytes int64
	// SubscriberBuffer is how many messages a subscriber may lag before it is cut off (default 8192).
	SubscriberBuffer int
	// Logf receives operational log lines (default log.Printf).
	Logf func(format string, args ...any)
	// Runs runs agent tasks posted to /v1/runs; nil: the server runs no agent.
	Runs RunFunc
	// Model names the model Runs uses, for the dashboard: GET /v1/runs says it in its
	// Labmate-Model header (present whenever Runs is set).
	Model string
	// Resume continues an agent run from its checkpoint: POST /v1/runs/ID/resume, and at
	// start-up every run a previous server left running (it was killed). Nil: the server
	// resumes no run.
	Resume ResumeFunc
	// ResumeCommand, when set, names the command that continues agent run id from its
	// checkpoint without the server (labmate serve: labmate run --resume ID --data DIR). The
	// run_end of a run that can be resumed — it was cancelled, its provider failed, the server
	// stopped while it ran — says how: POST /v1/runs/ID/resume, or this command. Nil, and no
	// Resume: a run the server stopped is closed as one that cannot be resumed.
	ResumeCommand func(id string) string
	// Owner, when set, says whether agent run id is run by another process of this machine
	// (labmate run), which appends its stream to the log file itself (runner/local.go): found
	// when one wrote it, live while it runs it, and its pid. Such a run is left open at start-up
	// while it lives; one whose process died is ended as process_died, resumable.
	Owner func(id string) (pid int, found, live bool)
	// Jobs are the job schedulers, by kind ("local", "slurm"), whose jobs the server submits,
	// watches with perception and follows in its log. Nil: the server runs no jobs.
	Jobs job.Schedulers
	// JobPoll is how often the server looks for jobs submitted without it (labmate job submit
	// over the same data directory) to follow them (default 3s).
	JobPoll time.Duration
}

// The runner's types, under the names the server's callers know.
type (
	KernelInfo     = runner.KernelInfo
	RunFunc        = runner.RunFunc
	ResumeFunc     = runner.ResumeFunc
	CampaignSpec   = runner.CampaignSpec
	CampaignSetup  = runner.CampaignSetup
	CampaignStatus = runner.CampaignStatus
	CampaignEvent  = runner.CampaignEvent
	RunRow         = runner.RunRow
	SessionListing = runner.SessionListing
	BenchView      = runner.BenchView
	StuckSession   = runner.StuckSession
)

// Errors of the runner, under the names the server's callers know.
var (
	ErrBusy             = runner.ErrBusy
	ErrNotRunning       = runner.ErrNotRunning
	ErrNoArtifact       = runner.ErrNoArtifact
	ErrBadArtifactPath  = runner.ErrBadArtifactPath
	ErrJobSpec          = runner.ErrJobSpec
	ErrTooManyCampaigns = runner.ErrTooManyCampaigns
	ErrNoCampaigns      = runner.ErrNoCampaigns
	ErrUnknownCampaign  = runner.ErrUnknownCampaign
)

// Server is the protocol server: the transport of a runner.Runner, whose methods (Run,
// Interrupt, StartCampaign, SubmitJob, …) it carries. Create it with New; stop it with Close.
type Server struct {
	*runner.Runner
	cfg   Config
	mux   *http.ServeMux
	hosts *hostPolicy
	guard http.Handler // mux behind the guard
}

// New starts a runner over cfg (see runner.New: what a crash left open is closed or followed
// again first) and serves it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 1 << 20
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 1024
	}
	if cfg.SubscriberBuffer <= 0 {
		cfg.SubscriberBuffer = 8192
	}
	hosts, err := newHostPolicy(cfg.Addr, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	r, err := runner.New(ctx, cfg.RunnerConfig())
	if err != nil {
		return nil, err
	}
	s := &Server{Runner: r, cfg: cfg, hosts: hosts}
	s.routes()
	s.guard = s.guardChain(s.mux)
	return s, nil
}

// RunnerConfig is the runner's part of cfg: what runner.New takes (labmate mcp over stdio
// runs a runner without a server).
func (cfg *Config) RunnerConfig() runner.Config {
	rc := runner.Config{
		Store: cfg.Store, Memory: cfg.Memory,
		Campaign: cfg.Campaign, Artifacts: cfg.Artifacts,
		Workspaces: cfg.Workspaces, Prewarm: cfg.Prewarm, Judge: cfg.Judge, Logf: cfg.Logf,
		Limits: runner.Limits{Sessions: cfg.MaxSessions, Kernels: cfg.MaxKernels, Queue: cfg.MaxQueue,
			Operations: cfg.MaxOperations, Runs: cfg.MaxRuns, Idle: cfg.IdleTimeout, SubscriberBuffer: cfg.SubscriberBuffer},
		Runs: cfg.Runs, Model: cfg.Model, Resume: cfg.Resume, ResumeCommand: cfg.ResumeCommand,
		Owner: cfg.Owner, Jobs: cfg.Jobs, JobPoll: cfg.JobPoll,
	}
	if cfg.Start != nil {
		rc.Kernels = runner.KernelFuncs{StartFunc: cfg.Start, ListFunc: cfg.Kernels}
	}
	return rc
}

// ServeHTTP serves the protocol, REST, health endpoints and the dashboard, behind the guard
// (Host allow-list, Origin check, application/json, body deadline, token).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guard.ServeHTTP(w, r)
}

// Handle mounts h on the server's routes (behind the guard), e.g. the MCP endpoint.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// MaxSessionName is the longest name a session may be given (runner.MaxSessionName).
const MaxSessionName = runner.MaxSessionName
