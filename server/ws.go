package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

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
	ss, err := s.Open(id)
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	defer s.Release(ss)
	// Same-origin only (the guard checked already; Accept checks again). The dashboard asks
	// for the labmate subprotocol, offering its token as another.
	bw := &batchWriter{ResponseWriter: w}
	conn, err := websocket.Accept(bw, r, &websocket.AcceptOptions{Subprotocols: []string{wsProtocol}})
	if err != nil {
		return
	}
	bc := bw.conn
	defer conn.CloseNow()
	conn.SetReadLimit(s.cfg.MaxMessageBytes)
	ctx, cancel := context.WithCancel(s.Streams())
	defer cancel()
	if err := s.CheckAfter(ctx, id, after); err != nil {
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

	// The log after SEQ, then the live stream (runner.Subscribe: its drop policy says when a
	// connection is cut off, and where it resumes). While more messages are ready behind one
	// (Frame.More), their frames are held and sent together, in one write (batchConn).
	wctx := ctx
	for f, err := range s.Subscribe(ctx, id, after) {
		if ctx.Err() != nil && s.Streams().Err() != nil {
			wctx = context.Background() // shutting down: deliver what was published
		}
		if err != nil {
			if bc.release(wctx) != nil {
				return
			}
		}
		var slow *runner.TooSlowError
		switch {
		case errors.As(err, &slow):
			conn.Close(websocket.StatusTryAgainLater, fmt.Sprintf("too slow for the live stream: reconnect with after=%d", slow.Last))
			return
		case errors.Is(err, runner.ErrShutdown):
			conn.Close(websocket.StatusGoingAway, "the server is shutting down")
			return
		case err != nil:
			conn.Close(websocket.StatusInternalError, err.Error())
			return
		}
		fctx := wctx
		if f.More {
			bc.hold()
			fctx = context.Background() // the frame is held, not written: release waits on the network, with wctx
		}
		if conn.Write(fctx, websocket.MessageText, f.Data) != nil {
			return
		}
		if !f.More || bc.buffered() >= batchBytes {
			if bc.release(wctx) != nil {
				return
			}
		}
	}
	bc.release(wctx)
}

// take handles one client message; the reply is nil when it was taken.
func (s *Server) take(ctx context.Context, ss *runner.Session, data []byte) *errorReply {
	cm, err := decodeClient(data, ss.ID())
	if err != nil {
		r := &errorReply{Type: "error", Error: err.Error()}
		if cm != nil {
			r.ReplyTo = cm.msg.ID
		}
		return r
	}
	if cm.req != nil {
		_, err = ss.Submit(ctx, cm.msg.OperationID, cm.req)
	} else {
		err = ss.Interrupt(ctx, cm.msg.OperationID, cm.intr)
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
		if len(m.Payload) == 0 {
			return cm, errors.New("operation_request payload: missing")
		}
		cm.req = &protocol.Request{}
		if err := json.Unmarshal(m.Payload, cm.req); err != nil {
			return cm, fmt.Errorf("operation_request payload: %w", err)
		}
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
