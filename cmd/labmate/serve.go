package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

func newServeCmd() *cobra.Command {
	var (
		addr, data, token string
		noToken           bool
		allowHosts        []string
		modelSpec         string
		artifactsMax      string
		prewarm           []string
		idle              time.Duration
		limits            runner.Limits // the caps
		sf                sandboxFlags
		cf                campaignFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the protocol: WebSocket streams, REST and health, over a durable log",
		Long: `Serve labmate's Asynchronous State Sync Protocol. Clients open
ws://ADDR/v1/sessions/ID/ws?after=SEQ, send operation_request messages (kind exec: kernel,
code, timeout_s, hotfix, watch) and operation_interrupt, and receive every message of the
session's log after SEQ, then the live stream. REST: GET /v1/sessions,
GET /v1/sessions/ID/operations, GET /v1/sessions/ID/messages?after=SEQ,
GET /v1/sessions/ID/operations/OP/messages?after=SEQ, POST /v1/sessions/ID/operations (a request
payload), POST /v1/sessions/ID/operations/OP/interrupt, GET /v1/kernels; GET /healthz.
MCP clients connect over streamable HTTP at /mcp (the tools of labmate mcp, the job tools
among them; while serve runs, queued local jobs of DATA/jobs start when there is room). The web
dashboard is at / (sessions live, a cell runner, the memory browser); its memory endpoints
are GET /v1/memory/search?q=&type=fact|skill&ns=, GET /v1/memory/entries/ID (with history),
GET /v1/memory/namespaces and POST /v1/memory/freeze.

With a model (--model or $LABMATE_MODEL) the server also runs the agent: POST /v1/runs with
{"goal": "…", "kernel": "python", "mode": "agent"} starts a run and answers its id;
GET /v1/runs/ID/events?after=SEQ streams its events as NDJSON until it ends; GET /v1/runs lists
the runs; POST /v1/runs/ID/cancel stops one; POST /v1/runs/ID/resume continues an ended one
from its checkpoint when its run_end says it is resumable (a cancelled run, a failed provider).
A run's events are the stream of its session (named by its id) in the log, so they survive a
restart; an event's seq is its seq in that stream, and a follower comes back with the last one
it read. A run the server was killed during ends at the next start with a run_end (reason
server_restart), and with a model the server resumes it at once from its checkpoint (a
run_resume follows, then the run's further events). Without a model it stays resumable, and its
run_end says how: POST /v1/runs/ID/resume (or the dashboard) once serve runs with --model, or
labmate run --resume ID --data DATA while serve is not running. A run whose checkpoint cannot be
continued (it had ended already, or there is none) gets a run_end saying why. Runs are
checkpointed in their streams (run_checkpoint), work in DATA/workspaces/run-ID, and use the
server's memory and documentation index like labmate run.

State lives in DATA/labmate.db (SQLite) — operations, agent runs with their checkpoints, jobs,
campaigns (a runs.db or campaigns.db of an earlier labmate is imported there once and kept as
FILE.imported) — memory in $LABMATE_MEMORY or DATA/memory.db, the documentation index in
$LABMATE_DOCS_DB or DATA/docs.db,
session workspaces in DATA/workspaces, and every artifact a cell reports (a figure, a table, up
to 32 MiB) in DATA/artifacts by its SHA-256, outliving workspace and server (GET
/v1/artifacts/SHA256/NAME; --artifacts-max bounds it, the oldest unpinned evicted first, with a
note). Campaign CSVs (POST /v1/campaigns, MCP, the dashboard) are uploaded, or named by a path
under a --data-root directory; no other file on the server can be named.

Every client needs the server's bearer token (Authorization: Bearer TOKEN). It is --token or
$LABMATE_TOKEN when given, else a random one (256 bits) kept in DATA/token (mode 0600, reused
at every start, so clients keep working; a token file other users could read is refused).
The server prints a ready URL for the dashboard, http://127.0.0.1:7878/?token=…: the page keeps
the token for its tab (sessionStorage) and takes it out of the address bar. labmate exec
--server picks the token up from DATA/token. --no-token serves without one, on loopback only.

Against web pages that try to drive the server: the Host header must be a loopback name
(localhost, *.localhost, 127.0.0.1, [::1]), the host of --addr (an --addr of 0.0.0.0 or [::]
allows any IP address) or an --allow-host name (403 otherwise: a DNS-rebinding page); every
request that changes state (POST, PUT, PATCH, DELETE, the WebSocket upgrade) from a browser
must come from the server's own origin (403), and a request body must be application/json
(415). A request's headers must arrive within 10 s and the whole request within 30 s; idle
connections close after 2 minutes; at most 1024 connections are open at once.

Limits (a request beyond one is refused with 429 or 503 saying which, and the server keeps
serving): --max-sessions live sessions (with a connection, an operation or kernels),
--max-kernels kernels at once (pre-warmed ones included: they give their place up first),
--max-queue operations queued or running per session, --max-operations in all, --max-runs
agent runs at once. A session idle for --idle has its kernels closed and, when no client is
connected to it, is dropped; its log stays, and a later request for it starts it anew in a
fresh workspace.

Kernels run sandboxed unless --no-sandbox. SIGINT/SIGTERM shut it down gracefully: running
operations end FAILED saying so.

Exit status: 0 after a clean shutdown (SIGINT or SIGTERM: running operations end FAILED
first); 2 when it could not start: a bad flag or value, an address in use, a data directory
it cannot open.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token = cmp.Or(token, os.Getenv("LABMATE_TOKEN"))
			if err := checkExposure(addr, token, noToken); err != nil {
				return err
			}
			if err := checkPrewarm(prewarm); err != nil {
				return err
			}
			data, err := dataDir(data)
			if err != nil {
				return err
			}
			if token == "" && !noToken {
				if token, _, err = server.LoadToken(filepath.Join(data, server.TokenFile)); err != nil {
					return err
				}
			}
			sb, err := sf.open()
			if err != nil {
				return err
			}
			store, err := locallog.Open(data, "serve")
			if err != nil {
				return err
			}
			defer store.Close()
			ctx, stop := interruptible(cmd)
			defer stop()
			importOld(ctx, data, store, cmd.ErrOrStderr())
			cfg := serverConfig(store, sb, filepath.Join(data, "workspaces"), prewarm)
			if cfg.Artifacts, err = openArtifacts(data, artifactsMax); err != nil {
				return err
			}
			if cfg.Campaigns, err = cf.setup(); err != nil {
				return err
			}
			mem, docs, closeStores, err := openStores(ctx, data)
			if err != nil {
				return err
			}
			defer closeStores()
			runs, err := agentRuns(ctx, modelSpec, sb, data, agent.NewCheckpoints(store), mem, docs)
			if err != nil {
				return err
			}
			if runs != nil {
				cfg.Agents = runs
				runs.artifacts = cfg.Artifacts
			}
			cfg.Token, cfg.Memory = token, mem
			cfg.LocalRuns = locallog.Runs{Log: store, Data: data} // labmate run processes append their runs to the log themselves
			cfg.Addr, cfg.AllowHosts = addr, allowHosts
			limits.Idle = idle
			cfg.Limits = limits
			jobs, closeJobs := (&jobDirs{data: data}).serving(cmd, "serve") // queued local jobs start while it runs
			defer closeJobs()
			cfg.Jobs = jobs
			if runs != nil {
				runs.jobs = jobs // a run that waits for a job parks; the server resumes it when the job ends
			}
			srv, err := server.New(ctx, cfg)
			if err != nil {
				return err
			}
			if runs != nil {
				runs.serving(srv)
			}
			srv.Handle("/mcp", mcp.New(srv.Runner, &mcp.Options{Version: version, Memory: mem, Docs: docs}).Handler())
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				srv.Close()
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "labmate serve: listening on http://%s (data %s; sandbox: %s)\n", ln.Addr(), data, sb.Describe())
			if token == "" {
				fmt.Fprintf(out, "labmate serve: no token (--no-token): any program of this machine may use the server; the dashboard is at %s/\n", dashboardURL(ln.Addr()))
			} else {
				fmt.Fprintf(out, "labmate serve: the dashboard, with the token: %s/?token=%s\n", dashboardURL(ln.Addr()), url.QueryEscape(token))
			}
			context.AfterFunc(ctx, func() { fmt.Fprintln(cmd.ErrOrStderr(), "labmate serve: shutting down") })
			return srv.Serve(ctx, ln) // at the end, running operations end FAILED and streams close
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7878", "address to listen on (its host is allowed in the Host header)")
	f.StringVar(&data, "data", "", "data directory (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	f.StringVar(&token, "token", "", "bearer token required from clients (default $LABMATE_TOKEN, else a random one kept in DATA/token)")
	f.BoolVar(&noToken, "no-token", false, "serve without a token (a loopback --addr only)")
	f.StringSliceVar(&allowHosts, "allow-host", nil, "another name the Host header may carry, e.g. a reverse proxy's (NAME, IP or *.DOMAIN; repeatable)")
	f.StringSliceVar(&prewarm, "prewarm", []string{"python", "octave"}, "kernels kept started ahead of use")
	f.DurationVar(&idle, "idle", 15*time.Minute, "close a session's kernels, and drop the session, after this long without an operation")
	f.IntVar(&limits.Sessions, "max-sessions", 256, "live sessions at most (with a connection, an operation or kernels)")
	f.IntVar(&limits.Kernels, "max-kernels", 16, "kernels running at once at most, pre-warmed ones included")
	f.IntVar(&limits.Queue, "max-queue", 64, "operations queued or running per session at most")
	f.IntVar(&limits.Operations, "max-operations", 1024, "operations queued or running in all at most")
	f.IntVar(&limits.Runs, "max-runs", 4, "agent runs (POST /v1/runs) running at once at most")
	f.StringVar(&artifactsMax, "artifacts-max", "2GiB", "size of the artifact store, DATA/artifacts: the figures and files cells report, kept by content; past it the oldest unpinned go first")
	f.StringVarP(&modelSpec, "model", "m", "", "the model agent runs (POST /v1/runs) use (default $LABMATE_MODEL; none: no agent runs)")
	sf.add(cmd)
	cf.add(cmd)
	return cmd
}

// checkExposure refuses --no-token beyond loopback, and a token that cannot travel in a header.
func checkExposure(addr, token string, noToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if noToken && token != "" {
		return errors.New("--no-token and a token (--token or LABMATE_TOKEN): choose one")
	}
	if token != "" {
		if err := server.CheckToken(token); err != nil {
			return fmt.Errorf("--token: %w", err)
		}
	}
	if !noToken || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--no-token: --addr %q is reachable beyond this machine, where a token is required: drop --no-token (a random token is made and printed) or listen on 127.0.0.1", addr)
}

// dashboardURL is the URL of the dashboard on the listening address: a loopback one when it
// listens on every interface.
func dashboardURL(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	ip := ta.IP
	switch {
	case ip.Equal(net.IPv6unspecified):
		ip = net.IPv6loopback
	case ip.IsUnspecified():
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}

// dataDir returns the data directory (flag, else the default), made if missing and readable by
// its owner only: it holds the memory, the logs, the token and every session's workspace.
func dataDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("data directory: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, fi.Mode().Perm()&0o700); err != nil {
			return "", fmt.Errorf("data directory %s is open to other users (%v) and cannot be closed: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return dir, nil
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
