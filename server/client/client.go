// Package client talks to labmate serve: it runs operations over the WebSocket protocol and
// follows their messages, resuming from the log (after=SEQ) when the connection drops.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/labmate/labmate/protocol"
)

// Client is a connection factory for one server.
type Client struct {
	base  *url.URL
	token string
}

// New returns a client for the server at baseURL (http:// or https://), sending token as a
// bearer token when it is not empty.
func New(baseURL, token string) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q: want http://HOST:PORT", baseURL)
	}
	return &Client{base: u, token: token}, nil
}

// ErrServer wraps an error reply of the server.
var ErrServer = errors.New("client: server refused")

// Exec submits req as a new operation in session and yields every message of that
// operation, from operation_request to its terminal message. A dropped connection is resumed
// from the log, so nothing is lost or repeated. Cancelling ctx interrupts the operation.
func (c *Client) Exec(ctx context.Context, session string, req *protocol.Request) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		opID := uuid.NewString()
		after := int64(-1) // -1: not submitted yet
		for attempt := 0; ; attempt++ {
			done, next, err := c.follow(ctx, session, opID, req, after, yield)
			if done {
				return
			}
			if ctx.Err() != nil {
				yield(nil, ctx.Err())
				return
			}
			if err != nil && (attempt >= 5 || next == after) {
				yield(nil, err)
				return
			}
			after = next
			time.Sleep(time.Duration(attempt*100) * time.Millisecond)
		}
	}
}

// follow connects once. It returns done when the operation ended (or the consumer stopped),
// and the seq to resume after.
func (c *Client) follow(ctx context.Context, session, opID string, req *protocol.Request, after int64, yield func(*protocol.EnhancedMessage, error) bool) (bool, int64, error) {
	u := *c.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/sessions/" + url.PathEscape(session) + "/ws"
	from := max(after, 0)
	if after < 0 { // only the new operation matters: start from the end of the log
		last, err := c.lastSeq(ctx, session)
		if err != nil {
			return false, after, err
		}
		from = last
	}
	u.RawQuery = "after=" + strconv.FormatInt(from, 10)
	hdr := http.Header{}
	if c.token != "" {
		hdr.Set("Authorization", "Bearer "+c.token)
	}
	conn, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return false, after, fmt.Errorf("client: connecting to %s: %w", u.Redacted(), err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	if after < 0 {
		m, err := protocol.NewMessage(protocol.TypeRequest, session, opID, req)
		if err != nil {
			return true, after, err
		}
		b, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			return false, after, fmt.Errorf("client: sending the request: %w", err)
		}
		after = from
	}
	stop := context.AfterFunc(ctx, func() { // Ctrl-C: ask the server to interrupt
		m, _ := protocol.NewMessage(protocol.TypeInterrupt, session, opID, &protocol.Interrupt{Why: "client cancelled"})
		b, _ := json.Marshal(m)
		conn.Write(context.Background(), websocket.MessageText, b)
	})
	defer stop()
	for {
		_, data, err := conn.Read(context.WithoutCancel(ctx))
		if err != nil {
			return false, after, fmt.Errorf("client: reading: %w", err)
		}
		var probe struct {
			Type  string `json:"type"`
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &probe) == nil && probe.Type == "error" {
			yield(nil, fmt.Errorf("%w: %s", ErrServer, probe.Error))
			return true, after, nil
		}
		var m protocol.EnhancedMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return true, after, fmt.Errorf("client: malformed message from the server: %w", err)
		}
		after = m.Seq
		if m.OperationID != opID {
			continue
		}
		if !yield(&m, nil) || m.Type.Terminal() {
			return true, after, nil
		}
	}
}

// lastSeq is the session's current last seq (0 for a new session).
func (c *Client) lastSeq(ctx context.Context, session string) (int64, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/sessions"
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		return 0, fmt.Errorf("%w: %s: %s", ErrServer, resp.Status, e.Error)
	}
	var list []protocol.SessionInfo
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return 0, fmt.Errorf("client: listing sessions: %w", err)
	}
	for _, s := range list {
		if s.ID == session {
			return s.LastSeq, nil
		}
	}
	return 0, nil
}
