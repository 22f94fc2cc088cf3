// Package progress draws a one-line progress bar on a terminal's stderr: steps done of the
// total, the time since it started, the tokens spent when the steps spend them, and an
// estimate of the time left.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/internal/tty"
)

// Bar draws a one-line progress bar.
type Bar struct {
	mu     sync.Mutex
	w      io.Writer
	label  string
	done   int
	base   int // steps done before the bar started
	total  int
	tokens int64
	counts bool // the steps spend tokens
	start  time.Time
}

// OnTerminal draws a bar of total steps on w (stderr) when w is a terminal; on a file or a
// pipe, where a bar redrawn in place is noise, it draws nothing.
func OnTerminal(w io.Writer, label string, total int) *Bar {
	if !tty.IsTerminal(w) {
		w = io.Discard
	}
	return Resume(tty.Raw(w), label, 0, total, -1)
}

// Resume draws a bar of total steps of which done were done before it started (a job that
// resumes), having spent tokens (negative: the steps spend none, and the bar shows no
// tokens). Its estimate of the time left counts only the steps done since it started.
func Resume(w io.Writer, label string, done, total int, tokens int64) *Bar {
	p := &Bar{w: w, label: label, done: done, base: done, total: total, tokens: max(tokens, 0), counts: tokens >= 0, start: time.Now()}
	p.draw()
	return p
}

// Add counts one step done; it is safe for concurrent use.
func (p *Bar) Add() { p.AddTokens(0) }

// AddTokens counts one step done that spent tokens; it is safe for concurrent use.
func (p *Bar) AddTokens(tokens int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.tokens += tokens
	if p.total < 200 || p.done*200/p.total != (p.done-1)*200/p.total || p.done == p.total {
		p.draw() // at most 200 redraws
	}
}

func (p *Bar) draw() {
	const width = 30
	n := 0
	if p.total > 0 {
		n = min(width, width*p.done/p.total)
	}
	elapsed := time.Since(p.start)
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %s", p.label, strings.Repeat("#", n), strings.Repeat(" ", width-n),
		p.done, p.total, elapsed.Round(time.Second))
	if p.counts {
		fmt.Fprintf(p.w, ", %s tokens", Count(p.tokens))
	}
	if since := p.done - p.base; since > 0 && p.done < p.total {
		left := elapsed / time.Duration(since) * time.Duration(p.total-p.done)
		fmt.Fprintf(p.w, ", about %s left", left.Round(time.Second))
	}
	if p.done >= p.total {
		fmt.Fprintln(p.w)
	}
}

// Count is n in a few digits: 950, 12.3k, 4.56M.
func Count(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.3gM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.3gk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Working shows, on a terminal, that a step of unknown length is under way: "label… 7s",
// redrawn every second until done is called, which ends the line. On a file or a pipe it
// draws nothing. interval is how often it redraws (0: a second).
func Working(w io.Writer, label string, interval time.Duration) (done func()) {
	if !tty.IsTerminal(w) {
		return func() {}
	}
	return working(tty.Raw(w), label, interval)
}

func working(w io.Writer, label string, interval time.Duration) (done func()) {
	if interval <= 0 {
		interval = time.Second
	}
	start := time.Now()
	stop, stopped := make(chan struct{}), make(chan struct{})
	fmt.Fprintf(w, "\r%s… ", label)
	go func() {
		defer close(stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				fmt.Fprintf(w, "\r%s… %s\n", label, time.Since(start).Round(100*time.Millisecond))
				return
			case <-t.C:
				fmt.Fprintf(w, "\r%s… %s", label, time.Since(start).Round(time.Second))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop); <-stopped })
	}
}

// Status is a line of status kept at the bottom of a terminal while lines are printed above
// it: "label… 37s", redrawn every second. On a file or a pipe it draws nothing and Println
// just prints. Its methods are safe for concurrent use.
type Status struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	label    string
	start    time.Time
	stop     chan struct{}
	stopped  chan struct{}
	finished bool
}

// NewStatus starts a status line on w showing label (interval as for Working).
func NewStatus(w io.Writer, label string, interval time.Duration) *Status {
	s := &Status{w: tty.Raw(w), tty: tty.IsTerminal(w), label: label, start: time.Now()}
	if !s.tty {
		return s
	}
	return s.run(interval)
}

func (s *Status) run(interval time.Duration) *Status {
	if interval <= 0 {
		interval = time.Second
	}
	s.stop, s.stopped = make(chan struct{}), make(chan struct{})
	s.draw()
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.mu.Lock()
				s.draw()
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// draw redraws the status line; s.mu is held (or s is not shared yet).
func (s *Status) draw() {
	if s.tty && !s.finished {
		fmt.Fprintf(s.w, "\r\033[K%s… %s", s.label, time.Since(s.start).Round(time.Second))
	}
}

// Println prints line above the status line, and the status line with label (unchanged when
// label is "").
func (s *Status) Println(line, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty && !s.finished {
		fmt.Fprint(s.w, "\r\033[K")
	}
	fmt.Fprintln(s.w, line)
	if label != "" {
		s.label = label
	}
	s.draw()
}

// Done erases the status line; twice is harmless.
func (s *Status) Done() {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.finished = true
	if s.tty {
		fmt.Fprint(s.w, "\r\033[K")
	}
	s.mu.Unlock()
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
}
