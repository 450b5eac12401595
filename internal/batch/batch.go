// Package batch runs concurrent requests together ("smart batching"):
// a request that comes while the lookups in flight are at their bound
// waits, and the next lookup takes every request waiting by then, up to
// a batch's bound. A lone request goes at once: no timer, no added wait.
package batch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// A Batcher runs requests of type Q, in batches, for answers of type A.
type Batcher[Q, A any] struct {
	run       func(ctx context.Context, qs []Q) ([]A, error)
	maxBatch  int
	maxFlight int

	mu      sync.Mutex
	queue   []*call[Q, A]
	running int // batches in flight
}

type call[Q, A any] struct {
	ctx  context.Context
	q    Q
	a    A
	err  error
	done chan struct{}
}

// New returns a Batcher whose batches are run by run, at most maxFlight
// at once, each of at most maxBatch requests (both at least 1). run gets
// the requests of a batch and returns their answers in the same order,
// or one error for them all.
func New[Q, A any](maxFlight, maxBatch int, run func(ctx context.Context, qs []Q) ([]A, error)) *Batcher[Q, A] {
	return &Batcher[Q, A]{run: run, maxBatch: max(maxBatch, 1), maxFlight: max(maxFlight, 1)}
}

// Do answers q. The batch that answers it is taken after Do was called,
// so its run starts after Do was called: it sees every write finished
// before. Do returns ctx's error if ctx ends first; the other requests
// of its batch are not affected.
func (b *Batcher[Q, A]) Do(ctx context.Context, q Q) (A, error) {
	c := &call[Q, A]{ctx: ctx, q: q, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	var batch []*call[Q, A]
	if b.running < b.maxFlight {
		b.running++
		batch = b.takeLocked()
	}
	b.mu.Unlock()
	if batch != nil {
		// This caller runs the batch holding its own request first, so a
		// lone request costs no hand-over; later batches go to another
		// goroutine, so that it does not wait for others' answers.
		b.runBatch(batch)
		if next := b.next(); next != nil {
			go b.drain(next)
		}
	}
	select {
	case <-c.done:
		return c.a, c.err
	case <-ctx.Done():
		var zero A
		return zero, ctx.Err()
	}
}

// takeLocked takes the next batch from the queue, leaving out the
// requests whose context has ended. b.mu is held.
func (b *Batcher[Q, A]) takeLocked() []*call[Q, A] {
	n := min(len(b.queue), b.maxBatch)
	batch := make([]*call[Q, A], 0, n)
	for _, c := range b.queue[:n] {
		if c.ctx.Err() == nil {
			batch = append(batch, c)
		}
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	return batch
}

// next takes the next batch, keeping the finished batch's slot, or
// frees the slot when none waits.
func (b *Batcher[Q, A]) next() []*call[Q, A] {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.queue) > 0 {
		if batch := b.takeLocked(); len(batch) > 0 {
			return batch
		}
	}
	b.running--
	return nil
}

// drain runs batches until none waits.
func (b *Batcher[Q, A]) drain(batch []*call[Q, A]) {
	for batch != nil {
		b.runBatch(batch)
		batch = b.next()
	}
}

// runBatch runs batch and answers its requests. Its context ends only
// once every request's has ended, so that one caller going away does not
// fail the others.
func (b *Batcher[Q, A]) runBatch(batch []*call[Q, A]) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	defer cancel()
	left := int64(len(batch))
	for _, c := range batch {
		stop := context.AfterFunc(c.ctx, func() {
			if atomic.AddInt64(&left, -1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	qs := make([]Q, len(batch))
	for i, c := range batch {
		qs[i] = c.q
	}
	as, err := b.run(ctx, qs)
	if err == nil && len(as) != len(qs) {
		err = fmt.Errorf("batch: %d answers to %d requests", len(as), len(qs))
	}
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.a = as[i]
		}
		close(c.done)
	}
}
