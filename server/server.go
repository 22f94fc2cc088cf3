// Package server is labmate serve: the Asynchronous State Sync Protocol over WebSocket
// (resumable with after=SEQ), REST for sessions, operations and their histories, and a
// health endpoint and the embedded web dashboard — one http.Handler over a durable
// protocol.Store. In-process callers (the MCP server, package server/mcp) run operations
// with Exec and Interrupt and mount their endpoints with Handle. Sessions own kernels
// (the first one pre-warmed), run their operations in order through package operation, and
// fan their log out to every subscriber; a subscriber too slow for the live stream is cut
// off with a close reason that says where to resume.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// Config configures a Server. Store is required.
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
	// the MCP campaign tools and the dashboard's campaign page; CampaignStore, when set,
	// records their steps.
	Campaign      func(ctx context.Context, spec *CampaignSpec) (*CampaignSetup, error)
	CampaignStore lab.Store
	// Workspaces is the directory under which each session gets its workspace.
	Workspaces string
	// Prewarm lists the kernels kept started ahead of use, one each, so that a session's first
	// cell does not pay the start-up.
	Prewarm []string
	// Token, when set, is required as "Authorization: Bearer TOKEN" on every endpoint but /healthz.
	Token string
	// Judge gets ambiguous perception windows (see operation.Options).
	Judge perception.Judge
	// IdleTimeout is how long a session's kernels live without an operation (default 15m).
	IdleTimeout time.Duration
	// MaxMessageBytes caps a client message or request body (default 1 MiB).
	MaxMessageBytes int64
	// SubscriberBuffer is how many messages a subscriber may lag before it is cut off (default 8192).
	SubscriberBuffer int
	// Logf receives operational log lines (default log.Printf).
	Logf func(format string, args ...any)
	// Runs runs agent tasks posted to /v1/runs; nil: the server runs no agent.
	Runs RunFunc
}

// KernelInfo describes one kernel a server can start.
type KernelInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty" jsonschema:"why the kernel is not available"`
}

// Server is the protocol server. Create it with New; stop it with Close.
type Server struct {
	cfg   Config
	store protocol.Store
	pool  *pool
	mux   *http.ServeMux

	ctx    context.Context // cancelled first by Close: operations stop and write their ends
	cancel context.CancelFunc
	wg     sync.WaitGroup // session workers, the pool's refills, the janitor
	// streams is cancelled once every operation has ended: subscribers drain and close.
	streams       context.Context
	cancelStreams context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*session
	closing  bool
	runs     map[string]*agentRun

	camps campaigns
}

// New starts a server over cfg.Store. Operations a crash left open are closed first, FAILED
// with reason server_restart.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is nil")
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 15 * time.Minute
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 1 << 20
	}
	if cfg.SubscriberBuffer <= 0 {
		cfg.SubscriberBuffer = 8192
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	recovered, err := cfg.Store.Recover(ctx)
	if err != nil {
		return nil, fmt.Errorf("server: recovering operations left open: %w", err)
	}
	if len(recovered) > 0 {
		cfg.Logf("closed %d operations left running by the previous server as failed (server_restart)", len(recovered))
	}
	s := &Server{cfg: cfg, store: cfg.Store, sessions: map[string]*session{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.streams, s.cancelStreams = context.WithCancel(context.Background())
	s.pool = newPool(s.ctx, cfg.Start, cfg.Workspaces, cfg.Prewarm, cfg.Logf)
	s.routes()
	s.wg.Go(s.janitor)
	return s, nil
}

func (s *Server) logf(format string, args ...any) { s.cfg.Logf(format, args...) }

// stopReason says why an operation ends without running to completion.
func (s *Server) stopReason(when string) string {
	if s.ctx.Err() != nil {
		return "the server shut down " + when
	}
	return "interrupted " + when
}

// ServeHTTP serves the protocol, REST, health endpoints and the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !public(r) && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="labmate"`)
		httpError(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && strings.HasSuffix(r.URL.Path, "/ws") {
		// A browser's WebSocket cannot send headers: the dashboard passes the token here.
		got, ok = r.URL.Query().Get("access_token"), true
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// janitor reaps the kernels of idle sessions.
func (s *Server) janitor() {
	t := time.NewTicker(min(s.cfg.IdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.mu.Lock()
			all := make([]*session, 0, len(s.sessions))
			for _, ss := range s.sessions {
				all = append(all, ss)
			}
			s.mu.Unlock()
			for _, ss := range all {
				ss.reap(s.cfg.IdleTimeout)
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// Close stops the server: running operations end FAILED (the server shut down), queued ones
// too, every stream ends, kernels close. The store stays open; closing it is the caller's.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true // no session worker joins wg from now on
	s.mu.Unlock()
	s.cancel()
	s.closeCampaigns()
	s.wg.Wait()
	s.pool.close()
	s.cancelStreams()
	return nil
}
