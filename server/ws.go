package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/protocol"
)

// subscriber is one live listener of a session's log. The fan-out never blocks on it: when
// its buffer is full it is dropped and told to resume from the log (messages here are only
// ever dropped together with the subscriber, never silently).
type subscriber struct {
	ch      chan frame
	dropped chan struct{}
	once    sync.Once
}

// frame is one message as sent: encoded once, however many subscribers it goes to.
type frame struct {
	seq  int64
	data []byte
}

// offer hands f to the subscriber; false when it was too slow and has been cut off.
func (sub *subscriber) offer(f frame) bool {
	select {
	case sub.ch <- f:
		return true
	default:
		sub.once.Do(func() { close(sub.dropped) })
		return false
	}
}

func (ss *session) subscribe(buffer int) *subscriber {
	sub := &subscriber{ch: make(chan frame, buffer), dropped: make(chan struct{})}
	ss.mu.Lock()
	ss.subs[sub] = struct{}{}
	ss.mu.Unlock()
	return sub
}

func (ss *session) unsubscribe(sub *subscriber) {
	ss.mu.Lock()
	delete(ss.subs, sub)
	ss.mu.Unlock()
}

// errorReply is sent, outside the log, to the client whose message could not be taken.
type errorReply struct {
	Type    string `json:"type"` // "error"
	Error   string `json:"error"`
	ReplyTo string `json:"reply_to,omitempty"` // the id of the offending message, when it had one
}

// handleWS serves GET /v1/sessions/{id}/ws?after=SEQ: the session's log after SEQ, then its
// live stream; the client sends operation_request and operation_interrupt messages.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	ss, err := s.open(id)
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	defer s.release(ss)
	// Same-origin only (the guard checked already; Accept checks again). The dashboard asks
	// for the labmate subprotocol, offering its token as another.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsProtocol}})
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(s.cfg.MaxMessageBytes)
	ctx, cancel := context.WithCancel(s.streams)
	defer cancel()
	if err := s.checkAfter(ctx, id, after); err != nil {
		// Said in an error message and in the close reason (at most 123 bytes), so that a
		// client sees it whichever it reads.
		b, _ := json.Marshal(errorReply{Type: "error", Error: err.Error()})
		conn.Write(ctx, websocket.MessageText, b)
		reason := err.Error()
		if len(reason) > 123 {
			reason = textcut.Head(reason, 120)
		}
		conn.Close(websocket.StatusPolicyViolation, reason)
		return
	}
	sub := ss.subscribe(s.cfg.SubscriberBuffer)
	defer ss.unsubscribe(sub)

	go func() { // reader: client messages; its end (close, error) ends the connection
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if reply := s.take(ctx, ss, data); reply != nil {
				b, _ := json.Marshal(reply)
				if conn.Write(ctx, websocket.MessageText, b) != nil {
					return
				}
			}
		}
	}()

	// Replay the log after SEQ, then go live, skipping what the replay already sent.
	last := after
	for m, err := range s.store.After(ctx, id, after) {
		if errors.Is(err, protocol.ErrUnknownSession) {
			break // a new session: nothing to replay
		}
		if err != nil {
			conn.Close(websocket.StatusInternalError, "reading the log: "+err.Error())
			return
		}
		if write(ctx, conn, m) != nil {
			return
		}
		last = m.Seq
	}
	for {
		select {
		case f := <-sub.ch:
			if f.seq <= last {
				continue
			}
			if f.seq > last+1 { // another process appended what lies between (local.go)
				if last, err = s.catchUp(ctx, id, last, f.seq, func(m *protocol.EnhancedMessage) error { return write(ctx, conn, m) }); err != nil {
					return
				}
			}
			if conn.Write(ctx, websocket.MessageText, f.data) != nil {
				return
			}
			last = f.seq
		case <-sub.dropped:
			conn.Close(websocket.StatusTryAgainLater, fmt.Sprintf("too slow for the live stream: reconnect with after=%d", last))
			return
		case <-ctx.Done():
			if s.streams.Err() == nil {
				return // the client went away
			}
			for { // the server is shutting down: deliver what was published, then say so
				select {
				case f := <-sub.ch:
					if f.seq > last && conn.Write(context.Background(), websocket.MessageText, f.data) != nil {
						return
					}
				default:
					conn.Close(websocket.StatusGoingAway, "the server is shutting down")
					return
				}
			}
		}
	}
}

func write(ctx context.Context, conn *websocket.Conn, m *protocol.EnhancedMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, b)
}

// take handles one client message; the reply is nil when it was taken.
func (s *Server) take(ctx context.Context, ss *session, data []byte) *errorReply {
	cm, err := decodeClient(data, ss.id)
	if err != nil {
		r := &errorReply{Type: "error", Error: err.Error()}
		if cm != nil {
			r.ReplyTo = cm.msg.ID
		}
		return r
	}
	if cm.req != nil {
		_, err = ss.submit(ctx, cm.msg.OperationID, cm.req)
	} else {
		err = ss.interrupt(ctx, cm.msg.OperationID, cm.intr)
	}
	if err != nil {
		return &errorReply{Type: "error", Error: err.Error(), ReplyTo: cm.msg.ID}
	}
	return nil
}

// clientMessage is a decoded message from a client: a request or an interrupt.
type clientMessage struct {
	msg  protocol.EnhancedMessage
	req  *protocol.Request
	intr *protocol.Interrupt
}

// decodeClient decodes one client frame for session. Its error names the problem; the
// message is returned with it when the envelope could be read (for the reply's reply_to).
func decodeClient(data []byte, session string) (*clientMessage, error) {
	cm := &clientMessage{}
	if err := json.Unmarshal(data, &cm.msg); err != nil {
		return nil, fmt.Errorf("malformed message: %w", err)
	}
	m := &cm.msg
	if m.SessionID != "" && m.SessionID != session {
		return cm, fmt.Errorf("session_id %q: this connection is session %q", m.SessionID, session)
	}
	switch m.Type {
	case protocol.TypeRequest:
		req, err := decodeRequest(m.Payload)
		if err != nil {
			return cm, err
		}
		cm.req = req
	case protocol.TypeInterrupt:
		cm.intr = &protocol.Interrupt{}
		if len(m.Payload) > 0 && string(m.Payload) != "null" {
			if err := json.Unmarshal(m.Payload, cm.intr); err != nil {
				return cm, fmt.Errorf("operation_interrupt payload: %w", err)
			}
		}
		if m.OperationID == "" {
			return cm, errors.New("operation_interrupt: operation_id is missing")
		}
	case "":
		return cm, errors.New("message has no type")
	default:
		return cm, fmt.Errorf("type %q: a client may send operation_request or operation_interrupt", m.Type)
	}
	return cm, nil
}

func afterParam(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("after=%q: want a sequence number ≥ 0", v)
	}
	return n, nil
}
