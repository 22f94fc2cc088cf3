package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/client"
)

type fixture struct {
	srv   *server.Server
	http  *httptest.Server
	store protocol.Store
}

func newFixture(t testing.TB, store protocol.Store, edit func(*server.Config)) *fixture {
	t.Helper()
	opts := testutil.KernelOptions(t)
	cfg := server.Config{
		Config: runner.Config{Store: store, Workspaces: t.TempDir(), Prewarm: []string{"python"}, Log: log.New(t.Output(), "", 0), Kernels: kernelFuncs{start: func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			if name != "python" {
				return nil, fmt.Errorf("unknown kernel %q", name)
			}
			o := opts
			o.Workspace = ws
			return python.Start(ctx, &o)
		}}},
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv, http: httptest.NewServer(srv), store: store}
	t.Cleanup(func() {
		f.http.Close()
		srv.Close()
		testutil.ReplayStore(t, store) // every stream the server wrote obeys the state machine
	})
	return f
}

func (f *fixture) dial(t *testing.T, session string, after int64) *websocket.Conn {
	t.Helper()
	url := strings.Replace(f.http.URL, "http", "ws", 1) + fmt.Sprintf("/v1/sessions/%s/ws?after=%d", session, after)
	c, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func send(t *testing.T, c *websocket.Conn, typ protocol.Type, session, op string, payload any) {
	t.Helper()
	m, err := protocol.NewMessage(typ, session, op, payload)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// read returns the next frame as a message, or the error reply's text.
func read(t *testing.T, c *websocket.Conn) (*protocol.EnhancedMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var probe struct{ Type, Error string }
	json.Unmarshal(data, &probe)
	if probe.Type == "error" {
		return nil, probe.Error
	}
	var m protocol.EnhancedMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return &m, ""
}

// until reads until op's terminal message, checking gap-free seq and causal order.
func until(t *testing.T, c *websocket.Conn, op string, last *int64) []*protocol.EnhancedMessage {
	t.Helper()
	var got []*protocol.EnhancedMessage
	for {
		m, e := read(t, c)
		if e != "" {
			t.Fatalf("error reply: %s", e)
		}
		if *last != 0 && m.Seq != *last+1 {
			t.Fatalf("seq %d after %d: not gap-free", m.Seq, *last)
		}
		*last = m.Seq
		if m.OperationID != op {
			continue
		}
		got = append(got, m)
		if m.Type.Terminal() {
			return got
		}
	}
}

func TestExecOverWebSocket(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	c := f.dial(t, "s1", 0)
	send(t, c, protocol.TypeRequest, "s1", "op1", &protocol.Request{Kind: "exec", Kernel: "python", Code: "a = 41\nfor i in range(3):\n    print('line', i)"})
	var last int64
	msgs := until(t, c, "op1", &last)
	testutil.Replay(t, slices.Values(msgs))
	if msgs[0].Type != protocol.TypeRequest || msgs[1].Type != protocol.TypeAck || msgs[2].Type != protocol.TypeStart || msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Fatalf("types %v", types(msgs))
	}
	// The workspace persists: a second operation in the session sees a.
	send(t, c, protocol.TypeRequest, "s1", "op2", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(a + 1)"})
	msgs = until(t, c, "op2", &last)
	if !hasLine(msgs, "42") {
		t.Errorf("second operation did not see the first one's variable: %v", types(msgs))
	}
}

func TestResumeAfterDisconnect(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	c := f.dial(t, "s", 0)
	send(t, c, protocol.TypeRequest, "s", "op", &protocol.Request{Kind: "exec", Kernel: "python",
		Code: "import time\nfor i in range(40):\n    print(i, flush=True)\n    time.sleep(0.01)"})
	var seen []*protocol.EnhancedMessage
	for len(seen) < 8 {
		m, _ := read(t, c)
		seen = append(seen, m)
	}
	c.CloseNow() // drop the connection mid-stream
	time.Sleep(100 * time.Millisecond)
	c2 := f.dial(t, "s", seen[len(seen)-1].Seq)
	last := seen[len(seen)-1].Seq
	seen = append(seen, until(t, c2, "op", &last)...)
	for i, m := range seen {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d: lost or repeated across the reconnect", i, m.Seq)
		}
	}
	testutil.Replay(t, slices.Values(seen))
	var lines int
	for _, m := range seen {
		if p, _ := protocol.DecodePayload(m); p != nil {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsStdout {
				lines++
			}
		}
	}
	if lines != 40 {
		t.Errorf("%d stdout lines across the reconnect, want 40", lines)
	}
}

func TestInterruptAndBadMessages(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	c := f.dial(t, "s", 0)
	for _, bad := range []struct{ frame, want string }{
		{"{not json", "malformed message"},
		{`{"type":"operation_teleport","operation_id":"x"}`, `type "operation_teleport"`},
		{`{"type":"operation_complete","operation_id":"x"}`, `type "operation_complete"`},
		{`{"type":"operation_request","operation_id":"x","payload":{"kind":7}}`, "operation_request payload"},
		{`{"type":"operation_interrupt","operation_id":"nope"}`, "illegal transition"},
	} {
		c.Write(context.Background(), websocket.MessageText, []byte(bad.frame))
		if _, e := read(t, c); !strings.Contains(e, bad.want) {
			t.Errorf("%s: reply %q, want it to mention %q", bad.frame, e, bad.want)
		}
	}
	// A rejected request is logged and failed, and the session stays usable.
	send(t, c, protocol.TypeRequest, "s", "bad", &protocol.Request{Kind: "exec", Kernel: "python", Code: "x", Hotfix: "sometimes"})
	var last int64
	msgs := until(t, c, "bad", &last)
	if p, _ := protocol.DecodePayload(msgs[len(msgs)-1]); p.(*protocol.Failed).Reason != protocol.ReasonRejected {
		t.Errorf("bad hotfix: %+v", p)
	}
	send(t, c, protocol.TypeRequest, "s", "loop", &protocol.Request{Kind: "exec", Kernel: "python", Code: "k = 0\nwhile True:\n    k += 1"})
	// The loop runs once its operation has started (its kernel is up, however slow the machine).
	for {
		m, e := read(t, c)
		if e != "" {
			t.Fatalf("error reply: %s", e)
		}
		if m.Seq != last+1 {
			t.Fatalf("seq %d after %d: not gap-free", m.Seq, last)
		}
		last = m.Seq
		if m.OperationID == "loop" && m.Type == protocol.TypeStart {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	send(t, c, protocol.TypeInterrupt, "s", "loop", &protocol.Interrupt{Why: "test"})
	msgs = until(t, c, "loop", &last)
	p, _ := protocol.DecodePayload(msgs[len(msgs)-1])
	if fl, ok := p.(*protocol.Failed); !ok || fl.Reason != protocol.ReasonInterrupted || !fl.Result.WorkspaceOK {
		t.Fatalf("interrupted loop: %+v", p)
	}
	send(t, c, protocol.TypeRequest, "s", "after", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(k > 0)"})
	if msgs := until(t, c, "after", &last); !hasLine(msgs, "True") {
		t.Errorf("workspace lost after the interrupt: %v", types(msgs))
	}
}

func TestSlowSubscriberIsCutOff(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Limits.SubscriberBuffer = 256 })
	slow := f.dial(t, "s", 0) // never reads while the operation runs
	c, _ := client.New(f.http.URL, "")
	begin := time.Now()
	var got []*protocol.EnhancedMessage
	for m, err := range c.Exec(context.Background(), "s", &protocol.Request{Kind: "exec", Kernel: "python", Code: "for i in range(60000):\n    print(i)"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if d := time.Since(begin); d > 60*time.Second {
		t.Errorf("the operation took %v with a stalled subscriber", d)
	}
	if got[len(got)-1].Type != protocol.TypeComplete || !hasLine(got, "59999") {
		t.Fatalf("the other subscriber: %d messages ending %s", len(got), got[len(got)-1].Type)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Fatalf("seq %d after %d: repeated", got[i].Seq, got[i-1].Seq)
		}
	}
	// The slow one finds its connection closed with a reason that says where to resume…
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	var last int64
	for err == nil {
		var data []byte
		if _, data, err = slow.Read(ctx); err == nil {
			var m protocol.EnhancedMessage
			json.Unmarshal(data, &m)
			last = m.Seq
		}
	}
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater || !strings.Contains(err.Error(), fmt.Sprintf("after=%d", last)) {
		t.Fatalf("slow subscriber (last seq %d): %v", last, err)
	}
	// … and resumes from the log without a gap.
	again := f.dial(t, "s", last)
	until(t, again, got[0].OperationID, &last)
}

// Three sessions run their cells at the same time: each cell's start arrives before any of the
// others ends (judged from the stream, not the wall clock, so that kernels slow to start on a
// busy machine do not make it fail, while cells run one after another always do).
func TestParallelSessionsAndClient(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	c, err := client.New(f.http.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var started, ended [3]time.Time
	for i := range 3 {
		wg.Go(func() {
			var n int
			for m, err := range c.Exec(context.Background(), fmt.Sprint("p", i), &protocol.Request{Kind: "exec", Kernel: "python", Code: "import time\ntime.sleep(1)\nprint('ok')"}) {
				if err != nil {
					t.Error(err)
					return
				}
				n++
				switch {
				case m.Type == protocol.TypeStart:
					started[i] = time.Now()
				case m.Type.Terminal():
					ended[i] = time.Now()
					if m.Type != protocol.TypeComplete {
						t.Errorf("session %d: %s", i, m.Payload)
					}
				}
			}
			if n < 4 {
				t.Errorf("session %d: %d messages", i, n)
			}
		})
	}
	wg.Wait()
	for i := range 3 {
		for j := range 3 {
			if started[i].IsZero() || !started[i].Before(ended[j]) {
				t.Errorf("session %d's cell started at %v, after session %d's ended (%v): not in parallel",
					i, started[i].Format(time.StampMilli), j, ended[j].Format(time.StampMilli))
			}
		}
	}
}

func TestRESTAndToken(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token = "s3cret" })
	get := func(path, token string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	if r, _ := get("/healthz", ""); r.StatusCode != 200 {
		t.Errorf("healthz: %d", r.StatusCode)
	}
	if r, _ := get("/v1/sessions", ""); r.StatusCode != 401 {
		t.Errorf("no token: %d", r.StatusCode)
	}
	if r, _ := get("/v1/sessions", "wrong"); r.StatusCode != 401 {
		t.Errorf("wrong token: %d", r.StatusCode)
	}
	c, _ := client.New(f.http.URL, "s3cret")
	for _, err := range c.Exec(context.Background(), "rest", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(1)"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r, body := get("/v1/sessions/rest/operations", "s3cret"); r.StatusCode != 200 || !strings.Contains(body, `"state":"COMPLETED"`) {
		t.Errorf("operations: %d %s", r.StatusCode, body)
	}
	if r, body := get("/v1/sessions/nope/operations", "s3cret"); r.StatusCode != 404 {
		t.Errorf("unknown session: %d %s", r.StatusCode, body)
	}
	if r, body := get("/v1/sessions/rest/messages?after=x", "s3cret"); r.StatusCode != 400 {
		t.Errorf("bad after: %d %s", r.StatusCode, body)
	}
}

func TestRecoverOnStart(t *testing.T) {
	store := protocol.NewMemStore()
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
		m, _ := protocol.NewMessage(typ, "crashed", "op", &protocol.Request{Kind: "exec"})
		if _, err := store.Append(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	newFixture(t, store, nil)
	ops, err := store.Operations(context.Background(), "crashed")
	if err != nil || len(ops) != 1 || ops[0].State != protocol.FailedState {
		t.Fatalf("after restart: %+v %v", ops, err)
	}
}

func types(msgs []*protocol.EnhancedMessage) []protocol.Type {
	var out []protocol.Type
	for _, m := range msgs {
		out = append(out, m.Type)
	}
	return out
}

func hasLine(msgs []*protocol.EnhancedMessage, line string) bool {
	for _, m := range msgs {
		if p, _ := protocol.DecodePayload(m); p != nil {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Line == line {
				return true
			}
		}
	}
	return false
}

func TestOversizedFrame(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.MaxMessageBytes = 1024 })
	c := f.dial(t, "big", 0)
	send(t, c, protocol.TypeRequest, "big", "op", &protocol.Request{Kind: "exec", Kernel: "python", Code: strings.Repeat("x = 1\n", 250)}) // one write: the server closes before a second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("oversized frame: %v, want close status 1009 (message too big)", err)
	}
	// The session stays usable on a new connection.
	c = f.dial(t, "big", 0)
	send(t, c, protocol.TypeRequest, "big", "small", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('fine')"})
	var last int64
	if msgs := until(t, c, "small", &last); !hasLine(msgs, "fine") {
		t.Errorf("session unusable after an oversized frame: %v", types(msgs))
	}
}

func TestCrossOriginRefused(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	url := strings.Replace(f.http.URL, "http", "ws", 1) + "/v1/sessions/x/ws"
	_, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin WebSocket: %v (%v), want 403", err, resp)
	}
}

func TestQueueOrderAndReaping(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Limits.Idle = 200 * time.Millisecond })
	c := f.dial(t, "q", 0)
	for i := range 3 {
		send(t, c, protocol.TypeRequest, "q", fmt.Sprint("op", i), &protocol.Request{Kind: "exec", Kernel: "python", Code: fmt.Sprintf("import time\ntime.sleep(0.1)\nv = %d", i)})
	}
	// Operations of one session run one after the other, in the order they were sent.
	var order []string
	for len(order) < 6 {
		m, e := read(t, c)
		if e != "" {
			t.Fatal(e)
		}
		if m.Type == protocol.TypeStart || m.Type.Terminal() {
			order = append(order, fmt.Sprint(m.OperationID, " ", m.Type))
		}
	}
	want := []string{"op0 operation_start", "op0 operation_complete", "op1 operation_start", "op1 operation_complete", "op2 operation_start", "op2 operation_complete"}
	if strings.Join(order, ", ") != strings.Join(want, ", ") {
		t.Fatalf("order %q, want %q", order, want)
	}
	// An idle session's kernels are reaped: the next operation gets a fresh interpreter.
	time.Sleep(time.Second)
	send(t, c, protocol.TypeRequest, "q", "after", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('v' in globals())"})
	var last int64
	if msgs := until(t, c, "after", &last); !hasLine(msgs, "False") {
		t.Errorf("the kernel survived its idle timeout: %v", types(msgs))
	}
}
