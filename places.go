package memstore

import (
	"context"
	"sync"
)

// places counts what is in progress, in all and by workspace, and lets a
// new one wait for a place: the exports in progress, a workspace's
// semantic searches.
type places struct {
	max          int // in all; 0 for no bound
	perWorkspace int // a workspace's share

	mu      sync.Mutex
	total   int
	held    map[string]int
	changed chan struct{} // closed and replaced whenever a place frees
}

// take waits until ctx is done for a place for workspace ws, and returns
// its release, or ctx's error.
func (p *places) take(ctx context.Context, ws string) (release func(), err error) {
	for {
		p.mu.Lock()
		if p.held == nil {
			p.held = map[string]int{}
			p.changed = make(chan struct{})
		}
		if (p.max == 0 || p.total < p.max) && p.held[ws] < p.perWorkspace {
			p.total++
			p.held[ws]++
			p.mu.Unlock()
			return sync.OnceFunc(func() { p.release(ws) }), nil
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *places) release(ws string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total--
	if p.held[ws]--; p.held[ws] == 0 {
		delete(p.held, ws)
	}
	close(p.changed)
	p.changed = make(chan struct{})
}
