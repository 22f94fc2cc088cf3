package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/coder/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/client"
	"github.com/labmate/labmate/server/mcp"
)

// kernels counts the real Python kernels a server starts and closes.
type kernels struct {
	live, peak, started atomic.Int64
}

type countedKernel struct {
	kernel.Kernel
	once sync.Once
	k    *kernels
}

func (c *countedKernel) Close() error {
	c.once.Do(func() { c.k.live.Add(-1) })
	return c.Kernel.Close()
}

func (k *kernels) start(t *testing.T) func(context.Context, string, string) (kernel.Kernel, error) {
	opts := testutil.KernelOptions(t)
	return func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
		o := opts
		o.Workspace = ws
		pk, err := python.Start(ctx, &o)
		if err != nil {
			return nil, err
		}
		k.started.Add(1)
		n := k.live.Add(1)
		for p := k.peak.Load(); n > p && !k.peak.CompareAndSwap(p, n); p = k.peak.Load() {
		}
		return &countedKernel{Kernel: pk, k: k}, nil
	}
}

// served is a server on a real listener with Serve's timeouts.
type served struct {
	srv   *server.Server
	url   string
	addr  string
	store protocol.Store
}

func serveReal(t *testing.T, edit func(*server.Config)) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := protocol.NewMemStore()
	var ks kernels
	cfg := server.Config{Config: runner.Config{Store: store, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0), Kernels: kernelFuncs{start: ks.start(t)}}, Addr: ln.Addr().String()}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		testutil.ReplayStore(t, store)
	})
	return &served{srv: srv, url: "http://" + ln.Addr().String(), addr: ln.Addr().String(), store: store}
}

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// healthy polls /healthz until stop closes and returns the slowest answer (or an error).
func healthy(url string, stop <-chan struct{}) <-chan error {
	out := make(chan error, 1)
	go func() {
		cl := &http.Client{Timeout: 5 * time.Second}
		var slowest time.Duration
		for {
			select {
			case <-stop:
				if slowest > 2*time.Second {
					out <- fmt.Errorf("/healthz took %v", slowest)
				} else {
					out <- nil
				}
				return
			case <-time.After(100 * time.Millisecond):
			}
			begin := time.Now()
			resp, err := cl.Get(url + "/healthz")
			if err != nil {
				out <- fmt.Errorf("/healthz: %w", err)
				return
			}
			resp.Body.Close()
			slowest = max(slowest, time.Since(begin))
		}
	}()
	return out
}

// TestTrickle: 100 connections that send their headers and then one byte of body every
// second, and 20 that trickle their headers, are cut off at Config.BodyTimeout (the header
// timeout is 10 s, or less with a shorter BodyTimeout) while /healthz answers at once; a
// WebSocket opened before, idle meanwhile, lives on.
func TestTrickle(t *testing.T) {
	s := serveReal(t, func(c *server.Config) { c.BodyTimeout = 2 * time.Second })
	ws, _, err := websocket.Dial(context.Background(), strings.Replace(s.url, "http", "ws", 1)+"/v1/sessions/live/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	stop := make(chan struct{})
	health := healthy(s.url, stop)

	type cut struct {
		after  time.Duration
		answer string
	}
	trickle := func(head, drip string, n int) <-chan cut {
		out := make(chan cut, n)
		for i := range n {
			go func() {
				begin := time.Now()
				c, err := net.Dial("tcp", s.addr)
				if err != nil {
					out <- cut{answer: "dial: " + err.Error()}
					return
				}
				defer c.Close()
				fmt.Fprintf(c, head, i)
				answer := make(chan string, 1)
				go func() {
					br := bufio.NewReader(c)
					line, err := br.ReadString('\n')
					if err != nil && line == "" {
						line = "closed: " + err.Error()
					}
					rest, _ := io.ReadAll(io.LimitReader(br, 4096))
					answer <- line + string(rest)
				}()
				tick := time.NewTicker(time.Second)
				defer tick.Stop()
				for {
					select {
					case a := <-answer:
						out <- cut{time.Since(begin), a}
						return
					case <-tick.C:
						if _, err := c.Write([]byte(drip)); err != nil {
							out <- cut{time.Since(begin), "write: " + err.Error()}
							return
						}
						if time.Since(begin) > 40*time.Second {
							out <- cut{time.Since(begin), "never cut off"}
							return
						}
					}
				}
			}()
		}
		return out
	}
	bodies := trickle("POST /v1/sessions/t%d/operations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", " ", 100)
	headers := trickle("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle-%d: ", "x", 20)
	for i := range 100 {
		c := <-bodies
		if c.after > 15*time.Second || !strings.Contains(c.answer, "400") || !strings.Contains(c.answer, "did not arrive within 2s") {
			t.Fatalf("body trickler %d: after %v: %q; want cut off after about 2 s with a 400 that says why", i, c.after, c.answer)
		}
	}
	for i := range 20 {
		if c := <-headers; c.after > 25*time.Second || c.answer == "never cut off" {
			t.Fatalf("header trickler %d: after %v: %q; want cut off after about 2 s", i, c.after, c.answer)
		}
	}
	close(stop)
	if err := <-health; err != nil {
		t.Errorf("while trickled: %v", err)
	}
	// The WebSocket, idle all along, still runs code.
	send(t, ws, protocol.TypeRequest, "live", "op", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('still here')"})
	var last int64
	if msgs := until(t, ws, "op", &last); !hasLine(msgs, "still here") {
		t.Errorf("the WebSocket after the trickle: %v", types(msgs))
	}
	for i := range 100 {
		noRequests(t, s.store, fmt.Sprint("t", i))
	}
}

// TestLongAnswersOutliveBodyTimeout: the read timeout ends with the request: a WebSocket
// idle for longer, and an MCP call whose answer streams for longer, are not cut.
func TestLongAnswersOutliveBodyTimeout(t *testing.T) {
	s := serveReal(t, func(c *server.Config) { c.BodyTimeout = time.Second })
	s.srv.Handle("/mcp", mcp.New(s.srv.Runner, nil).Handler())
	ws, _, err := websocket.Dial(context.Background(), strings.Replace(s.url, "http", "ws", 1)+"/v1/sessions/w/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	cl := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "exec",
		Arguments: map[string]any{"kernel": "python", "code": "import time\nfor i in range(5):\n    print('tick', i, flush=True)\n    time.sleep(0.6)"}})
	if err != nil || res.IsError {
		t.Fatalf("an MCP exec streaming for 3 s behind a 1 s body timeout: %v %+v", err, res)
	}
	send(t, ws, protocol.TypeRequest, "w", "op", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('alive')"})
	var last int64
	if msgs := until(t, ws, "op", &last); !hasLine(msgs, "alive") {
		t.Errorf("the WebSocket after 3 s: %v", types(msgs))
	}
}

// TestConnectionCap: at most MaxConns connections are served at once; the others wait, and
// are served once a place frees.
func TestConnectionCap(t *testing.T) {
	s := serveReal(t, func(c *server.Config) { c.MaxConns = 8; setStart(c, nil) })
	var held []net.Conn
	for range 8 {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(200 * time.Millisecond)
	cl := &http.Client{Timeout: time.Second}
	if resp, err := cl.Get(s.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a 9th connection was served beside 8 open ones")
	}
	for _, c := range held {
		c.Close()
	}
	cl.Timeout = 5 * time.Second
	resp, err := cl.Get(s.url + "/healthz")
	if err != nil {
		t.Fatalf("once the 8 closed: %v", err)
	}
	resp.Body.Close()
}

// TestThousandSessions: one client opens 1,000 new sessions and keeps them connected. The
// server takes MaxSessions (256, the default), refuses the rest with 503 saying why, and
// keeps serving: the live sessions run code, /healthz answers, and once connections close
// their places go to new sessions.
func TestThousandSessions(t *testing.T) {
	s := serveReal(t, nil)
	base := strings.Replace(s.url, "http", "ws", 1)
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	refused := 0
	for i := range 1000 {
		c, resp, err := websocket.Dial(context.Background(), fmt.Sprintf("%s/v1/sessions/s%d/ws", base, i), nil)
		if err != nil {
			var body string
			if resp != nil && resp.Body != nil {
				b, _ := io.ReadAll(resp.Body)
				body = string(b)
			}
			if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "256 sessions are live") || !strings.Contains(body, "--max-sessions") {
				t.Fatalf("session %d: %v %s; want 503 naming the limit", i, err, body)
			}
			refused++
			continue
		}
		conns = append(conns, c)
	}
	if len(conns) != 256 || refused != 744 {
		t.Fatalf("%d sessions taken, %d refused; want 256 and 744", len(conns), refused)
	}
	// Over REST too, and nothing is logged for the refused session.
	if code, body := postJSON(t, s.url+"/v1/sessions/late/operations", `{"kind":"exec","kernel":"python","code":"print(1)"}`); code != http.StatusServiceUnavailable || !strings.Contains(body, "--max-sessions") {
		t.Errorf("an operation in a 1,001st session: %d %s", code, body)
	}
	noRequests(t, s.store, "late")
	// The server keeps serving: health, and code in a live session.
	if resp, err := http.Get(s.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz with 256 live sessions: %v", err)
	}
	send(t, conns[0], protocol.TypeRequest, "s0", "op", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('served')"})
	var last int64
	if msgs := until(t, conns[0], "op", &last); !hasLine(msgs, "served") {
		t.Errorf("a live session: %v", types(msgs))
	}
	// Closing 100 connections (of sessions without kernels) makes room for 100 new sessions.
	for _, c := range conns[156:] {
		c.Close(websocket.StatusNormalClosure, "")
	}
	conns = conns[:156]
	time.Sleep(300 * time.Millisecond)
	for i := range 100 {
		c, _, err := websocket.Dial(context.Background(), fmt.Sprintf("%s/v1/sessions/n%d/ws", base, i), nil)
		if err != nil {
			t.Fatalf("new session %d once 100 closed: %v", i, err)
		}
		conns = append(conns, c)
	}
}

// TestKernelCap: ten sessions each ask for a kernel at once; no more than MaxKernels ever
// run, and every other operation is refused (503) or fails saying which limit stopped it.
func TestKernelCap(t *testing.T) {
	var ks kernels
	s := serveReal(t, func(c *server.Config) { c.Limits.Kernels = 2; setStart(c, ks.start(t)) })
	accepted, refused := 0, 0
	for i := range 10 {
		code, body := postJSON(t, fmt.Sprintf("%s/v1/sessions/k%d/operations", s.url, i), `{"kind":"exec","kernel":"python","code":"import time\ntime.sleep(60)"}`)
		switch {
		case code == http.StatusAccepted:
			accepted++
		case code == http.StatusServiceUnavailable && strings.Contains(body, "2 kernels are running") && strings.Contains(body, "--max-kernels"):
			refused++
		default:
			t.Fatalf("session k%d: %d %s", i, code, body)
		}
	}
	// Every accepted operation starts or fails with the limit's reason.
	deadline := time.Now().Add(60 * time.Second)
	for {
		running, failed := 0, 0
		for i := range 10 {
			ops, err := s.store.Operations(context.Background(), fmt.Sprint("k", i))
			if err != nil {
				continue // refused: never logged
			}
			switch ops[0].State {
			case protocol.Started, protocol.InProgress:
				running++
			case protocol.FailedState:
				failed++
				for m := range s.store.Operation(context.Background(), fmt.Sprint("k", i), ops[0].ID) {
					if m.Type == protocol.TypeFailed && !strings.Contains(string(m.Payload), "--max-kernels") {
						t.Errorf("k%d failed for another reason: %s", i, m.Payload)
					}
				}
			}
		}
		if running+failed == accepted {
			if running != 2 {
				t.Errorf("%d operations run, want 2 (the limit)", running)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d running, %d failed of %d accepted", running, failed, accepted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := ks.peak.Load(); p > 2 {
		t.Errorf("%d kernels ran at once, the limit is 2", p)
	}
	t.Logf("%d accepted, %d refused at once; %d kernels started, at most %d at once", accepted, refused, ks.started.Load(), ks.peak.Load())
	if resp, err := http.Get(s.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
}

// TestPrewarmCounts: the pre-warmed kernel counts against MaxKernels and is what a session
// gets; the pool does not refill beyond the limit, and refills once an idle session's
// kernel is reaped.
func TestPrewarmCounts(t *testing.T) {
	var ks kernels
	s := serveReal(t, func(c *server.Config) {
		c.Limits.Kernels, c.Prewarm, c.Limits.Idle = 1, []string{"python"}, 2*time.Second
		setStart(c, ks.start(t))
	})
	waitFor(t, "the pre-warmed kernel", func() bool { return ks.live.Load() == 1 })
	run := func(session string) []*protocol.EnhancedMessage {
		c, _ := clientFor(t, s.url)
		var got []*protocol.EnhancedMessage
		for m, err := range c.Exec(context.Background(), session, &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('ok')"}) {
			if err != nil {
				t.Fatalf("session %s: %v", session, err)
			}
			got = append(got, m)
		}
		return got
	}
	if msgs := run("a"); msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Fatalf("session a: %v", types(msgs))
	}
	if ks.started.Load() != 1 {
		t.Errorf("%d kernels started: session a should have taken the pre-warmed one", ks.started.Load())
	}
	code, body := postJSON(t, s.url+"/v1/sessions/b/operations", `{"kind":"exec","kernel":"python","code":"print(1)"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "--max-kernels") {
		t.Errorf("session b while a holds the only kernel: %d %s", code, body)
	}
	// a goes idle: its kernel is closed and the pool refills within the limit.
	waitFor(t, "a's kernel is reaped and the pool refilled", func() bool { return ks.started.Load() == 2 && ks.live.Load() == 1 })
	if msgs := run("b"); msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Fatalf("session b: %v", types(msgs))
	}
	if p := ks.peak.Load(); p != 1 {
		t.Errorf("%d kernels at once, the limit is 1", p)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQueueCaps: a session may have MaxQueue operations queued or running, the server
// MaxOperations; beyond, 429 and 503 say which, nothing is logged, and they end normally.
func TestQueueCaps(t *testing.T) {
	s := serveReal(t, func(c *server.Config) { c.Limits.Queue, c.Limits.Operations = 3, 4 })
	long := `{"kind":"exec","kernel":"python","code":"import time\ntime.sleep(60)"}`
	var ids []string
	for i := range 3 {
		code, body := postJSON(t, s.url+"/v1/sessions/q/operations", long)
		if code != http.StatusAccepted {
			t.Fatalf("operation %d: %d %s", i, code, body)
		}
		var r struct {
			OperationID string `json:"operation_id"`
		}
		json.Unmarshal([]byte(body), &r)
		ids = append(ids, r.OperationID)
	}
	if code, body := postJSON(t, s.url+"/v1/sessions/q/operations", long); code != http.StatusTooManyRequests || !strings.Contains(body, "--max-queue") {
		t.Errorf("a 4th operation in one session: %d %s, want 429", code, body)
	}
	if code, body := postJSON(t, s.url+"/v1/sessions/r/operations", long); code != http.StatusAccepted {
		t.Errorf("another session's first: %d %s", code, body)
	}
	if code, body := postJSON(t, s.url+"/v1/sessions/r/operations", long); code != http.StatusServiceUnavailable || !strings.Contains(body, "--max-operations") {
		t.Errorf("a 5th operation on the server: %d %s, want 503", code, body)
	}
	ops, _ := s.store.Operations(context.Background(), "q")
	if len(ops) != 3 {
		t.Errorf("session q logged %d operations, want 3 (refusals are not logged)", len(ops))
	}
	// Interrupting one makes room again.
	if code, body := postJSON(t, s.url+"/v1/sessions/q/operations/"+ids[2]+"/interrupt", `{"why":"room"}`); code != http.StatusAccepted {
		t.Fatalf("interrupt: %d %s", code, body)
	}
	waitFor(t, "the interrupted operation ends", func() bool {
		ops, _ := s.store.Operations(context.Background(), "q")
		return ops[2].State.Terminal()
	})
	if code, body := postJSON(t, s.url+"/v1/sessions/q/operations", `{"kind":"exec","kernel":"python","code":"print(1)"}`); code != http.StatusAccepted {
		t.Errorf("after an interrupt: %d %s", code, body)
	}
}

// TestReapDropsSession: an idle session's kernels are closed and the session dropped from
// memory (its place goes to another), while its log stays and a later request works on it.
func TestReapDropsSession(t *testing.T) {
	var ks kernels
	s := serveReal(t, func(c *server.Config) {
		c.Limits.Sessions, c.Limits.Idle = 1, 400*time.Millisecond
		setStart(c, ks.start(t))
	})
	c, _ := clientFor(t, s.url)
	exec := func(session, code string) []*protocol.EnhancedMessage {
		var got []*protocol.EnhancedMessage
		for m, err := range c.Exec(context.Background(), session, &protocol.Request{Kind: "exec", Kernel: "python", Code: code}) {
			if err != nil {
				t.Fatalf("session %s: %v", session, err)
			}
			got = append(got, m)
		}
		return got
	}
	first := exec("a", "v = 1\nprint('first')")
	if code, body := postJSON(t, s.url+"/v1/sessions/b/operations", `{"kind":"exec","kernel":"python","code":"print(1)"}`); code != http.StatusServiceUnavailable {
		t.Errorf("session b while a is live: %d %s, want 503", code, body)
	}
	waitFor(t, "a's kernel is reaped", func() bool { return ks.live.Load() == 0 })
	// a was dropped: b takes its place …
	if msgs := exec("b", "print('b')"); !hasLine(msgs, "b") {
		t.Errorf("session b after a was reaped: %v", types(msgs))
	}
	waitFor(t, "b is reaped", func() bool { return ks.live.Load() == 0 })
	// … and a comes back over its log, in a fresh kernel.
	again := exec("a", "print('v' in globals())")
	if !hasLine(again, "False") || again[0].Seq <= first[len(first)-1].Seq {
		t.Errorf("session a again: %v from seq %d (its log ended at %d)", types(again), again[0].Seq, first[len(first)-1].Seq)
	}
	var msgs []*protocol.EnhancedMessage
	for m, err := range s.store.After(context.Background(), "a", 0) {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("session a's log: seq %d at %d", m.Seq, i)
		}
	}
}

// TestRunsCap: at most MaxRuns agent runs run at once; the next is refused with 503 until
// one ends.
func TestRunsCap(t *testing.T) {
	s := serveReal(t, func(c *server.Config) {
		c.Limits.Runs = 2
		setStart(c, nil)
		c.Agents = &agentFuncs{run: func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
			return func(yield func(*agent.Event, error) bool) { <-ctx.Done() }
		}}
	})
	var ids []string
	for range 2 {
		code, body := postJSON(t, s.url+"/v1/runs", `{"goal":"wait"}`)
		if code != http.StatusAccepted {
			t.Fatalf("run: %d %s", code, body)
		}
		var r struct{ ID string }
		json.Unmarshal([]byte(body), &r)
		ids = append(ids, r.ID)
	}
	if code, body := postJSON(t, s.url+"/v1/runs", `{"goal":"wait"}`); code != http.StatusServiceUnavailable || !strings.Contains(body, "--max-runs") {
		t.Errorf("a 3rd run: %d %s, want 503", code, body)
	}
	if code, body := postJSON(t, s.url+"/v1/runs/"+ids[0]+"/cancel", ""); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, body)
	}
	waitFor(t, "a place for a run", func() bool {
		code, _ := postJSON(t, s.url+"/v1/runs", `{"goal":"wait"}`)
		return code == http.StatusAccepted
	})
}

func clientFor(t *testing.T, url string) (*client.Client, error) {
	t.Helper()
	c, err := client.New(url, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, nil
}
