package runner

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/labmate/labmate/kernel"
)

// pool starts every kernel of the server's sessions, counting them against one limit
// (Limits.Kernels), and keeps one started kernel of each pre-warmed kind, each in a fresh
// workspace, so that a new session's first cell does not wait for an interpreter to start.
// Pre-warmed kernels count too, and are the first to give their place up: when the limit is
// reached, one is closed to start the kernel a session asks for.
type pool struct {
	ctx   context.Context
	start func(context.Context, string, string) (kernel.Kernel, error)
	root  string
	logf  func(string, ...any)
	slots *counter
	idle  time.Duration // for the refusal: when idle sessions give their kernels up

	mu     sync.Mutex
	ready  map[string]*warm // the pre-warmed kinds; nil: none ready
	filing map[string]bool  // a refill of that kind is under way
	closed bool
	wg     sync.WaitGroup
}

type warm struct {
	k  kernel.Kernel
	ws string
}

func newPool(ctx context.Context, start func(context.Context, string, string) (kernel.Kernel, error), root string, kinds []string, maxKernels int, idle time.Duration, logf func(string, ...any)) *pool {
	p := &pool{ctx: ctx, start: start, root: root, logf: logf, slots: newCounter(maxKernels), idle: idle,
		ready: map[string]*warm{}, filing: map[string]bool{}}
	if start == nil {
		return p
	}
	for _, name := range kinds {
		if _, dup := p.ready[name]; !dup {
			p.ready[name] = nil
			p.refill(name)
		}
	}
	return p
}

// counted is a kernel that gives its place back when it is closed.
type counted struct {
	kernel.Kernel
	once sync.Once
	put  func()
}

func (k *counted) Close() error {
	err := k.Kernel.Close()
	k.once.Do(k.put)
	return err
}

// refill starts one kernel of that kind in the background, when there is room for it: a
// pre-warmed kernel never takes the place a session may want. take and the janitor refill.
func (p *pool) refill(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.filing[name] || p.ready[name] != nil {
		return
	}
	if _, kind := p.ready[name]; !kind || !p.slots.take() {
		return
	}
	p.filing[name] = true
	p.wg.Go(func() {
		k, ws, err := p.startIn(p.ctx, name, "")
		p.mu.Lock()
		defer p.mu.Unlock()
		p.filing[name] = false
		if err != nil {
			if p.ctx.Err() == nil {
				p.logf("pre-warming %s: %v", name, err)
			}
			return
		}
		if p.closed {
			k.Close()
			return
		}
		p.ready[name] = &warm{k, ws}
	})
}

// refillAll refills every pre-warmed kind that has none ready.
func (p *pool) refillAll() {
	p.mu.Lock()
	kinds := slices.Collect(maps.Keys(p.ready))
	p.mu.Unlock()
	for _, name := range kinds {
		p.refill(name)
	}
}

// startIn starts a kernel in ws (a fresh workspace when ws is empty) in a place already
// taken, which the kernel gives back when closed, or now when it fails to start.
func (p *pool) startIn(ctx context.Context, name, ws string) (kernel.Kernel, string, error) {
	var err error
	if ws == "" {
		ws, err = newWorkspace(p.root)
	}
	var k kernel.Kernel
	if err == nil {
		k, err = p.start(ctx, name, ws)
	}
	if err != nil {
		p.slots.put()
		return nil, "", err
	}
	return &counted{Kernel: k, put: p.slots.put}, ws, nil
}

// take returns a started kernel and its workspace: a pre-warmed one when there is one,
// else one started now in ws (a fresh workspace when ws is empty).
func (p *pool) take(ctx context.Context, name, ws string) (kernel.Kernel, string, error) {
	if ws == "" {
		p.mu.Lock()
		w := p.ready[name]
		if w != nil {
			p.ready[name] = nil
		}
		p.mu.Unlock()
		if w != nil {
			p.refill(name)
			return w.k, w.ws, nil
		}
	}
	if err := p.room(); err != nil {
		return nil, "", err
	}
	return p.startIn(ctx, name, ws)
}

// room takes a place for a new kernel, closing a pre-warmed one when that makes room.
func (p *pool) room() error {
	if p.slots.take() {
		return nil
	}
	p.mu.Lock()
	var w *warm
	for name, r := range p.ready {
		if r != nil {
			w, p.ready[name] = r, nil
			break
		}
	}
	p.mu.Unlock()
	if w != nil {
		w.k.Close() // gives its place back
		if p.slots.take() {
			return nil
		}
	}
	return p.full()
}

// full is the refusal of a kernel beyond the limit.
func (p *pool) full() error {
	return busy(false, "%d kernels are running, the server's limit (labmate serve --max-kernels): "+
		"a session's kernels close after %v without an operation; try again then, or interrupt and leave a session", p.slots.limit(), p.idle)
}

// canStart reports whether a kernel of that kind could be had now (a snapshot: a request
// that could not is refused before it is logged).
func (p *pool) canStart(name string) bool {
	if p.slots.used() < p.slots.limit() {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.ready {
		if w != nil {
			return true
		}
	}
	return false
}

func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, w := range p.ready {
		if w != nil {
			w.k.Close()
			p.ready[name] = nil
		}
	}
}
