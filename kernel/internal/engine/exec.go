package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// why records what stopped a cell early.
type why int

const (
	notStopped why = iota
	byInterrupt
	byTimeout
	byQuota // the sandbox reported that the workspace grew past its quota
)

// run is the state of one Exec.
type run struct {
	k       *Kernel
	p       *proc
	yield   func(*kernel.Step, error) bool
	quiet   bool // the consumer stopped listening: finish the cell without yielding
	start   time.Time
	res     protocol.Result
	out     int64
	stopped why
	want    string // the tag whose markers end the run
	seen    int    // streams on which want's marker arrived
	end     *mark  // want's side-channel end record
	cellEnd *mark  // the cell's own end record, when it arrived while recovering
	budget0 int    // the sandbox's budget overruns of this interpreter reported by earlier cells
	over    []error
	looked  *protocol.Loop // the driver's latest look at the running loop, for the next resource sample
}

// Exec runs one cell; see kernel.Kernel.
func (k *Kernel) Exec(ctx context.Context, c *kernel.Cell) iter.Seq2[*kernel.Step, error] {
	return func(yield func(*kernel.Step, error) bool) {
		if err := c.Validate(); err != nil {
			yield(nil, err)
			return
		}
		if !k.busy.CompareAndSwap(false, true) {
			yield(nil, fmt.Errorf("%s kernel: %w", k.d.Name, kernel.ErrBusy))
			return
		}
		defer k.busy.Store(false)
		select { // an Interrupt() that raced with the end of the previous cell
		case <-k.interrupt:
		default:
		}
		k.mu.Lock()
		p, closed := k.p, k.closed
		k.cellCount++
		name := k.d.CellFile
		if name == "" {
			name = "cell_" + strconv.Itoa(k.cellCount) + k.d.Ext
		}
		path := filepath.Join(k.rt, "cells", name)
		rehash := k.d.Rehash && !k.lastCell.IsZero() && k.wsChanged(k.lastCell)
		k.lastCell = time.Now()
		k.mu.Unlock()
		switch {
		case closed:
			yield(nil, fmt.Errorf("%s kernel: %w", k.d.Name, kernel.ErrClosed))
			return
		case p == nil || p.dead():
			yield(nil, fmt.Errorf("%s kernel: %w", k.d.Name, kernel.ErrDead))
			return
		}
		if err := os.WriteFile(path, []byte(c.Code), 0o644); err != nil {
			yield(nil, fmt.Errorf("%s kernel: writing cell: %w", k.d.Name, err))
			return
		}
		defer os.Remove(path)
		if a, ok := k.opts.Sandbox.(adopter); ok {
			// What the host's side put in the workspace since (an upload, a folder) becomes
			// the sandbox's, so the cell can write it.
			if err := a.Adopt(k.ws); err != nil {
				yield(nil, fmt.Errorf("%s kernel: %w", k.d.Name, err))
				return
			}
		}
		r := &run{k: k, p: p, yield: yield, start: time.Now(), want: k.tag(), budget0: p.overruns}
		r.loop(ctx, c, path, rehash)
	}
}

// adopter is a sandbox that gives a workspace's entries to the identity sandboxed code runs as
// (sandbox.Sandbox, when labmate runs as root).
type adopter interface {
	Adopt(workspace string) error
}

// emit yields an observation unless the consumer has stopped listening.
func (r *run) emit(o *protocol.Observation) {
	if !r.quiet && !r.yield(&kernel.Step{Observation: o}, nil) {
		r.quiet = true
	}
}

func (r *run) event(name protocol.EventName, detail string) {
	r.emit(&protocol.Observation{Kind: protocol.ObsEvent, Time: time.Now(), Event: &protocol.Event{Name: name, Detail: detail}})
}

func (r *run) loop(ctx context.Context, c *kernel.Cell, path string, rehash bool) {
	k, p := r.k, r.p
	cellTag := r.want
	// Drop anything left from before this cell (stale markers of an earlier recovery).
	for len(p.items) > 0 {
		<-p.items
	}
	p.active.Store(true)
	defer p.active.Store(false)
	r.event(protocol.EventStarted, "")
	if _, err := p.stdin.WriteString(k.d.Frame(cellTag, path, rehash)); err != nil {
		r.crashed("writing the cell to the interpreter: " + err.Error())
		return
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = k.opts.Timeout
	}
	var timeoutC, graceC, resendC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	res := time.NewTicker(resourceEvery)
	defer res.Stop()
	budget := time.NewTicker(budgetEvery)
	defer budget.Stop()
	ctxDone := ctx.Done()
	var grace *time.Timer
	var resend *time.Ticker
	defer func() {
		if grace != nil {
			grace.Stop()
			resend.Stop()
		}
	}()
	stop := func(w why) {
		if r.stopped != notStopped || r.end != nil {
			return // already stopping, or the cell has ended and only its markers are due
		}
		r.stopped = w
		k.signal(p)
		if k.d.Recover != nil {
			r.want = k.tag()
			r.seen, r.end = 0, nil
			p.stdin.WriteString(k.d.Recover(r.want))
		}
		grace, resend = time.NewTimer(k.opts.Grace), time.NewTicker(resendEvery)
		graceC, resendC = grace.C, resend.C
	}
	for r.seen != allStreams {
		select {
		case it := <-p.items:
			r.take(it, cellTag)
		case <-k.interrupt:
			stop(byInterrupt)
		case <-ctxDone:
			ctxDone = nil
			stop(byInterrupt)
		case <-timeoutC:
			stop(byTimeout)
		case <-resendC:
			// A SIGINT can be lost (the driver was between frames) and a recovery line can be
			// eaten by the prompt it interrupted: repeat both; the drivers make them idempotent.
			if k.d.Recover != nil {
				p.stdin.WriteString(k.d.Recover(r.want))
			} else {
				k.signal(p)
			}
		case <-budget.C:
			for _, err := range r.overruns() {
				if errors.Is(err, kernel.ErrQuota) {
					stop(byQuota)
				}
			}
		case <-graceC:
			r.over = r.overruns()
			p.kill()
			r.finishKilled()
			return
		case <-res.C:
			cpu, rss, runnable := usage(p.pid)
			r.emit(&protocol.Observation{Kind: protocol.ObsResource, Time: time.Now(), Resource: &protocol.Resource{
				CPUSeconds: cpu, RSSBytes: rss, WallSeconds: time.Since(r.start).Seconds(), Runnable: runnable,
				OutputBytes: r.out, OutputLimit: k.opts.MaxOutput, MemoryLimit: k.opts.Sandbox.MemoryLimit(), Loop: r.looked,
			}})
			r.looked = nil
		case <-p.exited:
			r.drainExited(cellTag)
			r.crashed("the interpreter exited (" + p.exitDetail() + ")")
			return
		}
		if r.quiet && r.stopped == notStopped {
			stop(byInterrupt)
		}
	}
	r.finish()
}

// take handles one item from the readers.
func (r *run) take(it item, cellTag string) {
	if it.loop != nil {
		r.looked = it.loop // goes out with the next resource sample
		return
	}
	if m := it.mark; m != nil {
		switch {
		case m.tag == r.want:
			r.seen |= m.stream
			if m.stream == onSide {
				r.end = m
			}
		case m.tag == cellTag && m.stream == onSide:
			r.cellEnd = m // the cell finished on its own just before the interrupt took hold
		}
		return
	}
	o := it.obs
	if o.Kind == protocol.ObsStdout || o.Kind == protocol.ObsStderr {
		r.out += int64(len(o.Line)) + 1
		if r.out > r.k.opts.MaxOutput {
			if !r.res.Truncated {
				r.res.Truncated = true
				r.event(protocol.EventTruncated, fmt.Sprintf("output over %s; further lines are dropped (still counted)", bytesHuman(r.k.opts.MaxOutput)))
			}
			return
		}
	}
	r.emit(o)
}

// drainExited takes what the readers still deliver after the interpreter exited.
func (r *run) drainExited(cellTag string) {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case it := <-r.p.items:
			r.take(it, cellTag)
		case <-t.C:
			return
		}
	}
}

func (r *run) finish() {
	end := r.end
	if r.cellEnd != nil {
		end = r.cellEnd
	}
	r.res.WorkspaceOK = true
	switch {
	case end != nil && end.status == "ok":
		r.res.Status = protocol.StatusOK
	case end != nil && end.status == "error":
		// The cell failed on its own; an interrupt that came after did not change that.
		r.res.Status = protocol.StatusError
		r.res.Error, r.res.Line = end.msg, end.line
	case r.stopped == byQuota:
		r.res.Status = protocol.StatusError
		r.res.Error = "the cell was interrupted; the workspace is kept"
	case r.stopped == byTimeout:
		r.res.Status = protocol.StatusTimeout
		r.res.Error = fmt.Sprintf("cell exceeded its time limit and was interrupted after %s; the workspace is kept", time.Since(r.start).Round(time.Millisecond))
	default: // interrupted by us, or the code raised KeyboardInterrupt itself
		r.res.Status = protocol.StatusInterrupted
		r.res.Error = "the cell was stopped before it finished; the workspace is kept"
	}
	r.over = r.overruns()
	r.explain()
	switch r.res.Status {
	case protocol.StatusOK, protocol.StatusError:
		r.event(protocol.EventFinished, string(r.res.Status))
	default:
		r.event(protocol.EventInterrupted, r.res.Error)
	}
	r.result()
}

// finishKilled reports a cell that did not stop within the grace period after SIGINT.
func (r *run) finishKilled() {
	r.res.Status = protocol.StatusInterrupted
	if r.stopped == byTimeout {
		r.res.Status = protocol.StatusTimeout
	}
	r.res.Error = fmt.Sprintf("the interpreter did not stop within %s of the interrupt and was killed; the workspace is lost (Restart the kernel)", r.k.opts.Grace)
	r.res.ExitCode = exitStatus(r.p)
	r.explain()
	r.event(protocol.EventCrashed, r.res.Error)
	r.result()
}

func (r *run) crashed(detail string) {
	r.over = r.overruns() // before Kill, which makes the sandbox forget the command
	r.p.kill()
	r.res.Status = protocol.StatusCrashed
	r.res.Error = detail + "; the workspace is lost (Restart the kernel)"
	r.res.ExitCode = exitStatus(r.p)
	r.explain()
	r.event(protocol.EventCrashed, r.res.Error)
	r.result()
}

// overruns are the sandbox's budget overruns not reported by an earlier cell: those of this
// cell, and of processes the interpreter left running between cells.
func (r *run) overruns() []error {
	errs := r.k.opts.Sandbox.Exceeded(r.p.cmd)
	if len(errs) <= r.budget0 {
		return nil
	}
	return errs[r.budget0:]
}

// explain puts what the sandbox's budget did during the cell first in the result's error: a
// cell in which a process was killed for memory, or that was stopped by the workspace quota,
// is not ok even if its own code did not notice.
func (r *run) explain() {
	if len(r.over) == 0 {
		return
	}
	var why []string
	for _, err := range r.over {
		if msg := err.Error(); !slices.Contains(why, msg) {
			why = append(why, msg)
		}
	}
	if r.res.Status == protocol.StatusOK {
		r.res.Status = protocol.StatusError
	}
	if r.res.Error == "" {
		r.res.Error = strings.Join(why, "; ")
	} else {
		r.res.Error = strings.Join(why, "; ") + "; " + r.res.Error
	}
}

func (r *run) result() {
	r.p.overruns = r.budget0 + len(r.over)
	r.res.DurationS = time.Since(r.start).Seconds()
	r.res.OutputBytes = r.out
	if !r.quiet {
		r.yield(&kernel.Step{Result: &r.res}, nil)
	}
}

// usage sums CPU seconds and resident bytes over pid and its descendants, and says whether
// one of them was running or runnable (state R).
func usage(pid int) (cpu float64, rss int64, runnable bool) {
	for _, p := range append([]int{pid}, procfs.Descendants(pid)...) {
		if st, ok := procfs.ReadStat(p); ok {
			cpu += st.CPUSeconds
			rss += st.RSSBytes
			runnable = runnable || st.State == 'R'
		}
	}
	return cpu, rss, runnable
}

func bytesHuman(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
