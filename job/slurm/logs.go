package slurm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/job"
)

// A job's log is collected into its directory's log.jsonl: one entry per line read from
// stdout, stderr or a followed file, numbered as it is appended, with the byte offset its
// stream has been read to. Whoever reads the log next (another Logs call, a new Scheduler
// value, another process) first appends what the streams gained since, under an flock, so
// that a line keeps its Seq for every reader.

// entry is one line of log.jsonl.
type entry struct {
	job.Line
	Off int64 `json:"off"` // its stream's file has been read up to the end of this line
}

// maxRead bounds what one collection reads of one stream before the next poll (the final one
// reads to the end).
const maxRead = 4 << 20

type logCache struct {
	mu   sync.Mutex
	jobs map[job.ID]*logState
}

func newLogCache() *logCache { return &logCache{jobs: map[job.ID]*logState{}} }

// logState is what a Scheduler knows of a log.jsonl, up to size bytes of it.
type logState struct {
	mu   sync.Mutex
	size int64
	seq  int64
	offs map[string]int64
	last string
}

func (c *logCache) get(id job.ID) *logState {
	c.mu.Lock()
	defer c.mu.Unlock()
	ls := c.jobs[id]
	if ls == nil {
		ls = &logState{offs: map[string]int64{}}
		c.jobs[id] = ls
	}
	return ls
}

type stream struct{ name, path string }

func streams(rec *record) []stream {
	ss := []stream{{"stdout", rec.Stdout}, {"stderr", rec.Stderr}}
	for _, f := range rec.Spec.Follow {
		ss = append(ss, stream{f, filepath.Join(rec.Spec.Workspace, f)})
	}
	return ss
}

// collect appends to log.jsonl the lines the job's streams gained; final (the job has ended)
// also takes a last line without a newline and reads every stream to its end.
func (s *Scheduler) collect(rec *record, final bool) (*logState, error) {
	ls := s.logs.get(rec.ID)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	dir := s.jobDir(rec.ID)
	lock, err := os.OpenFile(filepath.Join(dir, "log.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	f, err := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := ls.catchUp(f); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	now := time.Now()
	for _, st := range streams(rec) {
		for {
			lines, off, eof, err := readLines(st.path, ls.offs[st.name], final)
			if err != nil {
				return nil, err
			}
			for _, l := range lines {
				ls.seq++
				e := entry{Line: job.Line{Seq: ls.seq, Stream: st.name, Text: l.text, Time: now}, Off: l.end}
				b, _ := json.Marshal(&e)
				buf.Write(b)
				buf.WriteByte('\n')
				ls.last = l.text
			}
			ls.offs[st.name] = off
			if !final || eof {
				break
			}
		}
	}
	if buf.Len() == 0 {
		return ls, nil
	}
	if _, err := f.WriteAt(buf.Bytes(), ls.size); err != nil {
		return nil, err
	}
	ls.size += int64(buf.Len())
	return ls, nil
}

// catchUp reads what other writers appended to log.jsonl since ls.size, and cuts off a torn
// last entry (a writer that died mid-write).
func (ls *logState) catchUp(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == ls.size {
		return nil
	}
	if fi.Size() < ls.size { // replaced: start over
		ls.size, ls.seq, ls.offs, ls.last = 0, 0, map[string]int64{}, ""
	}
	r := bufio.NewReader(io.NewSectionReader(f, ls.size, fi.Size()-ls.size))
	for {
		b, err := r.ReadBytes('\n')
		if err == io.EOF {
			if len(b) > 0 {
				return f.Truncate(ls.size)
			}
			return nil
		}
		if err != nil {
			return err
		}
		var e entry
		if json.Unmarshal(b, &e) != nil {
			return f.Truncate(ls.size)
		}
		ls.seq = e.Seq
		ls.offs[e.Stream] = e.Off
		ls.last = e.Text
		ls.size += int64(len(b))
	}
}

// readLines reads the complete lines of path from off (and, with final, a last one without a
// newline); a missing file has none yet.
type rawLine struct {
	text string
	end  int64 // offset just past it in its file
}

func readLines(path string, off int64, final bool) (lines []rawLine, next int64, eof bool, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, off, true, nil
	}
	if err != nil {
		return nil, off, true, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, off, true, err
	}
	if fi.Size() < off { // truncated and rewritten: read it again
		off = 0
	}
	n := min(fi.Size()-off, maxRead)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return nil, off, true, err
	}
	eof = off+n == fi.Size()
	end := bytes.LastIndexByte(b, '\n') + 1
	if final && eof {
		end = len(b)
	} else if end == 0 && n == maxRead { // one line longer than maxRead: split it
		end = len(b)
	}
	at := off
	for _, l := range strings.SplitAfter(string(b[:end]), "\n") {
		if l == "" {
			continue
		}
		at += int64(len(l))
		l = strings.TrimSuffix(l, "\n")
		lines = append(lines, rawLine{strings.TrimSuffix(l, "\r"), at})
	}
	return lines, off + int64(end), eof && end == len(b), nil
}

// lastLine is the last line the job's log holds, after collecting all of it.
func (s *Scheduler) lastLine(rec *record) string {
	ls, err := s.collect(rec, true)
	if err != nil {
		return ""
	}
	return ls.last
}

// Logs yields the job's lines with Seq > after; with follow, until the job has ended and its
// streams are read to the end.
func (s *Scheduler) Logs(ctx context.Context, id job.ID, after int64, follow bool) iter.Seq2[*job.Line, error] {
	return func(yield func(*job.Line, error) bool) {
		rec, err := s.load(id)
		if err != nil {
			yield(nil, err)
			return
		}
		status := s.status
		if follow {
			status = s.patientStatus
		}
		var pos int64 // read so far of log.jsonl
		for {
			// The state first: when it is terminal, every line the job wrote is in its files.
			st, err := status(ctx, rec)
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(nil, err)
				return
			}
			done := st.State.Terminal()
			if _, err := s.collect(rec, done); err != nil {
				yield(nil, err)
				return
			}
			if pos, err = s.replay(rec, pos, after, yield); err != nil {
				if err != errStop {
					yield(nil, err)
				}
				return
			}
			if !follow || done {
				return
			}
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-time.After(s.poll):
			}
		}
	}
}

var errStop = io.ErrClosedPipe // the consumer stopped

// replay yields log.jsonl's entries from byte pos with Seq > after and returns where it
// stopped.
func (s *Scheduler) replay(rec *record, pos, after int64, yield func(*job.Line, error) bool) (int64, error) {
	f, err := os.Open(filepath.Join(s.jobDir(rec.ID), "log.jsonl"))
	if os.IsNotExist(err) {
		return pos, nil
	}
	if err != nil {
		return pos, err
	}
	defer f.Close()
	r := bufio.NewReader(io.NewSectionReader(f, pos, 1<<62))
	for {
		b, err := r.ReadBytes('\n')
		if err == io.EOF {
			return pos, nil // a partial entry is being written: read it next time
		}
		if err != nil {
			return pos, err
		}
		pos += int64(len(b))
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return pos, err
		}
		if e.Seq <= after {
			continue
		}
		line := e.Line
		if !yield(&line, nil) {
			return pos, errStop
		}
	}
}
