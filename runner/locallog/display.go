package locallog

import (
	"io"
	"sync"

	"github.com/labmate/labmate/protocol/sqlite"
)

// Display holds what a command prints of the messages it appends to its log until the log
// has committed them (the log commits in groups, within milliseconds): a line on the terminal
// is in the file, whatever happens to the process after — a kill -9 loses nothing it printed.
// Its writers keep the order of every write to any of them; one goroutine writes while
// there is something to write, so printing never holds up the run.
type Display struct {
	log *sqlite.Store // nil: a log with nothing to wait for (in memory): writes go through

	mu      sync.Mutex
	queue   []shown
	running bool
	err     error      // the first write that failed
	idle    *sync.Cond // broadcast when the queue is written
}

// shown is one write waiting for its commit.
type shown struct {
	w io.Writer
	p []byte
	c *sqlite.Commit
}

// NewDisplay returns the display of a command that appends to log: a *sqlite.Store is waited
// for, any other log (protocol.MemStore, when the file could not be opened) is not.
func NewDisplay(log any) *Display {
	d := &Display{}
	d.idle = sync.NewCond(&d.mu)
	if st, ok := log.(*sqlite.Store); ok {
		d.log = st
	}
	return d
}

// Writer returns w as the display writes to it: each write goes to w once every message
// appended to the log before it is committed. A write returns the error of an earlier one.
func (d *Display) Writer(w io.Writer) io.Writer {
	if d.log == nil {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		c := d.log.Committed()
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.err != nil {
			return 0, d.err
		}
		d.queue = append(d.queue, shown{w, append([]byte(nil), p...), c})
		if !d.running {
			d.running = true
			go d.write()
		}
		return len(p), nil
	})
}

// write writes the queue, each write once its commit is done, until the queue is empty. A
// commit that failed writes nothing more (what it held is not in the log): the error is
// kept, and said by the next Write and by Flush.
func (d *Display) write() {
	var batch []shown
	for {
		d.mu.Lock()
		clear(batch)
		batch, d.queue = d.queue, batch[:0]
		if len(batch) == 0 || d.err != nil {
			d.running = false
			d.queue = nil
			d.idle.Broadcast()
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		for _, s := range batch {
			<-s.c.Done()
			err := s.c.Err()
			if err == nil {
				_, err = s.w.Write(s.p)
			}
			if err != nil {
				d.mu.Lock()
				d.err = err
				d.mu.Unlock()
				break
			}
		}
	}
}

// Flush returns once everything written is written through (or the log failed: then with its
// error, or with the error of a failed write).
func (d *Display) Flush() error {
	if d.log == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.running {
		d.idle.Wait()
	}
	return d.err
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
