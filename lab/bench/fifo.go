package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// FrameHeader is the length of the header before each reply ServeFIFO sends: the reply's
// length in bytes in decimal, right-aligned in FrameHeader-1 spaces, and a newline.
const FrameHeader = 12

// Heartbeat is how often ServeFIFO sends an empty frame while a command is being carried out.
const Heartbeat = 100 * time.Millisecond

// FIFOWriteTimeout is how long ServeFIFO waits for a reply to fit into the reply pipe before it
// takes the pipe's unread replies (a client that went away mid-command left them) out itself.
const FIFOWriteTimeout = 5 * time.Second

// ServeFIFO answers commands sent through a pair of named pipes that it makes at in and out
// (mode 0600, labmate's own: ServeFIFOOwned gives them to the sandbox's user): for a kernel
// with no sockets, Octave. Each request line is "ID COMMAND", ID a
// token of the client's without spaces and COMMAND a Command in JSON as Serve reads it; each
// reply is a header of FrameHeader bytes with the length of the line "ID REPLY" that follows,
// REPLY the Reply that Serve would send; while a command takes long (a physical backend
// waiting for approval), an empty frame (length 0) comes every Heartbeat. (Octave's fgetl reads one byte past a line's end,
// which on a pipe waits for the next reply; a reader of lengths never reads ahead.) A client
// matches replies by ID and skips the others: a reply an interrupted or dead client never read
// stays in the pipe.
// ServeFIFO holds both pipes open for reading and writing, so a client opens them without
// waiting and a client that closes them ends nothing. The pipes are one channel: one client at
// a time (a second one concurrently would read the first one's replies).
// ServeFIFO removes the pipes and returns nil when ctx ends.
func ServeFIFO(ctx context.Context, in, out string, b Backend) error {
	return ServeFIFOOwned(ctx, in, out, b, -1, -1)
}

// ServeFIFOOwned is ServeFIFO with the pipes given to uid and gid (the host user sandboxed
// code runs as), still mode 0600; uid -1 leaves them labmate's. Each pipe is opened without
// following a symbolic link and must be the FIFO just made.
func ServeFIFOOwned(ctx context.Context, in, out string, b Backend, uid, gid int) error {
	open := func(path string) (*os.File, error) {
		os.Remove(path) // one a crashed run left
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			return nil, fmt.Errorf("bench: serve fifo: %w", &os.PathError{Op: "mkfifo", Path: path, Err: err})
		}
		if uid != -1 {
			if err := os.Lchown(path, uid, gid); err != nil {
				return nil, fmt.Errorf("bench: serve fifo: %w", err)
			}
		}
		f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("bench: serve fifo: %w", err)
		}
		if fi, err := f.Stat(); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
			f.Close()
			return nil, fmt.Errorf("bench: serve fifo: %s is not the pipe just made", path)
		}
		return f, nil
	}
	fin, err := open(in)
	if err != nil {
		return err
	}
	defer os.Remove(in)
	defer fin.Close()
	fout, err := open(out)
	if err != nil {
		return err
	}
	defer os.Remove(out)
	defer fout.Close()
	stop := context.AfterFunc(ctx, func() { fin.Close(); fout.Close() })
	defer stop()
	serveLines(ctx, fin, &fifoWriter{fout}, b, true)
	return nil
}

// fifoWriter writes to a reply pipe that ServeFIFO holds open both ways: when a write cannot go
// on for FIFOWriteTimeout (the pipe is full of replies nobody reads), it empties the pipe and
// writes the rest.
type fifoWriter struct{ f *os.File }

func (w *fifoWriter) Write(p []byte) (int, error) {
	n := 0
	for drained := false; ; drained = true {
		w.f.SetWriteDeadline(time.Now().Add(FIFOWriteTimeout))
		m, err := w.f.Write(p[n:])
		n += m
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || drained {
			return n, err
		}
		buf := make([]byte, 64<<10)
		for {
			w.f.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := w.f.Read(buf); err != nil {
				break
			}
		}
	}
}

// answerBeating answers a command line, and while that takes longer than Heartbeat sends w
// an empty frame each Heartbeat: a client blocked reading the pipe (Octave, which an
// interrupt cannot wake from a read) gets back to its interpreter, which then sees the
// interrupt.
func answerBeating(ctx context.Context, b Backend, line []byte, w *bufio.Writer) *Reply {
	done := make(chan *Reply, 1)
	go func() { done <- answer(ctx, b, line) }()
	t := time.NewTicker(Heartbeat)
	defer t.Stop()
	for {
		select {
		case rep := <-done:
			return rep
		case <-t.C:
			fmt.Fprintf(w, "%*d\n", FrameHeader-1, 0)
			w.Flush()
		}
	}
}

// serveLines answers the command lines r sends on w, one reply line each. With framed, each
// command line starts with a client's ID that its reply repeats, and each reply comes after a
// header of FrameHeader bytes that says its length. A line over MaxLine ends it.
func serveLines(ctx context.Context, rd io.Reader, wr io.Writer, b Backend, framed bool) {
	r := bufio.NewReaderSize(rd, 64<<10)
	w := bufio.NewWriter(wr)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			writeReply(w, &Reply{Error: &ReplyError{Message: fmt.Sprintf("bench: a command line longer than %d bytes", MaxLine)}})
			w.Flush()
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil { // io.EOF or a closed connection: a partial last line is dropped
			return
		}
		if cmd := bytes.TrimSpace(line); len(cmd) > 0 {
			if !framed {
				writeReply(w, answer(ctx, b, cmd))
			} else {
				id, rest, _ := bytes.Cut(cmd, []byte(" "))
				var rep bytes.Buffer
				rep.Write(id)
				rep.WriteByte(' ')
				writeReply(&rep, answerBeating(ctx, b, rest, w))
				fmt.Fprintf(w, "%*d\n", FrameHeader-1, rep.Len())
				w.Write(rep.Bytes())
			}
			// Flush only when nothing more is waiting, so pipelined commands share a write.
			if r.Buffered() == 0 && w.Flush() != nil {
				return
			}
		}
		line = line[:0]
	}
}
