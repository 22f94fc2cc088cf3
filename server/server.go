// Package server is labmate serve: the Asynchronous State Sync Protocol over WebSocket
// (resumable with after=SEQ), REST for sessions, operations and their histories, and a
// health endpoint — one http.Handler over a durable protocol.Store. Sessions own kernels
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
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// Config configures a Server. Store is required.
type Config struct {
	Store protocol.Store
	// Start starts a kernel by name ("octave", "python", "shell") in a workspace; it is where
	// the sandbox is chosen. Nil: the server accepts no operations.
	Start func(ctx context.Context, kernel, workspace string) (kernel.Kernel, error)
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
	runs     map[string]*agentRun
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

// ServeHTTP serves the protocol, REST and health endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/healthz" && !s.authorized(r) {
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
	s.cancel()
	s.wg.Wait()
	s.pool.close()
	s.cancelStreams()
	return nil
}
