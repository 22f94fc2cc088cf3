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

	"github.com/labmate/labmate/runner"
)

// Config configures a Server: its runner (the embedded runner.Config; Store is required) and
// its transport.
type Config struct {
	runner.Config
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
	// MaxConns caps the connections Serve holds open at once (default 1024); more wait to be
	// accepted.
	MaxConns int
	// MaxMessageBytes caps a client message or request body (default 1 MiB).
	MaxMessageBytes int64
}

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
	hosts, err := newHostPolicy(cfg.Addr, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	r, err := runner.New(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	s := &Server{Runner: r, cfg: cfg, hosts: hosts}
	s.routes()
	s.guard = s.guardChain(s.mux)
	return s, nil
}

// ServeHTTP serves the protocol, REST, health endpoints and the dashboard, behind the guard
// (Host allow-list, Origin check, application/json, body deadline, token).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guard.ServeHTTP(w, r)
}

// Handle mounts h on the server's routes (behind the guard), e.g. the MCP endpoint.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }
