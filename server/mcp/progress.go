package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress pacing: an exec's lines and verdicts reach the client coalesced, at most one
// notification per progressEvery (a cell printing 200,000 lines sends a few hundred, each
// with its latest lines and how many it stands for), and a cell that stays quiet still sends
// one every keepAlive, so that a client whose request timeout restarts on progress never
// gives up on a long, silent cell.
const (
	progressEvery = 100 * time.Millisecond
	keepAlive     = 15 * time.Second
	progressLines = 20      // lines kept in one notification (the latest)
	progressBytes = 4 << 10 // bytes kept in one notification
)

// progress paces one exec's progress notifications. Its methods are safe for concurrent use.
type progress struct {
	send  func(progress float64, msg string)
	start time.Time

	mu      sync.Mutex
	n       float64  // messages so far (the notification's progress value)
	pending []string // the latest messages not yet sent
	dropped int      // messages coalesced away since the last notification
	last    time.Time
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// newProgress paces notifications for the call's progress token (none: it sends nothing).
func newProgress(ctx context.Context, req *sdk.CallToolRequest) *progress {
	token := req.Params.GetProgressToken()
	p := &progress{start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if token == nil || req.Session == nil {
		p.send = func(float64, string) {}
	} else {
		p.send = func(n float64, msg string) {
			// A failed notification (the client went away) must not stop the run.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
	}
	go p.run()
	return p
}

// add queues one message.
func (p *progress) add(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.pending = append(p.pending, msg)
	if len(p.pending) > progressLines {
		p.dropped += len(p.pending) - progressLines
		p.pending = append(p.pending[:0], p.pending[len(p.pending)-progressLines:]...)
	}
}

func (p *progress) run() {
	defer close(p.done)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.flush(false)
			return
		case now := <-t.C:
			p.mu.Lock()
			quiet := len(p.pending) == 0 && now.Sub(p.last) >= keepAlive
			p.mu.Unlock()
			p.flush(quiet)
		}
	}
}

// flush sends what is pending, or with alive and nothing pending a keep-alive.
func (p *progress) flush(alive bool) {
	p.mu.Lock()
	var msg string
	switch {
	case len(p.pending) > 0:
		msg = strings.Join(p.pending, "\n")
		if len(msg) > progressBytes {
			msg = "…" + msg[len(msg)-progressBytes:]
		}
		if p.dropped > 0 {
			msg = fmt.Sprintf("(%d earlier lines not shown)\n%s", p.dropped, msg)
		}
	case alive:
		msg = fmt.Sprintf("still running after %v", time.Since(p.start).Round(time.Second))
	default:
		p.mu.Unlock()
		return
	}
	p.pending, p.dropped, p.last = p.pending[:0], 0, time.Now()
	n := p.n
	p.mu.Unlock()
	p.send(n, msg)
}

// close sends what is pending and stops pacing; closing again does nothing.
func (p *progress) close() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}
