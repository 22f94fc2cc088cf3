package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"sync"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Subscriber is one live listener of a session's log. The fan-out never blocks on it: when
// it is more than its buffer behind it is dropped and told to resume from the log (messages
// here are only ever dropped together with the subscriber, never silently). Its frames wait
// in a queue that the listener takes whole (Take): one lock for a burst, not one channel
// operation per message, and no buffer allocated before it is needed.
type Subscriber struct {
	Ready   chan struct{} // gets a value when frames wait to be taken
	Dropped chan struct{} // closed when the subscriber is cut off
	once    sync.Once
	mu      sync.Mutex
	queue   []Frame // published, not taken: in seq order
	behind  int     // published, not yet Delivered: queued, or taken and not passed on
	buffer  int     // how far behind it may be
}

// Frame is one message as sent: encoded once, however many subscribers it goes to.
type Frame struct {
	Seq  int64
	Data []byte
	// More says, in a Subscribe stream, that the next message is ready behind this one: a
	// listener may hold this one to send them together. The last of a burst has More false.
	More bool
}

// offer hands f to the subscriber; false when it was too slow and has been cut off.
func (sub *Subscriber) offer(f Frame) bool {
	sub.mu.Lock()
	if sub.behind >= sub.buffer {
		sub.mu.Unlock()
		sub.once.Do(func() { close(sub.Dropped) })
		return false
	}
	sub.behind++
	sub.queue = append(sub.queue, f)
	wake := len(sub.queue) == 1
	sub.mu.Unlock()
	if wake {
		select {
		case sub.Ready <- struct{}{}:
		default: // woken already
		}
	}
	return true
}

// Take returns the frames that wait, in seq order (none, possibly, after Ready), and keeps
// spare's array for the next ones: a listener hands back the batch it has passed on, cleared.
func (sub *Subscriber) Take(spare []Frame) []Frame {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	q := sub.queue
	sub.queue = spare[:0]
	return q
}

// Delivered says that n frames taken were passed on: they no longer count against the buffer.
func (sub *Subscriber) Delivered(n int) {
	sub.mu.Lock()
	sub.behind -= n
	sub.mu.Unlock()
}

// Subscribe adds a live listener of the session's log that may be buffer messages behind; the
// caller removes it with Unsubscribe.
func (ss *Session) Subscribe(buffer int) *Subscriber {
	sub := &Subscriber{Ready: make(chan struct{}, 1), Dropped: make(chan struct{}), buffer: buffer}
	ss.subMu.Lock()
	ss.subs[sub] = struct{}{}
	ss.subMu.Unlock()
	return sub
}

// Unsubscribe removes sub.
func (ss *Session) Unsubscribe(sub *Subscriber) {
	ss.subMu.Lock()
	delete(ss.subs, sub)
	ss.subMu.Unlock()
}

// ErrShutdown ends a Subscribe stream when the runner closes, after every message published
// to it was delivered.
var ErrShutdown = errors.New("runner: shut down")

// TooSlowError ends a Subscribe stream whose listener fell more than Limits.SubscriberBuffer
// messages behind the live stream; Last is the last seq it was given: it resumes from the
// log with after=Last.
type TooSlowError struct{ Last int64 }

func (e *TooSlowError) Error() string {
	return fmt.Sprintf("too slow for the live stream: resume with after=%d", e.Last)
}

// Subscribe yields the log of session after seq after, then its live stream, each message once,
// in seq order, as its encoded Frame (encoded once for every listener). The drop policy: the
// fan-out never waits for a listener; one more than Limits.SubscriberBuffer messages behind
// is cut off, and its stream ends with a *TooSlowError that names where to resume — no
// message is ever skipped silently. When the runner closes, the stream delivers what was
// published and ends with ErrShutdown. It ends without error when ctx does. A message is
// published once the log has committed it (show), so nothing a listener was given is lost
// to a crash of the process (kill -9): what it saw is what a restarted server replays. A
// frame's More says whether the next is ready behind it, so that a listener can send a burst
// of messages together (and knows when a burst ends).
func (s *Runner) Subscribe(ctx context.Context, session string, after int64) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		ss, err := s.Open(session)
		if err != nil {
			yield(Frame{}, err)
			return
		}
		defer s.Release(ss)
		sub := ss.Subscribe(s.cfg.Limits.SubscriberBuffer)
		defer ss.Unsubscribe(sub)
		// Replay the log after seq after, then go live, skipping what the replay already gave.
		// A frame is yielded once the one after it is known (next, when ahead), so that its
		// More is.
		last := after // the seq of the last frame yielded
		var next Frame
		ahead := false
		for m, err := range s.store.After(ctx, session, after) {
			if errors.Is(err, protocol.ErrUnknownSession) {
				break // a new session: nothing to replay
			}
			var f Frame
			if err != nil {
				err = fmt.Errorf("reading the log: %w", err)
			} else {
				f, err = frameOf(m)
			}
			if ahead {
				next.More = err == nil
				if !yield(next, nil) {
					return
				}
				last, ahead = next.Seq, false
			}
			if err != nil {
				yield(Frame{}, err)
				return
			}
			next, ahead = f, true
		}
		// The live frames taken: batch[i:] are not yielded yet.
		var batch []Frame
		i := 0
		// ready says whether a frame after seq is in hand (batch[i]), taking those that wait
		// without waiting for more.
		ready := func(seq int64) bool {
			for {
				for i < len(batch) && batch[i].Seq <= seq {
					i++ // given already
				}
				if i < len(batch) {
					return true
				}
				sub.Delivered(len(batch))
				clear(batch) // the frames' data goes with them
				batch, i = sub.Take(batch), 0
				if len(batch) == 0 {
					return false
				}
			}
		}
		// drain delivers what was published before the runner shut down, then says so.
		drain := func() {
			s.shownAll(context.WithoutCancel(ctx))
			for ready(last) {
				f := batch[i]
				i++
				f.More = false
				if !yield(f, nil) {
					return
				}
				last = f.Seq
			}
			yield(Frame{}, ErrShutdown)
		}
		for {
			var f Frame
			switch {
			case ahead:
				f, ahead = next, false
			case ready(last):
				f = batch[i]
				i++
			default:
				select {
				case <-sub.Ready:
					continue
				case <-sub.Dropped:
					yield(Frame{}, &TooSlowError{Last: last})
					return
				case <-ctx.Done():
					if s.streams.Err() == nil {
						return // the listener went away
					}
					drain()
					return
				case <-s.streams.Done():
					drain()
					return
				}
			}
			if ctx.Err() != nil && s.streams.Err() == nil {
				return // the listener went away
			}
			if f.Seq <= last {
				continue
			}
			// Is the next frame this listener gets in hand already?
			f.More = ready(f.Seq)
			if f.Seq > last+1 { // another process appended what lies between (local.go)
				var ok bool
				if last, ok = s.catchUp(ctx, session, last, f.Seq, yield); !ok {
					return
				}
			}
			if !yield(f, nil) {
				return
			}
			last = f.Seq
		}
	}
}

// catchUp yields session's log after last up to seq before (exclusive): a live frame came with
// a seq beyond the next, another process appended what lies between. It returns the last seq
// yielded, and false when the stream must end (the listener stopped, or the log failed: said).
func (s *Runner) catchUp(ctx context.Context, session string, last, before int64, yield func(Frame, error) bool) (int64, bool) {
	for m, err := range s.store.After(ctx, session, last) {
		if err != nil {
			yield(Frame{}, fmt.Errorf("reading the log: %w", err))
			return last, false
		}
		if m.Seq >= before {
			break
		}
		f, err := frameOf(m)
		if err != nil {
			yield(Frame{}, err)
			return last, false
		}
		f.More = true // the live frame that revealed the gap follows
		if !yield(f, nil) {
			return last, false
		}
		last = m.Seq
	}
	return last, true
}

// frameOf encodes m as a Frame: the JSON json.Marshal gives, written without reflection (every
// message a subscriber gets is encoded here once).
func frameOf(m *protocol.EnhancedMessage) (Frame, error) {
	data, ok := appendMessage(make([]byte, 0, 128+len(m.Payload)), m)
	if !ok { // a string, number or payload the short way does not take: said by json
		var err error
		if data, err = json.Marshal(m); err != nil {
			return Frame{}, fmt.Errorf("encoding message %d: %w", m.Seq, err)
		}
	}
	return Frame{Seq: m.Seq, Data: data}, nil
}

// appendMessage appends m as json.Marshal encodes it, or says it cannot: a string that needs
// escaping, a timestamp json writes with an exponent, a payload that is not valid JSON.
func appendMessage(b []byte, m *protocol.EnhancedMessage) ([]byte, bool) {
	ok := true
	str := func(key, v string) {
		b = append(b, key...)
		b = append(b, '"')
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				ok = false
				return
			}
		}
		b = append(b, v...)
		b = append(b, '"')
	}
	str(`{"id":`, m.ID)
	str(`,"type":`, string(m.Type))
	b = append(b, `,"payload":`...)
	switch {
	case len(m.Payload) == 0:
		b = append(b, "null"...)
	case json.Valid(m.Payload):
		b = append(b, m.Payload...)
	default:
		return nil, false
	}
	b = append(b, `,"timestamp":`...)
	if t := math.Abs(m.Timestamp); t != 0 && (t < 1e-6 || t >= 1e21) || math.IsNaN(t) || math.IsInf(t, 0) {
		return nil, false
	}
	b = strconv.AppendFloat(b, m.Timestamp, 'f', -1, 64)
	str(`,"session_id":`, m.SessionID)
	str(`,"operation_id":`, m.OperationID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, m.Seq, 10)
	b = append(b, '}')
	return b, ok
}

// committer is a Store whose Append returns before the message is committed (protocol/sqlite,
// which commits in groups): Committed says when what it has appended so far is in the file.
type committer interface {
	Committed() *sqlite.Commit
}

// syncer is a Store that commits what it has appended on demand.
type syncer interface {
	Sync(ctx context.Context) error
}

// shown holds the frames this runner appended, in append order, until the log has committed
// them: nothing is shown to a subscriber that a crash (kill -9) could take back from the log.
// One goroutine shows them while there are some.
type shown struct {
	mu      sync.Mutex
	queue   []pending
	running bool       // a goroutine shows the queue
	idle    *sync.Cond // broadcast when the queue is empty and shown
}

// pending is a frame of session ss waiting for its commit.
type pending struct {
	ss *Session
	f  Frame
	c  *sqlite.Commit
}

// show hands f, just appended to ss's log, to ss's subscribers: at once when the log has no
// group commit, else once its transaction is committed. The caller holds ss.mu, so frames queue
// in the order their messages were appended.
func (s *Runner) show(ss *Session, f Frame) {
	c, ok := s.store.(committer)
	if !ok {
		ss.subMu.Lock()
		ss.offer(f)
		ss.subMu.Unlock()
		return
	}
	sh := &s.shown
	sh.mu.Lock()
	sh.queue = append(sh.queue, pending{ss, f, c.Committed()})
	start := !sh.running
	sh.running = true
	sh.mu.Unlock()
	if start {
		go s.showQueue()
	}
}

// showQueue offers the queued frames to their subscribers, each once its commit is done, in
// order, until the queue is empty. A commit never takes long (the store commits within
// milliseconds, and at Close); one that failed shows nothing (those messages are not in the
// log: the store refuses every append from then on).
func (s *Runner) showQueue() {
	sh := &s.shown
	var batch []pending
	for {
		sh.mu.Lock()
		clear(batch)
		batch, sh.queue = sh.queue, batch[:0]
		if len(batch) == 0 {
			sh.running = false
			sh.idle.Broadcast()
			sh.mu.Unlock()
			return
		}
		sh.mu.Unlock()
		for i := 0; i < len(batch); {
			c := batch[i].c
			<-c.Done()
			j := i
			for j < len(batch) && batch[j].c == c {
				j++
			}
			if err := c.Err(); err != nil {
				s.Logf("the log failed: %d messages not published: %v", j-i, err)
				i = j
				continue
			}
			for i < j { // one session's frames under one lock
				ss := batch[i].ss
				ss.subMu.Lock()
				for ; i < j && batch[i].ss == ss; i++ {
					ss.offer(batch[i].f)
				}
				ss.subMu.Unlock()
			}
		}
	}
}

// shownAll returns once every frame appended before the call has been shown (or was not: its
// commit failed), committing what the log holds first.
func (s *Runner) shownAll(ctx context.Context) {
	if st, ok := s.store.(syncer); ok {
		st.Sync(ctx)
	}
	sh := &s.shown
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for sh.running {
		sh.idle.Wait()
	}
}

// durable returns once everything appended to the log so far is committed: a client is told
// (an operation accepted, an interrupt taken) only what a crash cannot take back.
func (s *Runner) durable(ctx context.Context) error {
	if st, ok := s.store.(syncer); ok {
		return st.Sync(ctx)
	}
	return nil
}

// offer hands f to every subscriber of ss, dropping those too slow for it. The caller holds
// ss.subMu.
func (ss *Session) offer(f Frame) {
	for sub := range ss.subs {
		if !sub.offer(f) {
			delete(ss.subs, sub)
		}
	}
}
