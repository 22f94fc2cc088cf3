// Package joblog keeps a job's log: the lines its streams (stdout, stderr, the files it follows
// in its workspace) gained, numbered once and for all in a file of the job's directory, so that
// after=SEQ means the same lines to every reader, in every process and after any reopening.
//
// The log file holds one JSON record a line: {"seq", "stream", "text", "time", "off"}, off being
// where the line ends in its stream's file. Whoever wants the log up to date (a scheduler's poll,
// a Logs call, another process) calls Collect, which under an flock first reads what others
// appended, cuts off a torn last record (a writer that died mid-write), then appends the lines
// the streams gained since the offsets recorded. The file is not synced: a crash loses at most
// the last records, and the next Collect reads their lines again from the streams.
//
// The streams are the job's, and the job may be hostile: a record costs some 80 bytes more
// than its line, so a job printing empty lines would make the log a hundred times its output,
// and one that truncates and rewrites a followed file has it read again from its start, for
// ever. So the log is bounded (Options.MaxBytes, DefaultMaxBytes): the record that would take
// it past its bound is replaced by one last line, marked cut, that says so and where the rest
// of the output is, and from then on no Collect reads a stream. A Collect holds at most
// flushEvery bytes of records in memory before it writes them.
package joblog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/job"
)

// Bounds on what one Collect reads.
const (
	// MaxLine is the longest line kept whole; a longer one is cut into pieces of MaxLine bytes.
	MaxLine = 1 << 20
	// MaxPass is the most a Collect that is not final reads of one stream; the rest is left to
	// the next one, so that a poll holding the lock stays short. A final Collect reads to the end.
	MaxPass = 4 << 20
	// DefaultMaxBytes is a log's bound when Options.MaxBytes is 0.
	DefaultMaxBytes = 256 << 20
	// flushEvery is how many bytes of records a Collect gathers before it writes them.
	flushEvery = 1 << 20
)

// A Stream is a file whose lines are part of a job's log.
type Stream struct {
	Name string // the Line's Stream: "stdout", "stderr", or a followed file's relative path
	// Path is the file. With Root set it is relative to Root and opened with os.OpenRoot, so
	// that a symlink cannot lead out of Root (a followed file in the job's workspace).
	Path string
	Root string
	// RootDev and RootIno, when RootIno is set, are the device and inode Root must be: a
	// Root replaced since (by a symbolic link or another directory) is not read.
	RootDev, RootIno uint64
}

// Streams are a job's stdout and stderr files and the files spec follows in its workspace.
func Streams(stdout, stderr string, spec *job.Spec) []Stream {
	ss := []Stream{{Name: "stdout", Path: stdout}, {Name: "stderr", Path: stderr}}
	if spec != nil {
		for _, f := range spec.Follow {
			ss = append(ss, Stream{Name: f, Path: f, Root: spec.Workspace})
		}
	}
	return ss
}

// Options name an Index's files in the job's directory; nil means defaults.
type Options struct {
	// Log is the log file's name; default "log.jsonl".
	Log string
	// Lock is the file flocked while the log is written; empty: the log file itself.
	Lock string
	// MaxBytes bounds the log file; 0: DefaultMaxBytes.
	MaxBytes int64
}

// record is one line of the log file.
type record struct {
	job.Line
	Off int64 `json:"off"`           // its stream's file has been read up to the end of this line
	Cut bool  `json:"cut,omitempty"` // the log's last record: it reached its bound here
}

// cutReserve is room kept below the bound for the cut record.
const cutReserve = 512

// An Index is a job's log as one process knows it. It is safe for concurrent use; several
// Index values (in one process or several) over the same directory agree on every Seq.
type Index struct {
	log, lock string
	streams   []Stream
	max       int64

	mu   sync.Mutex
	size int64 // read so far of the log file
	seq  int64
	offs map[string]int64
	last string
	cut  bool // the log has reached its bound: it takes no more lines
}

// New returns the Index of the job directory dir, whose lines come from streams. It touches no
// file until it is used.
func New(dir string, streams []Stream, opts *Options) *Index {
	if opts == nil {
		opts = &Options{}
	}
	x := &Index{log: filepath.Join(dir, opts.Log), streams: streams, offs: map[string]int64{}, max: opts.MaxBytes}
	if x.max <= 0 {
		x.max = DefaultMaxBytes
	}
	if opts.Log == "" {
		x.log = filepath.Join(dir, "log.jsonl")
	}
	x.lock = x.log
	if opts.Lock != "" {
		x.lock = filepath.Join(dir, opts.Lock)
	}
	return x
}

// Collect appends to the log the lines the streams gained since the last Collect (of any
// process). With final — the job has ended, its streams are complete — it also takes a last
// line without a newline and reads every stream to its end.
func (x *Index) Collect(final bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	f, err := os.OpenFile(x.log, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	defer f.Close()
	lock := f
	if x.lock != x.log {
		if lock, err = os.OpenFile(x.lock, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return fmt.Errorf("joblog: %w", err)
		}
		defer lock.Close()
	}
	if err := flock(lock, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("joblog: locking %s: %w", x.lock, err)
	}
	defer flock(lock, syscall.LOCK_UN)
	if err := x.catchUp(f, true); err != nil {
		return fmt.Errorf("joblog: %s: %w", x.log, err)
	}

	if x.cut {
		return nil
	}
	var out bytes.Buffer
	var werr error
	flush := func() {
		if out.Len() == 0 || werr != nil {
			return
		}
		if _, err := f.Write(out.Bytes()); err != nil {
			// What this process knows is now ahead of the file: read it again next time (and
			// cut off a torn record).
			x.size, x.seq, x.offs, x.last, x.cut = 0, 0, map[string]int64{}, "", false
			werr = fmt.Errorf("joblog: %s: %w", x.log, err)
			return
		}
		x.size += int64(out.Len())
		out.Reset()
	}
	now := time.Now().UTC()
	for _, st := range x.streams {
		x.read(st, final, func(text []byte, end int64) bool {
			if x.cut || werr != nil {
				return false
			}
			x.seq++
			t := strings.TrimSuffix(string(text), "\r")
			b, _ := json.Marshal(&record{Line: job.Line{Seq: x.seq, Stream: st.Name, Text: t, Time: now}, Off: end})
			if x.size+int64(out.Len()+len(b)+1) > x.max-cutReserve {
				t = fmt.Sprintf("labmate: this log was cut here, at %s, its bound; the job's output goes on in its files (stdout, stderr, the files it follows) beside this log", humanBytes(x.max))
				b, _ = json.Marshal(&record{Line: job.Line{Seq: x.seq, Stream: st.Name, Text: t, Time: now}, Off: end, Cut: true})
				x.cut = true
			}
			out.Write(b)
			out.WriteByte('\n')
			x.offs[st.Name] = end
			x.last = t
			if out.Len() >= flushEvery {
				flush()
			}
			return !x.cut
		})
	}
	flush()
	return werr
}

// humanBytes writes n bytes in MiB, or in bytes below one MiB.
func humanBytes(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// flock locks or unlocks f, again when a signal interrupts the wait.
func flock(f *os.File, how int) error {
	for {
		if err := syscall.Flock(int(f.Fd()), how); err != syscall.EINTR {
			return err
		}
	}
}

// read passes add the lines st gained since its recorded offset, each with the offset just
// past it, until add returns false. A stream not there yet, unreadable, or not a regular file
// has none.
func (x *Index) read(st Stream, final bool, add func(text []byte, end int64) bool) {
	f, err := open(st)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	size, off := fi.Size(), x.offs[st.Name]
	if size < off {
		off = 0 // truncated or replaced: read it again
	}
	if size == off {
		return
	}
	buf := make([]byte, min(MaxLine, size-off))
	for start := off; off < size && (final || off-start < MaxPass); {
		n, _ := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 {
			return // shrunk under us: the next Collect starts over
		}
		data := buf[:n]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			off += int64(i + 1)
			if !add(data[:i], off) {
				return
			}
			data = data[i+1:]
		}
		if len(data) == MaxLine || (final && off+int64(len(data)) == size && len(data) > 0) {
			off += int64(len(data)) // a line too long to keep whole, or the last one
			if !add(data, off) {
				return
			}
		} else if len(data) == n {
			return // an unfinished line: wait for its end
		}
	}
}

func open(st Stream) (*os.File, error) {
	// O_NONBLOCK: a FIFO does not hang the open; on a regular file it changes nothing.
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	if st.Root == "" {
		return os.OpenFile(st.Path, flags, 0)
	}
	r, err := os.OpenRoot(st.Root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if st.RootIno != 0 {
		fi, err := r.Stat(".")
		if err != nil {
			return nil, err
		}
		if sys, ok := fi.Sys().(*syscall.Stat_t); !ok || uint64(sys.Dev) != st.RootDev || sys.Ino != st.RootIno {
			return nil, fmt.Errorf("%s: not the directory the job was submitted with (replaced since)", st.Root)
		}
	}
	return r.OpenFile(st.Path, flags|syscall.O_NOCTTY, 0) // read checks it is a regular file
}

// catchUp reads the records others appended since x.size. A torn last record is cut off when
// repair is set (the caller holds the lock), otherwise left to the next Collect.
func (x *Index) catchUp(f *os.File, repair bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == x.size {
		return nil
	}
	if fi.Size() < x.size { // replaced: start over
		x.size, x.seq, x.offs, x.last, x.cut = 0, 0, map[string]int64{}, "", false
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, x.size, fi.Size()-x.size), 64<<10)
	for {
		b, err := r.ReadBytes('\n')
		var rec record
		if err == io.EOF && len(b) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF || json.Unmarshal(b, &rec) != nil {
			if repair {
				return f.Truncate(x.size)
			}
			return nil
		}
		x.size += int64(len(b))
		x.seq = rec.Seq
		x.offs[rec.Stream] = rec.Off
		x.last = rec.Text
		x.cut = x.cut || rec.Cut
	}
}

// Last is the text of the log's last line ("" when it has none), as collected so far.
func (x *Index) Last() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if f, err := os.Open(x.log); err == nil {
		_ = x.catchUp(f, false)
		f.Close()
	}
	return x.last
}

// Lines yields the lines collected so far with Seq > after.
func (x *Index) Lines(after int64) iter.Seq2[*job.Line, error] {
	return func(yield func(*job.Line, error) bool) {
		if _, _, err := x.replay(0, after, yield); err != nil && err != errStop {
			yield(nil, err)
		}
	}
}

var errStop = errors.New("joblog: the consumer stopped")

// replay yields the log's lines from byte pos with Seq > after and returns where it stopped and
// the last Seq it yielded (or after).
func (x *Index) replay(pos, after int64, yield func(*job.Line, error) bool) (int64, int64, error) {
	f, err := os.Open(x.log)
	if errors.Is(err, fs.ErrNotExist) {
		return pos, after, nil
	}
	if err != nil {
		return pos, after, fmt.Errorf("joblog: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.NewSectionReader(f, pos, 1<<62), 64<<10)
	for {
		b, err := r.ReadBytes('\n')
		if err == io.EOF {
			return pos, after, nil // a record being written, or a torn one: read it next time
		}
		if err != nil {
			return pos, after, fmt.Errorf("joblog: %s: %w", x.log, err)
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			return pos, after, fmt.Errorf("joblog: %s: at byte %d: %w", x.log, pos, err)
		}
		pos += int64(len(b))
		if rec.Seq <= after {
			continue
		}
		after = rec.Seq
		if !yield(&rec.Line, nil) {
			return pos, after, errStop
		}
	}
}

// A Look brings the log up to date for Tail (with Collect, or a scheduler's own settling of
// the job) and reports whether the job has ended, after which its log gains no line.
type Look func(ctx context.Context) (ended bool, err error)

// TailOptions tune Tail; nil means defaults.
type TailOptions struct {
	// Poll is the wait between two looks while following; default 1 s.
	Poll time.Duration
	// Changes, when set, is called before each look for a channel closed when a look is worth
	// taking before Poll has passed (the scheduler saw the job change).
	Changes func() <-chan struct{}
}

// Tail yields the log's lines with Seq > after: it looks (see Look), yields what the log holds
// beyond what it yielded, and with follow waits and looks again until the job has ended.
func (x *Index) Tail(ctx context.Context, after int64, follow bool, look Look, opts *TailOptions) iter.Seq2[*job.Line, error] {
	var o TailOptions
	if opts != nil {
		o = *opts
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	return func(yield func(*job.Line, error) bool) {
		t := time.NewTimer(o.Poll)
		defer t.Stop()
		pos, after := int64(0), after
		for {
			var changed <-chan struct{}
			if o.Changes != nil {
				changed = o.Changes()
			}
			// The look first: when the job has ended, every line it wrote is in the log.
			ended, err := look(ctx)
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(nil, err)
				return
			}
			if pos, after, err = x.replay(pos, after, yield); err != nil {
				if err != errStop {
					yield(nil, err)
				}
				return
			}
			if !follow || ended {
				return
			}
			t.Reset(o.Poll)
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-changed:
			case <-t.C:
			}
		}
	}
}

// Cache holds a Scheduler's Index of each job directory, so that a process reads each log once.
type Cache struct {
	opts Options
	mu   sync.Mutex
	m    map[string]*Index
}

// NewCache returns an empty Cache whose Index values use opts.
func NewCache(opts *Options) *Cache {
	c := &Cache{m: map[string]*Index{}}
	if opts != nil {
		c.opts = *opts
	}
	return c
}

// Get returns dir's Index, made with streams at its first Get (a job's streams do not change).
func (c *Cache) Get(dir string, streams []Stream) *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.m[dir]
	if x == nil {
		x = New(dir, streams, &c.opts)
		c.m[dir] = x
	}
	return x
}
