package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/client"
)

// serve starts a real server with Python kernels on a loopback listener.
func serve(t *testing.T, token string) (string, protocol.Store) {
	t.Helper()
	opts := testutil.KernelOptions(t)
	store := protocol.NewMemStore()
	srv, err := server.New(context.Background(), server.Config{
		Config: runner.Config{Store: store, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0), Kernels: pythonKernels{opts}},
		Token:  token,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	return ln.Addr().String(), store
}

// proxy forwards a loopback port to the server; down cuts every connection and refuses new
// ones until up: the server is unreachable for a while, as when it restarts or the network
// drops.
type proxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Errorf("the proxy back on %s: %v", p.addr, err)
		return
	}
	p.serve(ln)
}

// TestResumeThroughOutage: the server cannot be reached for 3 s while an operation streams;
// the client retries, resumes with after=SEQ, and yields exactly the operation's log —
// nothing lost, nothing twice.
func TestResumeThroughOutage(t *testing.T) {
	addr, store := serve(t, "")
	p := newProxy(t, addr)
	c, err := client.New("http://"+p.addr, "")
	if err != nil {
		t.Fatal(err)
	}
	var retries int
	c.OnRetry = func(err error, wait time.Duration) { retries++ }
	code := "import time\nfor i in range(50):\n    print('line', i, flush=True)\n    time.sleep(0.1)"
	var got []*protocol.EnhancedMessage
	cut := false
	for m, err := range c.Exec(context.Background(), "s", &protocol.Request{Kind: "exec", Kernel: "python", Code: code}) {
		if err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		got = append(got, m)
		if !cut && len(got) == 10 {
			cut = true
			p.down()
			time.AfterFunc(3*time.Second, p.up)
		}
	}
	if retries == 0 {
		t.Error("the client never retried: the outage did not happen")
	}
	var want []*protocol.EnhancedMessage
	for m, err := range store.Operation(context.Background(), "s", got[0].OperationID) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	if len(got) != len(want) {
		t.Fatalf("the client yielded %d messages, the log has %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].ID != want[i].ID {
			t.Fatalf("message %d: seq %d id %s, the log's is seq %d id %s", i, got[i].Seq, got[i].ID, want[i].Seq, want[i].ID)
		}
	}
	if got[len(got)-1].Type != protocol.TypeComplete {
		t.Errorf("it ended %s", got[len(got)-1].Type)
	}
	t.Logf("%d messages across an outage of 3 s, %d retries", len(got), retries)
}

// TestServerComesUpLate: the server is unreachable when the client starts and comes up 2 s
// later; the operation runs once.
func TestServerComesUpLate(t *testing.T) {
	addr, store := serve(t, "")
	p := newProxy(t, addr)
	p.down()
	time.AfterFunc(2*time.Second, p.up)
	c, _ := client.New("http://"+p.addr, "")
	var last *protocol.EnhancedMessage
	for m, err := range c.Exec(context.Background(), "late", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('once')"}) {
		if err != nil {
			t.Fatal(err)
		}
		last = m
	}
	if last == nil || last.Type != protocol.TypeComplete {
		t.Fatalf("ended with %v", last)
	}
	ops, err := store.Operations(context.Background(), "late")
	if err != nil || len(ops) != 1 {
		t.Errorf("the session has %v %v, want one operation", ops, err)
	}
}

// TestGivesUp: a server that stays down: the client gives up after RetryFor, saying so.
func TestGivesUp(t *testing.T) {
	for _, retryFor := range []time.Duration{3 * time.Second, 0} { // 0: the default, a minute
		t.Run(fmt.Sprint(retryFor), func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // nothing listens there
			c, _ := client.New("http://"+addr, "")
			want := time.Minute
			if retryFor > 0 {
				c.RetryFor, want = retryFor, retryFor
			}
			begin := time.Now()
			var got error
			for _, err := range c.Exec(context.Background(), "x", &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"}) {
				got = err
			}
			took := time.Since(begin)
			if got == nil || !strings.Contains(got.Error(), "gave up after "+want.String()) || !strings.Contains(got.Error(), "connection refused") {
				t.Errorf("error %v, want it to say it gave up after %v and why", got, want)
			}
			if took < want || took > want+10*time.Second {
				t.Errorf("gave up after %v, want %v", took, want)
			}
		})
	}
}

// TestFirstContact: where nothing listens (a wrong port), a client with FirstContact set says
// so once that has passed, not after RetryFor; a server that starts within it is reached.
func TestFirstContact(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there
	c, _ := client.New("http://"+addr, "")
	c.FirstContact = 500 * time.Millisecond
	begin := time.Now()
	var got error
	for _, err := range c.Exec(context.Background(), "x", &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"}) {
		got = err
	}
	if took := time.Since(begin); took < c.FirstContact || took > 3*time.Second {
		t.Errorf("gave up after %v, want %v", took, c.FirstContact)
	}
	if got == nil || !strings.Contains(got.Error(), "nothing listens at http://"+addr) || !strings.Contains(got.Error(), "connection refused") {
		t.Errorf("error %v, want it to say nothing listens there", got)
	}
}

// TestRefusalIsFinal: a refusal (a wrong token) is not retried.
func TestRefusalIsFinal(t *testing.T) {
	addr, _ := serve(t, "the-right-token-0123456789")
	c, _ := client.New("http://"+addr, "a-wrong-token")
	begin := time.Now()
	var got error
	for _, err := range c.Exec(context.Background(), "x", &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"}) {
		got = err
	}
	if !errors.Is(got, client.ErrServer) || !strings.Contains(got.Error(), "401") || !strings.Contains(got.Error(), "bearer token") {
		t.Errorf("a wrong token: %v", got)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the refusal took %v: it was retried", d)
	}
}

// TestSessionNames: a session id with a space, a slash, a percent sign or non-ASCII letters
// reaches the server as written, for the WebSocket and for the REST resume.
func TestSessionNames(t *testing.T) {
	addr, store := serve(t, "")
	c, _ := client.New("http://"+addr+"/", "")
	for _, id := range []string{"cli one", "a/b", "100%", "größe"} {
		var last *protocol.EnhancedMessage
		for m, err := range c.Exec(context.Background(), id, &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(1)"}) {
			if err != nil {
				t.Fatalf("session %q: %v", id, err)
			}
			last = m
		}
		if last == nil || last.Type != protocol.TypeComplete {
			t.Fatalf("session %q ended with %v", id, last)
		}
		if ops, err := store.Operations(context.Background(), id); err != nil || len(ops) != 1 {
			t.Errorf("session %q has %v %v, want one operation", id, ops, err)
		}
	}
}

// pythonKernels starts sandboxed Python kernels with opts, each in its workspace; it lists none.
type pythonKernels struct{ opts kernel.Options }

func (k pythonKernels) Start(ctx context.Context, _, workspace string) (kernel.Kernel, error) {
	o := k.opts
	o.Workspace = workspace
	return python.Start(ctx, &o)
}

func (pythonKernels) List(context.Context) []runner.KernelInfo { return nil }
