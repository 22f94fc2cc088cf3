package server

import (
	"context"
	"sync"

	"github.com/labmate/labmate/kernel"
)

// pool keeps one started kernel of each pre-warmed kind, each in a fresh workspace, so
// that a new session's first cell does not wait for an interpreter to start.
type pool struct {
	ctx   context.Context
	start func(context.Context, string, string) (kernel.Kernel, error)
	root  string
	logf  func(string, ...any)

	mu    sync.Mutex
	ready map[string]chan warm // capacity 1 per pre-warmed kind
	wg    sync.WaitGroup
}

type warm struct {
	k  kernel.Kernel
	ws string
}

func newPool(ctx context.Context, start func(context.Context, string, string) (kernel.Kernel, error), root string, kinds []string, logf func(string, ...any)) *pool {
	p := &pool{ctx: ctx, start: start, root: root, logf: logf, ready: map[string]chan warm{}}
	if start == nil {
		return p
	}
	for _, name := range kinds {
		p.ready[name] = make(chan warm, 1)
		p.refill(name)
	}
	return p
}

// refill starts one kernel of that kind in the background.
func (p *pool) refill(name string) {
	p.wg.Go(func() {
		ws, err := newWorkspace(p.root)
		if err != nil {
			p.logf("pre-warming %s: %v", name, err)
			return
		}
		k, err := p.start(p.ctx, name, ws)
		if err != nil {
			p.logf("pre-warming %s: %v", name, err)
			return
		}
		select {
		case p.ready[name] <- warm{k, ws}:
		case <-p.ctx.Done():
			k.Close()
		}
	})
}

// take returns a started kernel and its workspace: a pre-warmed one when there is one.
func (p *pool) take(ctx context.Context, name string) (kernel.Kernel, string, error) {
	if ch := p.ready[name]; ch != nil {
		select {
		case w := <-ch:
			p.refill(name)
			return w.k, w.ws, nil
		default:
		}
	}
	ws, err := newWorkspace(p.root)
	if err != nil {
		return nil, "", err
	}
	k, err := p.start(ctx, name, ws)
	return k, ws, err
}

func (p *pool) close() {
	p.wg.Wait()
	for _, ch := range p.ready {
		select {
		case w := <-ch:
			w.k.Close()
		default:
		}
	}
}
