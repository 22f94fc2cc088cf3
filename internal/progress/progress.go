// Package progress draws a one-line progress bar on a terminal's stderr.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bar draws a one-line progress bar.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	done  int
	total int
	start time.Time
}

// New draws a bar of total steps on w (stderr) and returns it.
func New(w io.Writer, label string, total int) *Bar {
	p := &Bar{w: w, label: label, total: total, start: time.Now()}
	p.draw()
	return p
}

// Add counts one step done; it is safe for concurrent use.
func (p *Bar) Add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.total < 200 || p.done*200/p.total != (p.done-1)*200/p.total || p.done == p.total {
		p.draw() // at most 200 redraws
	}
}

func (p *Bar) draw() {
	const width = 30
	n := 0
	if p.total > 0 {
		n = width * p.done / p.total
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %s", p.label, strings.Repeat("#", n), strings.Repeat(" ", width-n),
		p.done, p.total, time.Since(p.start).Round(time.Second))
	if p.done == p.total {
		fmt.Fprintln(p.w)
	}
}
