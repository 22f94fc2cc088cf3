// Package client talks to labmate serve: it runs operations over the WebSocket protocol and
// follows their messages. When the connection drops, or the server cannot be reached or is
// restarting, it retries with jittered exponential backoff for up to a minute (Client.RetryFor)
// and resumes from the log (after=SEQ), so that nothing is lost or repeated; a server never
// reached whose port refuses connections can be given up on sooner (Client.FirstContact).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/labmate/labmate/protocol"
)

// Client is a connection factory for one server. Set its fields before the first call.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client

	// RetryFor is how long Exec keeps trying to reach the server (connection refused or
	// lost, 502/503/504 while it restarts or is busy), counted from the last time it could
	// (default one minute).
	RetryFor time.Duration
	// FirstContact, when set, is how long Exec keeps trying while it has never reached the
	// server and each connection is refused: nothing listens there (a wrong port, or no
	// server), or a server is still starting. Once reached, RetryFor holds.
	FirstContact time.Duration
	// OnRetry, when set, is told of each retry: the error and the wait before it.
	OnRetry func(err error, wait time.Duration)
}

// New returns a client for the server at baseURL (http:// or https://), sending token as a
// bearer token when it is not empty.
func New(baseURL, token string) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q: want http://HOST:PORT", baseURL)
	}
	return &Client{base: u, token: token, http: &http.Client{Timeout: 30 * time.Second}, RetryFor: time.Minute}, nil
}

// ReadToken reads a bearer token stored in a file (labmate serve keeps its own in
// DATA/token). A missing file is no token and no error.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("client: reading the token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ErrServer wraps an error reply of the server.
var ErrServer = errors.New("client: server refused")

// errRetry marks an error after which the server may be reached again: the connection was
// refused or lost, or the server answered 502, 503 or 504.
type errRetry struct{ err error }

func (e *errRetry) Error() string { return e.err.Error() }
func (e *errRetry) Unwrap() error { return e.err }

func retryable(err error) bool {
	var r *errRetry
	return errors.As(err, &r)
}

// Exec submits req as a new operation in session and yields every message of that
// operation, from operation_request to its terminal message. A dropped connection is
// resumed from the log, so nothing is lost or repeated; while the server cannot be reached
// Exec retries for up to RetryFor. A server killed outright loses the messages it had not
// committed yet, some of which it may have sent: its log then goes on from an earlier seq,
// and Exec goes on with it (seq steps back once; no message is yielded twice). Cancelling
// ctx interrupts the operation.
func (c *Client) Exec(ctx context.Context, session string, req *protocol.Request) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		f := &follower{c: c, session: session, opID: uuid.NewString(), req: req, yield: yield, after: -1, yielded: map[string]bool{}}
		retryFor := c.RetryFor
		if retryFor <= 0 {
			retryFor = time.Minute
		}
		reached, ever := time.Now(), false
		for attempt := 0; ; attempt++ {
			connected, done, err := f.follow(ctx)
			if done {
				return
			}
			if ctx.Err() != nil {
				yield(nil, ctx.Err())
				return
			}
			if connected {
				reached, attempt, ever = time.Now(), 0, true
			}
			if !retryable(err) {
				yield(nil, err)
				return
			}
			if !ever && c.FirstContact > 0 && errors.Is(err, syscall.ECONNREFUSED) && time.Since(reached) >= c.FirstContact {
				yield(nil, fmt.Errorf("client: nothing listens at %s (connection refused for %v): is the server running, on this port? %w", c.base.Redacted(), c.FirstContact.Round(time.Millisecond), err))
				return
			}
			if time.Since(reached) >= retryFor {
				yield(nil, fmt.Errorf("client: gave up after %v without reaching the server at %s: %w", retryFor, c.base.Redacted(), err))
				return
			}
			wait := min(backoff(attempt), time.Until(reached.Add(retryFor)))
			if c.OnRetry != nil {
				c.OnRetry(err, wait)
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
	}
}

// backoff is the wait before retry number attempt: 100 ms doubling up to 5 s, each drawn
// between half and all of it, so that the clients of a restarting server do not return in step.
func backoff(attempt int) time.Duration {
	d := min(100*time.Millisecond<<min(attempt, 10), 5*time.Second)
	return d/2 + rand.N(d/2+1)
}

// follower is one operation followed across connections.
type follower struct {
	c       *Client
	session string
	opID    string
	req     *protocol.Request
	yield   func(*protocol.EnhancedMessage, error) bool
	after   int64  // the session's seq to resume after; -1 until the first connection found the log's end
	reqID   string // the id of the last request message sent
	resent  bool   // the request was sent more than once

	yielded map[string]bool // the ids of the operation's messages yielded
	lastID  string          // the last one's id …
	lastSeq int64           // … and seq
}

// emit yields m unless it was yielded already; done when the iteration is over.
func (f *follower) emit(m *protocol.EnhancedMessage) (done bool) {
	if f.yielded[m.ID] {
		return false
	}
	f.yielded[m.ID] = true
	f.lastID, f.lastSeq = m.ID, m.Seq
	return !f.yield(m, nil) || m.Type.Terminal()
}

// resync brings the follower in line with the server's log before it reconnects. The log
// is append-only, but a server killed outright loses the messages it had not committed
// yet, which it may have sent: then the log goes on from an earlier seq with other
// messages (the restart's operation_failed). The operation's messages in the log that were
// not yielded are yielded now, and the session's seq to resume after comes down to the
// log's. needSend says the server never logged the request.
func (f *follower) resync(ctx context.Context) (needSend, done bool, err error) {
	c := f.c
	var tail []*protocol.EnhancedMessage
	found := false
	if len(f.yielded) > 0 {
		if tail, found, err = c.opMessages(ctx, f.session, f.opID, max(f.lastSeq-1, 0)); err != nil {
			return false, false, err
		}
	}
	if len(f.yielded) == 0 || (found && (len(tail) == 0 || tail[0].ID != f.lastID)) { // read it all
		if tail, found, err = c.opMessages(ctx, f.session, f.opID, 0); err != nil {
			return false, false, err
		}
	}
	switch {
	case !found && len(f.yielded) == 0:
		return true, false, nil // sent, never logged: send it again
	case !found:
		return false, false, fmt.Errorf("client: the server lost operation %s of session %s (it stopped before the operation was stored)", f.opID, f.session)
	}
	for _, m := range tail {
		if f.emit(m) {
			return false, true, nil
		}
	}
	if n := len(tail); n > 0 {
		f.after = min(f.after, tail[n-1].Seq)
	}
	return false, false, nil
}

// follow connects once. It returns whether it connected, done when the operation ended (or
// the consumer stopped, or the server refused it), and why it stopped otherwise.
func (f *follower) follow(ctx context.Context) (connected, done bool, err error) {
	c := f.c
	send := f.reqID == ""
	if send {
		f.after = -1 // the log's end, read again before each try: a restart may have moved it back
	}
	if f.after < 0 { // only the new operation matters: start from the end of the log
		last, err := c.lastSeq(ctx, f.session)
		if err != nil {
			return false, false, err
		}
		f.after = last
	} else if !send { // a reconnection
		need, done, err := f.resync(ctx)
		if done || err != nil {
			return false, done, err
		}
		send = need
	}
	u := c.url("/v1/sessions/" + url.PathEscape(f.session) + "/ws")
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.RawQuery = "after=" + strconv.FormatInt(f.after, 10)
	hdr := http.Header{}
	if c.token != "" {
		hdr.Set("Authorization", "Bearer "+c.token)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPHeader: hdr})
	cancel()
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return false, false, refusal(resp, "connecting to "+u.Redacted())
		}
		return false, false, &errRetry{fmt.Errorf("client: connecting to %s: %w", u.Redacted(), err)}
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	if send {
		if err := f.send(ctx, conn); err != nil {
			return true, false, err
		}
	}
	stop := context.AfterFunc(ctx, func() { // Ctrl-C: ask the server to interrupt
		m, _ := protocol.NewMessage(protocol.TypeInterrupt, f.session, f.opID, &protocol.Interrupt{Why: "client cancelled"})
		b, _ := json.Marshal(m)
		conn.Write(context.Background(), websocket.MessageText, b)
	})
	defer stop()
	pinger := make(chan struct{})
	defer close(pinger)
	go ping(conn, pinger)
	for {
		_, data, err := conn.Read(context.WithoutCancel(ctx))
		if err != nil {
			switch websocket.CloseStatus(err) {
			case -1, websocket.StatusGoingAway, websocket.StatusTryAgainLater, websocket.StatusInternalError, websocket.StatusNormalClosure, websocket.StatusAbnormalClosure:
				return true, false, &errRetry{fmt.Errorf("client: reading: %w", err)}
			}
			return true, false, fmt.Errorf("client: reading: %w", err)
		}
		var probe struct {
			Type    string `json:"type"`
			Error   string `json:"error"`
			ReplyTo string `json:"reply_to"`
		}
		if json.Unmarshal(data, &probe) == nil && probe.Type == "error" {
			if probe.ReplyTo != f.reqID {
				continue // about an interrupt that came too late: the terminal message follows
			}
			if f.resent { // the server may have had the first one after all
				if known, kerr := c.knownOp(ctx, f.session, f.opID); kerr == nil && known {
					continue
				}
			}
			f.yield(nil, fmt.Errorf("%w: %s", ErrServer, probe.Error))
			return true, true, nil
		}
		var m protocol.EnhancedMessage
		if err := json.Unmarshal(data, &m); err != nil {
			f.yield(nil, fmt.Errorf("client: malformed message from the server: %w", err))
			return true, true, nil
		}
		if m.Seq <= f.after {
			continue
		}
		f.after = m.Seq
		if m.OperationID == f.opID && f.emit(&m) {
			return true, true, nil
		}
	}
}

// send sends the operation's request (again, with the same operation id, when the server
// did not log the first one).
func (f *follower) send(ctx context.Context, conn *websocket.Conn) error {
	m, err := protocol.NewMessage(protocol.TypeRequest, f.session, f.opID, f.req)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(m)
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		return &errRetry{fmt.Errorf("client: sending the request: %w", err)}
	}
	f.resent = f.reqID != ""
	f.reqID = m.ID
	return nil
}

// ping closes conn when the server stops answering pings, so that a server gone without a
// word is noticed and retried.
func ping(conn *websocket.Conn, stop <-chan struct{}) {
	t := time.NewTicker(20 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := conn.Ping(ctx)
			cancel()
			if err != nil {
				conn.CloseNow()
				return
			}
		}
	}
}

func (c *Client) url(path string) *url.URL {
	u := *c.base
	u.RawPath = strings.TrimSuffix(u.EscapedPath(), "/") + path // path is escaped already
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = ""
	return &u
}

// get GETs path (with its query); a refusal is an error wrapping ErrServer, retryable for
// 502/503/504.
func (c *Client) get(ctx context.Context, path string) (*http.Response, error) {
	p, q, _ := strings.Cut(path, "?")
	u := c.url(p)
	u.RawQuery = q
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(r)
	if err != nil {
		return nil, &errRetry{fmt.Errorf("client: %w", err)}
	}
	return resp, nil
}

// refusal is the error of a server's HTTP refusal: its JSON error, wrapping ErrServer;
// retryable for 502, 503 and 504.
func refusal(resp *http.Response, what string) error {
	var e struct{ Error string }
	if resp.Body != nil {
		json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&e)
	}
	err := fmt.Errorf("%w: %s: %s", ErrServer, what, resp.Status)
	if e.Error != "" {
		err = fmt.Errorf("%w: %s: %s: %s", ErrServer, what, resp.Status, e.Error)
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return &errRetry{err}
	}
	return err
}

// knownOp reports whether the session's log holds the operation.
func (c *Client) knownOp(ctx context.Context, session, opID string) (bool, error) {
	_, found, err := c.opMessages(ctx, session, opID, math.MaxInt64)
	return found, err
}

// opMessages reads the operation's messages with seq > after from the log; found is false
// when the log does not hold the operation.
func (c *Client) opMessages(ctx context.Context, session, opID string, after int64) (msgs []*protocol.EnhancedMessage, found bool, err error) {
	resp, err := c.get(ctx, "/v1/sessions/"+url.PathEscape(session)+"/operations/"+url.PathEscape(opID)+"/messages?after="+strconv.FormatInt(after, 10))
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, false, nil
	case http.StatusBadRequest:
		// Past the end of the log: the operation is there, with nothing after; the log may be
		// shorter than what was read (a killed server loses what it had not committed).
		var e struct {
			LastSeq *int64 `json:"last_seq"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(b, &e) == nil && e.LastSeq != nil && *e.LastSeq < after {
			return nil, true, nil
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return nil, false, refusal(resp, "reading the operation's log")
	default:
		return nil, false, refusal(resp, "reading the operation's log")
	}
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil {
		return nil, false, &errRetry{fmt.Errorf("client: reading the operation's log: %w", err)}
	}
	return msgs, true, nil
}

// Sessions lists the server's sessions. A server whose answer is not a labmate session list
// (the URL names another program) is an error saying so, not retried.
func (c *Client) Sessions(ctx context.Context) ([]protocol.SessionInfo, error) {
	resp, err := c.get(ctx, "/v1/sessions")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, refusal(resp, "listing sessions")
	}
	var list []protocol.SessionInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&list); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) {
			return nil, fmt.Errorf("%w: %s is not a labmate server: GET /v1/sessions answered %s with something other than a list of sessions", ErrServer, c.base.Redacted(), resp.Header.Get("Content-Type"))
		}
		return nil, &errRetry{fmt.Errorf("client: listing sessions: %w", err)}
	}
	return list, nil
}

// lastSeq is the session's current last seq (0 for a new session).
func (c *Client) lastSeq(ctx context.Context, session string) (int64, error) {
	list, err := c.Sessions(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range list {
		if s.ID == session {
			return s.LastSeq, nil
		}
	}
	return 0, nil
}
