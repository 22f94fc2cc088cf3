package engine

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// Streams a marker can arrive on (bit set).
const (
	onStdout = 1 << iota
	onStderr
	onSide
	allStreams = onStdout | onStderr | onSide
)

// item is what a stream reader hands to Exec: an observation or a marker.
type item struct {
	obs  *protocol.Observation
	mark *mark
	loop *protocol.Loop // the driver's latest look at the loop the cell runs
}

// mark is a driver's end-of-cell marker seen on one stream; status, line and msg come
// with the side-channel record.
type mark struct {
	stream int
	tag    string
	status string
	line   int
	msg    string
}

// proc is one running interpreter with its stream readers.
type proc struct {
	cmd   *exec.Cmd
	sb    kernel.Sandbox
	pid   int
	stdin *os.File
	items chan item
	// active is set while a cell (or boot) runs; idle output is dropped, markers never.
	active atomic.Bool
	// overruns is how many of the sandbox's budget overruns (Exceeded) cells have reported.
	overruns int

	exited   chan struct{}
	gone     chan struct{} // closed by kill: readers stop blocking on items
	killOnce sync.Once
}

func startProc(cmd *exec.Cmd, sb kernel.Sandbox, tags string) (*proc, error) {
	var parent, child []*os.File
	// The interpreter may open its ends again by name (/dev/fd/3, /dev/stderr): as root,
	// sandboxed code is an account of its own, and a pipe is root's, 0600. A pipe's mode
	// matters only there — only a process that may look into the holder's /proc/PID/fd
	// reaches it by name — so it is opened to everyone.
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			parent, child = append(parent, r, w), append(child, r, w)
			err = w.Chmod(0o666)
		}
		return
	}
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll(parent)
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll(parent)
		return nil, err
	}
	sideR, sideW, err := pipe()
	if err != nil {
		closeAll(parent)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.ExtraFiles = []*os.File{sideW} // fd 3 in the child
	if err := sb.Start(cmd); err != nil {
		closeAll(parent)
		return nil, err
	}
	inR.Close()
	outW.Close()
	errW.Close()
	sideW.Close()
	p := &proc{cmd: cmd, sb: sb, stdin: inW, items: make(chan item, 256), exited: make(chan struct{}), gone: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	if p.pid, err = sb.Target(cmd); err != nil {
		p.kill()
		outR.Close()
		errR.Close()
		sideR.Close()
		return nil, err
	}
	go p.readLines(outR, protocol.ObsStdout, onStdout, tags)
	go p.readLines(errR, protocol.ObsStderr, onStderr, tags)
	go p.readSide(sideR, tags)
	return p, nil
}

func (p *proc) send(it item) {
	select {
	case p.items <- it:
	case <-p.gone:
	}
}

// readLines turns one output stream into line observations. The driver
// prints "\n" before a marker so that the marker is alone on its line even after output
// without a trailing newline; the one empty line that produces is held back and dropped.
func (p *proc) readLines(f *os.File, kind protocol.ObservationKind, stream int, tags string) {
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var held *protocol.Observation
	emit := func(o *protocol.Observation) {
		if !p.active.Load() {
			return
		}
		p.send(item{obs: o}) // perception reads telemetry from the line (its profiles); the kernel only frames it
	}
	afterCR := false
	flush := func() { // the blank line held back, in case a tag followed it
		if held != nil {
			emit(held)
			held = nil
		}
	}
	for {
		b, err := readLine(r)
		now := time.Now()
		if cr := len(b) > 0 && b[len(b)-1] == '\r'; cr || afterCR && len(b) == 1 && b[0] == '\n' {
			// A carriage return ends a redraw of a progress bar (tqdm's `\r 45%|…`): each
			// redraw is a line as it is drawn, not when a newline finally ends the bar. The
			// newline of a "\r\n" split across two reads ends nothing more.
			afterCR = cr
			if line := strings.TrimSuffix(string(b), "\r"); cr && strings.TrimSpace(line) != "" {
				flush()
				emit(&protocol.Observation{Kind: kind, Time: now, Line: line})
			}
		} else {
			afterCR = false
			if len(b) > 0 {
				full := b[len(b)-1] == '\n'
				line := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
				switch {
				case full && strings.HasPrefix(line, tags):
					held = nil
					p.send(item{mark: &mark{stream: stream, tag: line}})
				case full && line == "":
					flush()
					held = &protocol.Observation{Kind: kind, Time: now}
				default:
					flush()
					emit(&protocol.Observation{Kind: kind, Time: now, Line: line})
				}
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			flush()
			return
		}
	}
}

// readLine reads up to and including the next '\n', or a '\r' that is not part of a
// "\r\n", like ReadSlice('\n') (bufio.ErrBufferFull for a line longer than the buffer). The
// bytes are valid until the next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	if _, err := r.Peek(1); err != nil {
		return nil, err
	}
	for {
		buf, _ := r.Peek(r.Buffered())
		for i, c := range buf {
			switch {
			case c == '\n':
				return r.ReadSlice('\n')
			case c == '\r' && i+1 < len(buf) && buf[i+1] == '\n':
				return r.ReadSlice('\n')
			case c == '\r':
				b, err := r.Peek(i + 1)
				r.Discard(i + 1)
				return b, err
			}
		}
		if len(buf) == r.Size() {
			return r.ReadSlice('\n') // full: ErrBufferFull, as before
		}
		if _, err := r.Peek(len(buf) + 1); err != nil { // wait for more
			if err == bufio.ErrBufferFull {
				continue
			}
			b, _ := r.Peek(r.Buffered())
			r.Discard(len(b))
			return b, err
		}
	}
}

// readSide reads the telemetry side channel: "S\tname\tt\tv1 v2 …" samples,
// "L\tline\texitline:distance …" looks at the running loop (protocol.Loop) and
// "E\ttag\tstatus\tline\tmessage" end records.
func (p *proc) readSide(f *os.File, tags string) {
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line = strings.TrimSuffix(line, "\n"); line != "" {
			now := time.Now()
			fields := strings.SplitN(line, "\t", 5)
			switch {
			case fields[0] == "E" && len(fields) == 5 && strings.HasPrefix(fields[1], tags):
				n, _ := strconv.Atoi(fields[3])
				p.send(item{mark: &mark{stream: onSide, tag: fields[1], status: fields[2], line: n, msg: unescape(fields[4])}})
			case fields[0] == "L" && len(fields) == 3 && p.active.Load():
				if l := parseSideLoop(fields[1], fields[2]); l != nil {
					p.send(item{loop: l})
				}
			case fields[0] == "S" && len(fields) == 4 && p.active.Load():
				if s, err := parseSideSample(fields[1], fields[2], fields[3]); err == nil {
					p.send(item{obs: &protocol.Observation{Kind: protocol.ObsTelemetry, Time: now, Sample: s}})
				} else if p.active.Load() {
					p.send(item{obs: &protocol.Observation{Kind: protocol.ObsStderr, Time: now, Line: "labmate: bad telemetry sample: " + err.Error()}})
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// parseSideLoop reads a loop record's line and exits; nil if it holds no finite distance.
func parseSideLoop(line, exits string) *protocol.Loop {
	n, err := strconv.Atoi(line)
	if err != nil {
		return nil
	}
	l := &protocol.Loop{Line: n}
	for _, f := range strings.Fields(exits) {
		at, d, ok := strings.Cut(f, ":")
		x, err1 := strconv.Atoi(at)
		v, err2 := strconv.ParseFloat(d, 64)
		if ok && err1 == nil && err2 == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			l.Exits = append(l.Exits, protocol.LoopExit{Line: x, Distance: v})
		}
	}
	if len(l.Exits) == 0 {
		return nil
	}
	return l
}

func parseSideSample(name, t, values string) (*protocol.Sample, error) {
	s := &protocol.Sample{Name: name, Source: protocol.FromHelper}
	if t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: time %q is not a number", name, t)
		}
		s.T = &v
	}
	for _, f := range strings.Fields(values) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %q is not a number", name, f)
		}
		s.Values = append(s.Values, v)
	}
	switch len(s.Values) {
	case 0:
		return nil, fmt.Errorf("%s: no value", name)
	case 1:
		s.Value, s.Values = s.Values[0], nil
	default:
		s.Value = s.Values[0]
	}
	return s, nil
}

// unescape undoes the drivers' escaping of "\\", "\n" and "\t" in side-channel text.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (p *proc) dead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill ends the process tree and waits (bounded) for it to be reaped.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		close(p.gone)
		p.stdin.Close()
		p.sb.Kill(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	})
}

func (p *proc) exitDetail() string {
	st := p.cmd.ProcessState
	if st == nil {
		return "still running"
	}
	return st.String()
}
