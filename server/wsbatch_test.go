package server

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// countingConn counts the writes that reach the connection.
type countingConn struct {
	net.Conn
	writes int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.Conn.Write(p)
}

// A held batchConn sends what was written meanwhile in one write, in order, at release; writes
// go straight through otherwise; a release whose context ends while the peer does not read
// closes the connection instead of waiting for ever.
func TestBatchConn(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	cc := &countingConn{Conn: a}
	c := &batchConn{Conn: cc}
	got := make(chan string, 8)
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := b.Read(buf)
			if err != nil {
				close(got)
				return
			}
			got <- string(buf[:n])
		}
	}()
	c.Write([]byte("one"))
	if s := <-got; s != "one" || cc.writes != 1 {
		t.Fatalf("unheld: read %q after %d writes", s, cc.writes)
	}
	c.hold()
	for _, s := range []string{"a", "bb", "ccc"} {
		c.Write([]byte(s))
	}
	if cc.writes != 1 || c.buffered() != 6 {
		t.Fatalf("held: %d writes, %d bytes held; want 1, 6", cc.writes, c.buffered())
	}
	if err := c.release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "abbccc" || cc.writes != 2 {
		t.Fatalf("released: read %q after %d writes, want \"abbccc\" in one", s, cc.writes)
	}

	// A peer that does not read: the release ends with its context.
	stalled, peer := net.Pipe()
	defer peer.Close()
	s := &batchConn{Conn: stalled}
	s.hold()
	s.Write([]byte("never read"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.release(ctx); err == nil {
		t.Fatal("a release to a peer that does not read: no error")
	}
	if _, err := peer.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the release failed, the peer reads %v, want EOF (closed)", err)
	}
}
