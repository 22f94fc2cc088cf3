package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	agentsqlite "github.com/labmate/labmate/agent/sqlite"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

func newServeCmd() *cobra.Command {
	var (
		addr, data, token string
		modelSpec         string
		prewarm           []string
		idle              time.Duration
		sf                sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the protocol: WebSocket streams, REST and health, over a durable log",
		Long: `Serve labmate's Asynchronous State Sync Protocol. Clients open
ws://ADDR/v1/sessions/ID/ws?after=SEQ, send operation_request messages (kind exec: kernel,
code, timeout_s, hotfix, watch) and operation_interrupt, and receive every message of the
session's log after SEQ, then the live stream. REST: GET /v1/sessions,
GET /v1/sessions/ID/operations, GET /v1/sessions/ID/messages?after=SEQ,
GET /v1/sessions/ID/operations/OP/messages, POST /v1/sessions/ID/operations (a request
payload), POST /v1/sessions/ID/operations/OP/interrupt, GET /v1/kernels; GET /healthz.
MCP clients connect over streamable HTTP at /mcp (the tools of labmate mcp). The web
dashboard is at / (sessions live, a cell runner, the memory browser); its memory endpoints
are GET /v1/memory/search?q=&type=fact|skill&ns=, GET /v1/memory/entries/ID (with history),
GET /v1/memory/namespaces and POST /v1/memory/freeze.

With a model (--model or $LABMATE_MODEL) the server also runs the agent: POST /v1/runs with
{"goal": "…", "kernel": "python", "mode": "agent"} starts a run and answers its id;
GET /v1/runs/ID/events?after=SEQ streams its events as NDJSON until it ends; GET /v1/runs lists
the runs; POST /v1/runs/ID/cancel stops one. Runs are checkpointed in DATA/runs.db, work in DATA/workspaces/run-ID, and use the
server's memory and documentation index like labmate run.

State lives in DATA/labmate.db (SQLite), memory in $LABMATE_MEMORY or DATA/memory.db,
campaigns in DATA/campaigns.db, the documentation index in $LABMATE_DOCS_DB or DATA/docs.db,
and session workspaces in DATA/workspaces.
The server binds loopback by default; any other address needs a bearer token (--token or
LABMATE_TOKEN). Kernels run sandboxed unless --no-sandbox. SIGINT/SIGTERM shut it down
gracefully: running operations end FAILED saying so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv("LABMATE_TOKEN")
			}
			if err := checkExposure(addr, token); err != nil {
				return err
			}
			if data == "" {
				var err error
				if data, err = defaultDataDir(); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(data, 0o755); err != nil {
				return fmt.Errorf("data directory: %w", err)
			}
			sb, err := sf.open()
			if err != nil {
				return err
			}
			store, err := sqlite.Open(filepath.Join(data, "labmate.db"))
			if err != nil {
				return err
			}
			defer store.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			runStore, err := agentsqlite.Open(filepath.Join(data, "runs.db"))
			if err != nil {
				return err
			}
			defer runStore.Close()
			mem, _, err := openMemory(ctx, data)
			if err != nil {
				return err
			}
			defer mem.Close()
			docs, err := openDocs(data)
			if err != nil {
				return err
			}
			defer docs.Close()
			runs, err := agentRuns(ctx, modelSpec, sb, data, runStore, mem, docs)
			if err != nil {
				return err
			}
			cfg := serverConfig(store, sb, filepath.Join(data, "workspaces"), prewarm)
			cfg.Token, cfg.IdleTimeout, cfg.Memory, cfg.Runs = token, idle, mem, runs
			cst, err := labsqlite.Open(filepath.Join(data, "campaigns.db"))
			if err != nil {
				return err
			}
			defer cst.Close()
			cfg.CampaignStore = cst
			srv, err := server.New(ctx, cfg)
			if err != nil {
				return err
			}
			srv.Handle("/mcp", mcp.New(srv, &mcp.Options{Version: version, Memory: mem, Docs: docs}).Handler())
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				srv.Close()
				return err
			}
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.OutOrStdout(), "labmate serve: listening on http://%s (data %s; sandbox: %s)\n", ln.Addr(), data, sb.Describe())
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(ln) }()
			select {
			case err := <-errc:
				srv.Close()
				return err
			case <-ctx.Done():
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "labmate serve: shutting down")
			srv.Close() // running operations end FAILED, streams close
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7878", "address to listen on; a non-loopback one needs --token")
	f.StringVar(&data, "data", "", "data directory (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	f.StringVar(&token, "token", "", "bearer token required from clients (default $LABMATE_TOKEN)")
	f.StringSliceVar(&prewarm, "prewarm", []string{"python", "octave"}, "kernels kept started ahead of use")
	f.DurationVar(&idle, "idle", 15*time.Minute, "close a session's kernels after this long without an operation")
	f.StringVarP(&modelSpec, "model", "m", "", "the model agent runs (POST /v1/runs) use (default $LABMATE_MODEL; none: no agent runs)")
	sf.add(cmd)
	return cmd
}

// checkExposure refuses to listen beyond loopback without a token.
func checkExposure(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q is reachable beyond this machine: set a bearer token with --token or LABMATE_TOKEN", addr)
}

func defaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "labmate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --data and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "labmate"), nil
}
