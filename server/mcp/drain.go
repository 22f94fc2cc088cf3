package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTransport makes the end of a client's input mean "no more requests", not "gone": a
// client that writes its requests and closes its end (printf … | labmate mcp) reads the
// replies to every request it sent. The go-sdk ends a connection at the end of its input and
// cancels what is in flight, so its connection's Read holds the end back until each request
// read has its response written (or was cancelled by the client), the connection closes or
// ctx ends. A handler that waits on the client (sampling, elicitation: labmate asks for
// neither) would wait for ever.
type drainTransport struct{ sdk.Transport }

func (t drainTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{}), closed: make(chan struct{})}, nil
}

type drainConn struct {
	sdk.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // requests read and not yet answered
	changed chan struct{}       // closed (and replaced) when a request is answered

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if errors.Is(err, io.EOF) {
		c.drain(ctx)
		return nil, err
	}
	if r, ok := m.(*jsonrpc.Request); ok {
		switch {
		case r.ID.IsValid():
			c.mu.Lock()
			c.pending[r.ID] = true
			c.mu.Unlock()
		case r.Method == "notifications/cancelled": // the client expects no response
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(r.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.answered(id)
				}
			}
		}
	}
	return m, err
}

func (c *drainConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.answered(r.ID)
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *drainConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[id] {
		delete(c.pending, id)
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

// drain waits until every request read is answered, the connection closes or ctx ends.
func (c *drainConn) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		n, changed := len(c.pending), c.changed
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}
