package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/job"
)

// logRecord is one line of DIR/jobs/ID/log.
type logRecord struct {
	Seq    int64     `json:"seq"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
	Time   time.Time `json:"time"`
	Off    int64     `json:"off"` // where the line ends in its stream's file
}

// logState is what this process knows of a job's log index: how far it has read it, the next
// seq, and how far each stream has been read into it.
type logState struct {
	mu   sync.Mutex
	size int64
	seq  int64
	off  map[string]int64
	last string
}

// readChunk is the most read from one stream in one pass; a line longer than that is cut.
const readChunk = 1 << 20

func (s *Scheduler) logState(id job.ID) *logState {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := s.logs[id]
	if ls == nil {
		ls = &logState{off: map[string]int64{}}
		s.logs[id] = ls
	}
	return ls
}

// ingest appends to r's log index the lines its streams have gained; with final (the job has
// ended) also an unfinished last line.
func (s *Scheduler) ingest(r *record, final bool) error {
	sp, err := s.spec(r.ID)
	if err != nil {
		return err
	}
	ls := s.logState(r.ID)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	dir := s.jobDir(r.ID)
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("job/local: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if err := ls.catchUp(f, true); err != nil {
		return fmt.Errorf("job/local: %s: log: %w", r.ID, err)
	}

	var out bytes.Buffer
	now := time.Now().UTC()
	add := func(stream string, text []byte, off int64) {
		ls.seq++
		t := strings.TrimSuffix(string(text), "\r")
		b, _ := json.Marshal(&logRecord{Seq: ls.seq, Stream: stream, Text: t, Time: now, Off: off})
		out.Write(b)
		out.WriteByte('\n')
		ls.off[stream] = off
		ls.last = t
	}
	streams := append([]string{"stdout", "stderr"}, sp.Follow...)
	for i, stream := range streams {
		var sf *os.File
		if i < 2 {
			sf, err = os.Open(filepath.Join(dir, stream))
		} else {
			sf, err = os.OpenInRoot(sp.Workspace, stream) // a symlink cannot lead out of the workspace
		}
		if err != nil {
			continue // not written yet
		}
		off := ls.off[stream]
		if fi, err := sf.Stat(); err != nil || !fi.Mode().IsRegular() {
			sf.Close()
			continue
		} else if fi.Size() < off {
			off = 0 // truncated or replaced: read it again
		}
		buf := make([]byte, readChunk)
		for {
			n, _ := sf.ReadAt(buf, off)
			data := buf[:n]
			for {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					break
				}
				off += int64(i + 1)
				add(stream, data[:i], off)
				data = data[i+1:]
			}
			if len(data) == readChunk || (final && n < readChunk && len(data) > 0) {
				off += int64(len(data)) // a line too long to keep whole, or the last one
				add(stream, data, off)
			}
			if n < readChunk {
				break
			}
		}
		sf.Close()
	}
	if out.Len() == 0 {
		return nil
	}
	n, err := f.Write(out.Bytes())
	ls.size += int64(n)
	if err != nil {
		return fmt.Errorf("job/local: %s: log: %w", r.ID, err)
	}
	return nil
}

// catchUp reads the records others appended to the index since ls last looked; the caller
// holds the index's flock when repair is set. A torn last record (a crash in mid-write) is
// then cut off; otherwise it is left to the next ingest.
func (ls *logState) catchUp(f *os.File, repair bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == ls.size {
		return nil
	}
	if fi.Size() < ls.size {
		*ls = logState{off: map[string]int64{}}
	}
	b := make([]byte, fi.Size()-ls.size)
	if _, err := f.ReadAt(b, ls.size); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var r logRecord
		if i < 0 || json.Unmarshal(b[:i], &r) != nil {
			if repair {
				return f.Truncate(ls.size)
			}
			return nil
		}
		ls.size += int64(i + 1)
		ls.seq = r.Seq
		ls.off[r.Stream] = r.Off
		ls.last = r.Text
		b = b[i+1:]
	}
	return nil
}

// lastLine is the text of the last line in id's log index.
func (s *Scheduler) lastLine(id job.ID) string {
	ls := s.logState(id)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.size == 0 {
		if f, err := os.Open(filepath.Join(s.jobDir(id), "log")); err == nil {
			_ = ls.catchUp(f, false)
			f.Close()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
	}
	return ls.last
}
