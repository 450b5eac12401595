// Package heldcallers keeps the callers that outlive the request that
// authenticated them (a change-feed stream, an MCP session) and ends each
// when its credential stops working: at once for a revocation that names
// it, after a fresh lookup for one that may concern it
// (memstore.Revocation.Stale). Close stops the listening and waits for
// the lookups under way, so that none outlives the database they read.
package heldcallers

import (
	"context"
	"reflect"
	"slices"
	"sync"

	"github.com/memstore/memstore"
)

// A Check reads again what a held caller stands on (memstore.CheckHeld):
// EUnauthenticated or EPermission end the hold, anything else keeps it.
type Check func(ctx context.Context, c *memstore.Caller, storeID string) error

// Listen calls f with each revocation that any of services tells of
// (those that are a memstore.RevocationNotifier), until stop is called.
// A notifier given twice (a Core is often both the key and the session
// service) is listened to once, so that each revocation is handled once.
func Listen(f func(memstore.Revocation), services ...any) (stop func()) {
	var stops []func()
	var seen []memstore.RevocationNotifier
	for _, svc := range services {
		n, ok := svc.(memstore.RevocationNotifier)
		if !ok || slices.ContainsFunc(seen, func(m memstore.RevocationNotifier) bool { return same(m, n) }) {
			continue
		}
		seen = append(seen, n)
		stops = append(stops, n.NotifyRevocations(f))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// Registry is the set of held callers of one surface.
type Registry struct {
	check Check
	stop  func() // ends the listening
	// ctx ends the lookups under way at Close; rechecks are those lookups.
	ctx      context.Context
	cancel   context.CancelFunc
	rechecks sync.WaitGroup

	mu     sync.Mutex
	held   map[*hold]struct{}
	closed bool
}

// A hold is one caller held, by what end ends.
type hold struct {
	ctx     context.Context
	caller  *memstore.Caller
	storeID string
	end     func()
}

// New returns a registry that hears the revocations of services and reads
// a held caller again with check when a revocation may concern it (nil:
// never). Close it when the surface shuts down.
func New(check Check, services ...any) *Registry {
	r := &Registry{check: check, held: map[*hold]struct{}{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.stop = Listen(r.revoked, services...)
	return r
}

// Hold keeps c, the caller of what end ends, until release is called:
// end is called, outside any lock of the registry, when c's credential
// stops working, or when storeID (if not "") is no longer c's to read.
// A lookup for the hold ends with ctx.
func (r *Registry) Hold(ctx context.Context, c *memstore.Caller, storeID string, end func()) (release func()) {
	h := &hold{ctx: ctx, caller: c, storeID: storeID, end: end}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[h] = struct{}{}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.held, h)
	}
}

// revoked is the registry's memstore.Revocation listener. A hold whose
// caller r stops ends at once. One that r makes stale is read again in
// the background, one lookup at a time: after notices went unheard, any;
// after a session's stores changed, those that hold a store. A hold whose
// credential cannot be read goes on: the next notice, its next request or
// its expiry ends it.
func (r *Registry) revoked(rev memstore.Revocation) {
	var end []func()
	var recheck []*hold
	r.mu.Lock()
	for h := range r.held {
		switch {
		case rev.Stops(h.caller):
			end = append(end, h.end)
		case r.check != nil && (rev.Unheard || h.storeID != "" && rev.Stale(h.caller)):
			recheck = append(recheck, h)
		}
	}
	if len(recheck) > 0 && !r.closed {
		r.rechecks.Go(func() { r.recheck(recheck) })
	}
	r.mu.Unlock()
	for _, f := range end {
		f()
	}
}

// recheck ends each of holds whose check finds it no longer stands.
func (r *Registry) recheck(holds []*hold) {
	for _, h := range holds {
		if h.ctx.Err() != nil || r.ctx.Err() != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(r.ctx, memstore.RecheckTimeout)
		stop := context.AfterFunc(h.ctx, cancel)
		err := r.check(ctx, h.caller, h.storeID)
		stop()
		cancel()
		switch memstore.ErrorCode(err) {
		case memstore.EUnauthenticated, memstore.EPermission:
			h.end()
		}
	}
}

// Close stops the listening, ends the lookups under way and waits for
// them. It may be called more than once.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.cancel()
	r.rechecks.Wait()
}

// same reports whether a and b are the same notifier: equal values of a
// type that can be compared (a pointer, as services are); values of other
// types are never the same.
func same(a, b memstore.RevocationNotifier) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
