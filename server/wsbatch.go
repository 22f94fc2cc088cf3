package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// The WebSocket library writes every frame with a write of its own (it flushes its buffer at
// the end of each message): one system call per message, the largest cost of a busy stream.
// A batchConn sits under it and lets the handler hold its writes while more messages are
// ready, then send them in one write: the frames are byte for byte what they would have
// been, only fewer system calls carry them.

// batchBytes is how much a held connection gathers before it is sent anyway.
const batchBytes = 64 << 10

// batchConn is a connection whose writes can be held (hold) and then sent together (release).
type batchConn struct {
	net.Conn
	mu   sync.Mutex
	held bool
	buf  *[]byte // the held writes; nil while none are
}

// batchBufs keeps the buffers of held writes between batches.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// Write writes p, or keeps it for release while the connection is held. Writes keep their
// order whichever goroutine makes them (a pong from the reader, a message from the handler).
func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return c.Conn.Write(p)
	}
	if c.buf == nil {
		c.buf = batchBufs.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, p...)
	return len(p), nil
}

// hold keeps the writes from now on until release.
func (c *batchConn) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// buffered is how many bytes are held.
func (c *batchConn) buffered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		return 0
	}
	return len(*c.buf)
}

// release sends what was held, in one write, and writes through from then on. When ctx ends
// before the write does (a client that does not read), the connection is closed.
func (c *batchConn) release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if c.buf == nil {
		return nil
	}
	b := c.buf
	c.buf = nil
	defer func() {
		if cap(*b) <= 4*batchBytes {
			*b = (*b)[:0]
			batchBufs.Put(b)
		}
	}()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { c.Conn.Close() })
		defer stop()
	}
	if _, err := c.Conn.Write(*b); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("writing %d bytes of messages: %w", len(*b), err)
	}
	return nil
}

// batchWriter is the handler's ResponseWriter whose hijacked connection is a batchConn.
type batchWriter struct {
	http.ResponseWriter
	conn *batchConn // set by Hijack
}

// Hijack hijacks the underlying connection and returns it as a batchConn, with a buffered
// writer that writes to it.
func (w *batchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil { // nothing is buffered after a hijack; should it be, it goes first
		c.Close()
		return nil, nil, err
	}
	w.conn = &batchConn{Conn: c}
	brw.Writer.Reset(w.conn)
	return w.conn, brw, nil
}

// Unwrap returns the ResponseWriter w wraps, for http.ResponseController.
func (w *batchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
