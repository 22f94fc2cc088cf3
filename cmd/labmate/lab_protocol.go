package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/report"
)

// protocolFlags are lab simulate's and lab run's.
type protocolFlags struct {
	watch   []string
	hotfix  string
	timeout time.Duration
	approve string
	sf      sandboxFlags
}

func (f *protocolFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.watch, "watch", nil, "a constraint on the bench's telemetry, e.g. 'vol_plate_A1 <= 300' (repeatable)")
	cmd.Flags().StringVar(&f.hotfix, "hotfix", string(protocol.HotfixOnError), "when perception interrupts the protocol: off, on_error or on_warning")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "wall-clock limit for the protocol")
	cmd.Flags().StringVar(&f.approve, "approve", "ask", "commands on a backend that moves a real instrument: ask (before each) or never (refuse them); the twin is never asked")
	f.sf.add(cmd)
}

// benchEntry is one command the protocol sent and what came of it.
type benchEntry struct {
	Command bench.Command `json:"command"`
	Event   *bench.Event  `json:"event,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// benchReport is what a protocol did to a deck.
type benchReport struct {
	deck     *bench.Deck
	entries  []benchEntry
	failure  string // why the protocol failed, with its line; "" when it ran
	verdicts []string
}

// The bench of a workspace: its socket, and the journal of the commands it carried out.
const (
	benchDir     = ".labmate"
	benchSocket  = "bench.sock"
	benchJournal = "bench.jsonl"
)

// run runs the protocol file on the bench of ws (persisted there when keep) and prints what it did.
func (f *protocolFlags) run(cmd *cobra.Command, file, ws string, keep, asJSON bool) error {
	approve, err := f.approver(cmd)
	if err != nil {
		return err
	}
	code, err := readCode(cmd.InOrStdin(), file)
	if err != nil {
		return err
	}
	cell := &operation.Cell{Kernel: "python", Code: code + "\n__import__('labmate')._run_protocol()\n",
		TimeoutS: f.timeout.Seconds(), Hotfix: f.hotfix, Watch: f.watch}
	req := cell.Request()
	plan, err := operation.Check(req)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	sb, err := f.sf.open()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := bench.NewDeck()
	if keep {
		if d, err = openBench(ctx, ws); err != nil {
			return err
		}
	}
	rep := &benchReport{deck: d}
	var journal *json.Encoder
	if keep {
		if err := os.MkdirAll(filepath.Join(ws, benchDir), 0o755); err != nil {
			return fmt.Errorf("the bench: %w", err)
		}
		jf, err := os.OpenFile(filepath.Join(ws, benchDir, benchJournal), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("the bench's journal: %w", err)
		}
		defer jf.Close()
		journal = json.NewEncoder(jf)
	}
	var jerr error
	note := func(c bench.Command, ev *bench.Event, err error) {
		e := benchEntry{Command: c, Event: ev}
		if err != nil {
			e.Error = err.Error()
		} else if journal != nil && jerr == nil {
			jerr = journal.Encode(c)
		}
		rep.entries = append(rep.entries, e)
	}
	last, err := runOnBench(ctx, sb, ws, bench.Guard(bench.Noted(bench.NewTwin(d), note), approve), req, plan, cmd.ErrOrStderr(), rep)
	if err != nil {
		return err
	}
	if jerr != nil {
		return fmt.Errorf("the bench's journal: %w", jerr)
	}
	if last.Type != protocol.TypeComplete {
		rep.failure = failureText(last, rep.entries)
	}
	if err := printBench(cmd.OutOrStdout(), rep, asJSON); err != nil {
		return err
	}
	if rep.failure != "" {
		return exitError{1}
	}
	return nil
}

// runOnBench serves b on WS/.labmate/bench.sock while the protocol's cell runs in a sandboxed
// Python kernel working in ws; the operation's messages are reported to w.
func runOnBench(ctx context.Context, sb kernel.Sandbox, ws string, b bench.Backend, req *protocol.Request,
	plan *operation.Plan, w io.Writer, rep *benchReport) (*operation.Message, error) {
	dir := filepath.Join(ws, benchDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("the bench: %w", err)
	}
	sock := filepath.Join(dir, benchSocket)
	if len(sock) >= 108 {
		return nil, fmt.Errorf("the bench's socket %s: the path is longer than a unix socket's 107 bytes; use a shorter workspace path", sock)
	}
	os.Remove(sock) // one a crashed run left
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("the bench: %w", err)
	}
	defer os.Remove(sock)
	if err := os.Chmod(sock, 0o666); err != nil { // the sandbox's unprivileged uid connects
		ln.Close()
		return nil, fmt.Errorf("the bench: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	var serr error
	go func() {
		defer wg.Done()
		serr = bench.Serve(sctx, ln, b)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	var k kernel.Kernel
	defer func() {
		if k != nil {
			k.Close()
		}
	}()
	start := func(ctx context.Context, _ string) (kernel.Kernel, error) {
		var err error
		k, err = python.Start(context.WithoutCancel(ctx), &kernel.Options{Sandbox: sb, Workspace: ws})
		return k, err
	}
	out := report.NewText(w, w, plan.Hotfix, func(rel string) string { return filepath.Join(ws, rel) })
	var last *operation.Message
	for m, err := range operation.Run(ctx, protocol.NewMemStore(), uuid.NewString(), uuid.NewString(), req, start, nil) {
		if err != nil {
			return nil, err
		}
		if err := out.Message(m.Type, m.Payload); err != nil {
			return nil, err
		}
		if p, ok := m.Payload.(*protocol.Progress); ok && p.Verdict != nil && p.Verdict.State != protocol.Normal {
			rep.verdicts = append(rep.verdicts, fmt.Sprintf("[%s] %s", p.Verdict.State, p.Verdict.Message))
		}
		last = m
	}
	cancel()
	wg.Wait()
	return last, serr
}

// failureText says why the protocol failed: the twin's refusal, else the kernel's error, with
// the protocol line.
func failureText(last *operation.Message, entries []benchEntry) string {
	if n := len(entries); n > 0 && entries[n-1].Error != "" {
		return entries[n-1].Error
	}
	f, ok := last.Payload.(*protocol.Failed)
	if !ok {
		return "the protocol did not finish"
	}
	msg := f.Error
	if f.Result != nil && f.Result.Error != "" {
		msg = f.Result.Error
		if f.Result.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", f.Result.Line, msg)
		}
	}
	if f.Verdict != nil && f.Reason == protocol.ReasonInterrupted {
		msg = fmt.Sprintf("perception stopped it: %s (%s)", f.Verdict.Message, msg)
	}
	return msg
}

// openBench is the bench of a workspace: a fresh deck with its journal replayed.
func openBench(ctx context.Context, ws string) (*bench.Deck, error) {
	d := bench.NewDeck()
	f, err := os.Open(filepath.Join(ws, benchDir, benchJournal))
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the bench's journal: %w", err)
	}
	defer f.Close()
	if _, err := bench.Replay(ctx, d, f); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return d, nil
}

// approver is --approve's: how a command on a physical backend is approved.
func (f *protocolFlags) approver(cmd *cobra.Command) (bench.Approver, error) {
	switch f.approve {
	case "never":
		return func(_ context.Context, c bench.Command) error {
			return fmt.Errorf("%w: --approve never", bench.ErrNotApproved)
		}, nil
	case "ask":
		in := bufio.NewReader(cmd.InOrStdin())
		return func(_ context.Context, c bench.Command) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "labmate: line %d: %s on a real instrument — go ahead? [y/N] ", c.Line, c)
			answer, _ := in.ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				return fmt.Errorf("%w: the answer was %q", bench.ErrNotApproved, strings.TrimSpace(answer))
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("--approve %q: ask or never", f.approve)
}
