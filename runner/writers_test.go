package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/protocol/storetest"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
)

// writerEnv names the data directory of a test binary run as a writer child; writerEnv_NAME
// says which child it is: "serve", or a labmate run ("run1", "run2").
const writerEnv = "LABMATE_RUNNER_WRITER_CHILD"

// writerPace is how often an agent run's events come, linePace a cell's lines: the children
// stream, they do not flood the shared machine, but a cell's lines come often enough that a
// transaction is open (not yet committed) nearly all the time, so a process that showed a
// message before its commit would be caught by its kill.
const (
	writerPace = time.Millisecond
	linePace   = 100 * time.Microsecond
)

func TestMain(m *testing.M) {
	if data := os.Getenv(writerEnv); data != "" {
		name := os.Getenv(writerEnv + "_NAME")
		if name == "serve" {
			serveChild(data)
		} else {
			runChild(data, name)
		}
		os.Exit(3) // they stream until they are killed
	}
	os.Exit(m.Run())
}

// shownTo prints what a child showed: "shown SESSION SEQ ID" for a message, "event RUN SEQ"
// for an agent run's event (its run_event's seq in the run's session).
type shownTo struct {
	mu  sync.Mutex
	out io.Writer
}

func (s *shownTo) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.out, format, args...)
}

func die(name string, err error) {
	fmt.Fprintln(os.Stderr, name, err)
	os.Exit(2)
}

// runChild is a labmate run beside other processes: an agent run logged as labmate run logs
// it (locallog.Run.Logged: each event committed before it is yielded, and then printed), and
// two cells logged and printed as labmate exec prints them (through a locallog.Display), one
// in the session every child writes, one in its own.
func runChild(data, name string) {
	ctx := context.Background()
	out := &shownTo{out: os.Stdout}
	run, _, err := locallog.OwnRun(data, "run-"+name, "", os.Stderr)
	if err != nil {
		die(name, err)
	}
	go func() {
		events := func(yield func(*agent.Event, error) bool) {
			for i := 1; ; i++ {
				m, err := protocol.NewMessage(protocol.TypeProgress, "run-"+name, "op", &protocol.Progress{
					Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprintf("event %d", i)}})
				if !yield(&agent.Event{RunID: "run-" + name, Type: agent.EventOperation, Time: time.Now(), Message: m}, err) {
					return
				}
				time.Sleep(writerPace)
			}
		}
		for ev, err := range run.Logged(ctx, events, false) {
			if err != nil {
				die(name, err)
			}
			out.printf("event run-%s %d\n", name, ev.Seq)
		}
	}()

	st, err := locallog.Open(data, "exec")
	if err != nil {
		die(name, err)
	}
	display := locallog.NewDisplay(st)
	w := display.Writer(os.Stdout)
	for _, session := range []string{"shared", "own-" + name} {
		go func() {
			op := name + "-" + session
			show := func(typ protocol.Type, payload any) {
				m, err := protocol.NewMessage(typ, session, op, payload)
				if err == nil {
					m, err = st.Append(ctx, m)
				}
				if err != nil {
					die(name, err)
				}
				fmt.Fprintf(w, "shown %s %d %s\n", m.SessionID, m.Seq, m.ID) // one write, one line
			}
			show(protocol.TypeRequest, protocol.Request{Kind: "exec", Code: op})
			show(protocol.TypeAck, protocol.StatePayload{State: protocol.Acknowledged})
			show(protocol.TypeStart, protocol.StatePayload{State: protocol.Started})
			for j := 0; ; j++ {
				show(protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprint(op, " line ", j)}})
				time.Sleep(linePace)
			}
		}()
	}
	select {}
}

// streaming is a kernel that prints a line every linePace until it is interrupted.
type streaming struct{}

func (streaming) Exec(ctx context.Context, c *kernel.Cell) iter.Seq2[*kernel.Step, error] {
	return func(yield func(*kernel.Step, error) bool) {
		for i := 0; ctx.Err() == nil; i++ {
			o := &protocol.Observation{Kind: protocol.ObsStdout, Time: time.Now(), Line: fmt.Sprint("line ", i)}
			if !yield(&kernel.Step{Observation: o}, nil) {
				return
			}
			time.Sleep(linePace)
		}
		yield(&kernel.Step{Result: &protocol.Result{Status: protocol.StatusOK, WorkspaceOK: true}}, nil)
	}
}
func (streaming) Interrupt() error              { return nil }
func (streaming) Restart(context.Context) error { return nil }
func (streaming) Info() kernel.Info             { return kernel.Info{Name: "streaming"} }
func (streaming) Close() error                  { return nil }

// serveChild is labmate serve's runner over the data directory's log beside the labmate runs:
// it runs a cell in the shared session and one in its own, printing every message Run yields,
// and prints every frame a subscriber of the shared session gets (its own cell's and what the
// other processes append, which it follows).
func serveChild(data string) {
	ctx := context.Background()
	out := &shownTo{out: os.Stdout}
	st, err := locallog.Open(data, "serve")
	if err != nil {
		die("serve", err)
	}
	ws, err := os.MkdirTemp("", "labmate-writers-")
	if err != nil {
		die("serve", err)
	}
	r, err := runner.New(ctx, runner.Config{
		Store:      st,
		Kernels:    kernelsOf(func(context.Context, string, string) (kernel.Kernel, error) { return streaming{}, nil }),
		Workspaces: ws,
		LocalRuns:  locallog.Runs{Log: st, Data: data},
		Log:        log.New(os.Stderr, "serve: ", 0),
	})
	if err != nil {
		die("serve", err)
	}
	go func() {
		for f, err := range r.Subscribe(ctx, "shared", 0) {
			if err != nil {
				die("serve", err)
			}
			var m protocol.EnhancedMessage
			if err := json.Unmarshal(f.Data, &m); err != nil {
				die("serve", err)
			}
			out.printf("shown %s %d %s\n", m.SessionID, m.Seq, m.ID)
		}
	}()
	for _, session := range []string{"shared", "own-serve"} {
		go func() {
			for m, err := range r.Run(ctx, session, &protocol.Request{Kind: "exec", Kernel: "streaming", Code: "-"}) {
				if err != nil {
					die("serve", err)
				}
				out.printf("shown %s %d %s\n", m.SessionID, m.Seq, m.ID)
			}
		}()
	}
	select {}
}

// TestManyWriters runs two labmate runs and a server appending to one log at once — each
// an agent run or cells of its own, and cells in a session all three share — while this
// process follows the file with Tail, and kills each of them in turn (SIGKILL) mid-stream.
// Everything a process showed (printed as labmate run and labmate exec print, yielded by the
// runner's Run, sent to a subscriber) is in the file where it was shown; every session's seqs
// are gap-free and every stream replays through the state machine; Tail saw every message,
// each session's in seq order; Writer tells a live writer from a killed one; Recover closes
// the killed processes' streams, and leaves alone those of a writer that is still open.
func TestManyWriters(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	path := filepath.Join(data, locallog.File)
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	tctx, stopTail := context.WithCancel(ctx)
	var tailed []*protocol.EnhancedMessage
	tailDone := make(chan error, 1)
	go func() {
		var err error
		for m, e := range s.Tail(tctx) {
			if e != nil {
				err = e
				break
			}
			tailed = append(tailed, m)
		}
		tailDone <- err
	}()
	time.Sleep(2 * sqlite.TailPoll) // the tail has begun

	type at struct {
		session string
		seq     int64
	}
	var mu sync.Mutex
	shown := map[string]at{} // message id → where a child showed it
	events := map[at]bool{}  // the run events the runs printed
	type child struct {
		name  string
		began time.Time
		cmd   *exec.Cmd
		done  chan struct{}
		count chan int // how many lines it has printed, now and then
	}
	start := func(name string) *child {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+data, writerEnv+"_NAME="+name)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := &child{name, time.Now(), cmd, make(chan struct{}), make(chan int, 1<<16)}
		go func() {
			defer close(c.done)
			lines := bufio.NewScanner(stdout)
			n := 0
			for lines.Scan() {
				f := strings.Fields(lines.Text())
				switch {
				case len(f) == 4 && f[0] == "shown":
					seq, _ := strconv.ParseInt(f[2], 10, 64)
					mu.Lock()
					if prev, ok := shown[f[3]]; ok && prev != (at{f[1], seq}) {
						t.Errorf("%s showed message %s at %s/%d, another child at %v", name, f[3], f[1], seq, prev)
					}
					shown[f[3]] = at{f[1], seq}
					mu.Unlock()
				case len(f) == 3 && f[0] == "event":
					seq, _ := strconv.ParseInt(f[2], 10, 64)
					mu.Lock()
					events[at{f[1], seq}] = true
					mu.Unlock()
				default:
					t.Errorf("%s said %q", name, lines.Text())
					continue
				}
				n++
				select {
				case c.count <- n:
				default:
				}
			}
		}()
		return c
	}
	children := []*child{start("run1"), start("serve"), start("run2")}

	// Kill each once it has shown a good deal for a second, the others writing all the while.
	for _, c := range children {
		for n := range c.count {
			if n >= 1500 && time.Since(c.began) > time.Second {
				break
			}
		}
		if err := c.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		c.cmd.Wait()
		<-c.done
	}

	// Everything shown is in the file where it was shown.
	mu.Lock()
	defer mu.Unlock()
	logged := map[string]at{}
	types := map[at]protocol.Type{}
	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range sessions {
		for m, err := range s.After(ctx, i.ID, 0) {
			if err != nil {
				t.Fatal(err)
			}
			logged[m.ID] = at{m.SessionID, m.Seq}
			types[at{m.SessionID, m.Seq}] = m.Type
		}
	}
	for id, a := range shown {
		if got, ok := logged[id]; !ok || got != a {
			t.Errorf("message %s was shown as %s/%d; the log has %+v (found %v)", id, a.session, a.seq, got, ok)
		}
	}
	for a := range events {
		if types[a] != protocol.TypeRunEvent {
			t.Errorf("run %s printed its event %d; the log has %q there", a.session, a.seq, types[a])
		}
	}
	n, err := storetest.Consistent(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages and %d run events shown by the children, %d messages in the log", len(shown), len(events), n)
	if len(shown) < 2000 || len(events) < 100 {
		t.Errorf("%d messages and %d run events shown; want at least 2000 and 100", len(shown), len(events))
	}

	// The tail saw what every child committed, each session in seq order.
	time.Sleep(3 * sqlite.TailPoll)
	stopTail()
	if err := <-tailDone; err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, m := range tailed {
		if m.Seq != last[m.SessionID]+1 {
			t.Fatalf("the tail gave %s/%d after %d", m.SessionID, m.Seq, last[m.SessionID])
		}
		last[m.SessionID] = m.Seq
	}
	if len(tailed) != n {
		t.Errorf("the tail saw %d messages, the log has %d", len(tailed), n)
	}

	// A writer still open keeps its streams from Recover; the killed ones' are closed.
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck} {
		m, _ := protocol.NewMessage(typ, "shared", "other-op", protocol.Request{Kind: "exec"})
		if _, err := other.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Sync(ctx); err != nil { // what other processes see is what is committed
		t.Fatal(err)
	}
	if w, ok := s.Writer(ctx, "shared", "other-op"); !ok || !w.Live || w.Self || w.Pid != os.Getpid() || w.Role != "serve" {
		t.Errorf("Writer of a stream another open Store writes = %+v, %v; want this pid, live, not self", w, ok)
	}
	if w, ok := other.Writer(ctx, "shared", "other-op"); !ok || !w.Self {
		t.Errorf("Writer of a stream the Store asked wrote = %+v, %v; want self", w, ok)
	}
	run2 := children[2].cmd.Process.Pid
	if w, ok := s.Writer(ctx, "shared", "run2-shared"); !ok || w.Live || w.Pid != run2 || w.Role != "exec" {
		t.Errorf("Writer of a killed child's stream = %+v, %v; want pid %d, role exec, not live", w, ok, run2)
	}
	closed, err := s.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range closed {
		if id == "other-op" {
			t.Error("Recover closed the stream of a writer still open")
		}
	}
	ops, err := s.Operations(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.State.Live() != (op.ID == "other-op") {
			t.Errorf("after Recover, operation %s of the shared session is %s", op.ID, op.State)
		}
	}
	if _, err := storetest.Consistent(ctx, s); err != nil {
		t.Fatal(err)
	}
}
