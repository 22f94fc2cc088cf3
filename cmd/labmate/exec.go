package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/report"
	"github.com/labmate/labmate/runner/locallog"
)

func newExecCmd() *cobra.Command {
	var (
		kernelName string
		timeout    time.Duration
		hotfix     string
		watch      []string
		silence    time.Duration
		profile    string
		settings   []string
		follow     []string
		asJSON     bool
		workspace  string
		serverURL  string
		session    string
		token      string
		data       string
		sf         sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] FILE|-",
		Short: "Run a file (or stdin) as one cell in a fresh sandboxed kernel, streaming and watching it",
		Long: `Run a file (or - for stdin) as one cell in a fresh sandboxed kernel and print its output
live as it arrives. The kernel is chosen by --kernel or the file's extension (.m octave,
.py python, .sh shell). The workspace — the only writable directory — is the current
directory unless --workspace says otherwise.

While it runs, perception judges the stream (errors and warnings, NaN/Inf, divergence,
growing oscillation, stagnation, resource pressure, --watch constraints). Verdicts are
printed as they change. With --hotfix on_error (the default) an Error verdict interrupts
the run at once; on_warning also a Warning; off only observes.

--watch takes a constraint on a telemetry series (labmate_log / labmate.log, or printed
"name = value" lines): NAME OP NUMBER with OP one of < <= > >= == != (x < 1e6,
overshoot_pct <= 5), finite(NAME), NAME decreasing, NAME increasing, NAME in [LO, HI].
A bound on a series (x < 1e20) also tells perception that growth below it is expected.

Perception reads the output of the software the cell runs: --profile qe (Quantum ESPRESSO's
pw.x: SCF accuracy, energies, error blocks), lammps (the thermo table, ERROR lines,
exploding temperatures), octave, python, shell or generic; by default it is chosen from
the code (a cell that runs pw.x or lmp) and the kernel. --perception KEY=VALUE tunes one
detector for this run (silence=2m, divergence_bound=1e50, scf_stall=30) or turns one off
(divergence=off) without turning perception off; an unknown KEY is refused, naming every
threshold and detector. --follow FILE
watches a workspace file the code writes its progress to (a shell cell's output
redirections, and LAMMPS' log under -screen none, are followed without asking).

With --server URL the operation runs on a labmate server (in --session, default a new one)
instead of a local kernel. The bearer token is --token, else $LABMATE_TOKEN, else, for a
server on this machine (a loopback URL) or with --data given, the one labmate serve keeps in
DATA/token (--data, default the data directory labmate serve uses). A dropped connection is
resumed without losing or repeating messages; while the server cannot be reached (it is
restarting, say) exec retries with backoff for up to a minute, then gives up saying so; a
server never reached whose port refuses the connection (a wrong port, no server) is an error
after 2 s.

Run here, the cell is an operation of a new session in the data directory's log
(DATA/labmate.db; --data, default $XDG_DATA_HOME/labmate), where labmate serve lists it and
its dashboard shows it live, whether or not a server is running.

Each file the cell created or changed in the workspace (a figure it printed, a table it
saved; not dot-entries) is an artifact: printed to stderr with its MIME type, size and where
it is — its path, or with --server the URL the server serves it at — and kept by its digest
in the data directory's artifact store (DATA/artifacts), from which the dashboard shows it
after the workspace has changed or gone; exec ends naming the session that keeps them, whose
labmate session show SESSION --artifact PATH writes one to standard output.

With --json, the run is printed as NDJSON protocol messages: operation_request,
operation_ack, operation_start, one operation_progress per observation (with the verdict
when it changes; an artifact is an observation of kind "artifact" with its path, MIME type,
size and sha256), and operation_complete or operation_failed.

Ctrl-C interrupts the cell, and so does an interrupt from another process (the Interrupt of
labmate serve's dashboard, POST /v1/sessions/S/operations/OP/interrupt). Exit status: 0 when
the cell completed, 1 on an error or crash, 3 when perception stopped it (hot-fix; also when
its Error came on the last lines of a cell that finished before the interrupt), 124 on a
timeout, 130 when interrupted, 2 when labmate could not run it at all.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkExecFlags(cmd, serverURL); err != nil {
				return err
			}
			code, err := readCode(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			name := kernelName
			if name == "" {
				if name, err = kernelFor(args[0]); err != nil {
					return err
				}
			}
			kk, err := findKernel(name)
			if err != nil {
				return err
			}
			// The flags fill the cell every face of labmate runs (the agent's run_code, MCP's exec).
			cell := &operation.Cell{Kernel: name, Code: code, TimeoutS: timeout.Seconds(),
				Hotfix: hotfix, Watch: watch, ExpectSilenceS: silence.Seconds(), Profile: profile, Follow: follow}
			for _, kv := range settings {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--perception %q: want KEY=VALUE, e.g. silence=2m or divergence=off", kv)
				}
				if cell.Perception == nil {
					cell.Perception = map[string]string{}
				}
				cell.Perception[k] = v
			}
			req := cell.Request()
			if args[0] != "-" {
				req.Name = filepath.Base(args[0]) // the session is found by its file
			}
			plan, err := operation.Check(req)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			var where func(rel string) string // where an artifact is: its path, or the server's URL for it
			out := report.NewText(cmd.OutOrStdout(), cmd.ErrOrStderr(), plan.Hotfix, func(rel string) string { return where(rel) })
			if serverURL != "" {
				var raw *json.Encoder // the server's messages print as they came, seq and all
				if asJSON {
					raw = json.NewEncoder(cmd.OutOrStdout())
				}
				token = cmp.Or(token, os.Getenv("LABMATE_TOKEN"))
				if token == "" {
					if token, err = serverToken(serverURL, data); err != nil {
						return err
					}
				}
				if session == "" {
					session = uuid.NewString()
				} else if err := noteNewSession(ctx, cmd.ErrOrStderr(), serverURL, token, session); err != nil {
					return err
				}
				where = func(rel string) string { return artifactURL(serverURL, session, rel) }
				return execRemote(ctx, out, raw, cmd.ErrOrStderr(), serverURL, token, session, req)
			}
			if workspace == "" {
				if workspace, err = os.Getwd(); err != nil {
					return err
				}
			}
			sb, err := sf.open()
			if err != nil {
				return err
			}
			// The run's log numbers the messages and holds them to the state machine: the data
			// directory's, where labmate serve and its dashboard see the run live.
			log, host, closeLog := localLog(cmd.ErrOrStderr(), data, "exec")
			defer closeLog()
			// What it prints of a message it prints once the log has committed the message.
			display := locallog.NewDisplay(log)
			stdout, stderr := display.Writer(cmd.OutOrStdout()), display.Writer(cmd.ErrOrStderr())
			out = report.NewText(stdout, stderr, plan.Hotfix, func(rel string) string { return where(rel) })
			if asJSON {
				log = jsonLog(log, stdout)
			}
			var k kernel.Kernel
			defer func() {
				if k != nil {
					k.Close()
				}
			}()
			// The kernel starts in a context of its own: Ctrl-C during start-up must not leave
			// a half-started interpreter behind, and start-up is bounded by the kernel itself.
			start := func(ctx context.Context, _ string) (kernel.Kernel, error) {
				var err error
				if k, err = kk.start(context.WithoutCancel(ctx), kernelOptions(sb, workspace)); err != nil {
					return nil, err
				}
				ws := k.Info().Workspace // absolute
				where = func(rel string) string { return filepath.Join(ws, filepath.FromSlash(rel)) }
				return k, nil
			}
			var last *operation.Message
			opts := &operation.Options{Artifacts: dataArtifacts(cmd.ErrOrStderr(), data, "exec")}
			session, opID, kept := uuid.NewString(), uuid.NewString(), keptArtifacts{on: opts.Artifacts != nil}
			// The dashboard's Interrupt (another process) stops the cell as Ctrl-C does.
			octx, release := host.Hold(ctx, session, opID)
			defer release()
			for m, err := range operation.Run(octx, log, session, opID, req, start, opts) {
				if err != nil {
					display.Flush()
					return err
				}
				if !asJSON {
					if err := out.Message(m.Type, m.Payload); err != nil {
						return err
					}
				}
				kept.add(m.Payload)
				last = m
			}
			if err := display.Flush(); err != nil {
				return err
			}
			kept.note(cmd.ErrOrStderr(), session, "")
			return exitCode(last)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&kernelName, "kernel", "k", "", "kernel: octave, python or shell (default: from the file extension)")
	f.DurationVar(&timeout, "timeout", 0, "wall-clock limit for the cell, e.g. 30s or 5m (default: none); then interrupt, then kill")
	f.StringVar(&hotfix, "hotfix", string(protocol.HotfixOnError), "when perception interrupts the run: off, on_error or on_warning")
	f.StringArrayVar(&watch, "watch", nil, "a constraint to watch, e.g. 'x < 1e6' or 'residual decreasing' (repeatable)")
	f.DurationVar(&silence, "expect-silence", 0, "how long the code may legitimately compute without output, e.g. 2m")
	f.StringVar(&profile, "profile", "", "the software perception reads: qe, lammps, octave, python, shell or generic (default: from the code and kernel)")
	f.StringArrayVar(&settings, "perception", nil, "tune a detector for this run, KEY=VALUE, e.g. silence=2m or divergence=off (repeatable)")
	f.StringArrayVar(&follow, "follow", nil, "a workspace file whose new lines perception watches, e.g. run.log (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print the operation as NDJSON protocol messages")
	f.StringVar(&workspace, "workspace", "", "the kernel's working directory, the only writable one (default: the current directory)")
	f.StringVar(&serverURL, "server", "", "run on a labmate server, e.g. http://127.0.0.1:7878, instead of locally")
	f.StringVar(&session, "session", "", "with --server: the session to run in (default: a new one)")
	f.StringVar(&token, "token", "", "with --server: the bearer token (default $LABMATE_TOKEN, else DATA/token for a loopback server)")
	f.StringVar(&data, "data", "", "the data directory DATA whose log (labmate.db) the run is written to, or with --server whose token to use (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	sf.add(cmd)
	return cmd
}

// readInput reads the file name, or stdin when name is "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// readCode reads the code of a cell, a script or a protocol: the file arg, or stdin for "-".
func readCode(stdin io.Reader, arg string) (string, error) {
	b, err := readInput(stdin, arg)
	if err != nil {
		return "", fmt.Errorf("reading the cell: %w", err)
	}
	return string(b), nil
}

// exitCode maps the terminal message to labmate exec's exit status.
func exitCode(m *operation.Message) error {
	f, ok := m.Payload.(*protocol.Failed)
	switch {
	case m.Type == protocol.TypeComplete:
		return nil
	case !ok || f.Result == nil:
		return exitError{2}
	case f.Reason == protocol.ReasonInterrupted && f.Verdict != nil:
		return exitError{3}
	case f.Reason == protocol.ReasonTimeout:
		return exitError{124}
	case f.Reason == protocol.ReasonInterrupted:
		return exitError{130}
	}
	return exitError{1}
}

// jsonLog prints every message log stores as one NDJSON line.
func jsonLog(log operation.Log, w io.Writer) operation.Log {
	enc := json.NewEncoder(w)
	return operation.LogFunc(func(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
		stored, err := log.Append(ctx, m)
		if err != nil {
			return nil, err
		}
		return stored, enc.Encode(stored)
	})
}
