package memstore

import (
	"sync"
	"time"
)

// A Revocation says which credential has just stopped working, so that
// whatever holds on to an authenticated caller (a cache of
// authentications, an open MCP session) can let go of it at once.
type Revocation struct {
	APIKeyID  string // an API key was revoked
	SessionID string // a session was archived: every one of its tokens stops
	TokenID   string // one session token was revoked
}

// Stops reports whether r ends what c, an authenticated caller, may do.
func (r Revocation) Stops(c *Caller) bool {
	switch {
	case c == nil:
		return false
	case r.APIKeyID != "":
		return c.Session == nil && c.Actor.ID == r.APIKeyID
	case r.TokenID != "":
		return c.TokenID == r.TokenID
	case r.SessionID != "":
		return c.Session != nil && c.Session.ID == r.SessionID
	}
	return false
}

// Expired reports whether c's credential has expired at now.
func (c *Caller) Expired(now time.Time) bool {
	return c.ExpiresAt != nil && !now.Before(*c.ExpiresAt)
}

// RevocationNotifier is offered by backends that can tell the moment a
// credential stops working: all tell of the revocations made in their
// process, and a backend that several processes share may tell of the
// others' too (PostgreSQL does). Where it does not, another process
// learns of a revocation only by authenticating again.
type RevocationNotifier interface {
	// NotifyRevocations calls f after each revocation made through this
	// backend has been committed, until stop is called. f must not block.
	NotifyRevocations(f func(Revocation)) (stop func())
}

// Revocations is a RevocationNotifier for backends to embed: Revoked
// tells every listener.
type Revocations struct {
	mu   sync.Mutex
	next int
	fs   map[int]func(Revocation)
}

// NotifyRevocations implements RevocationNotifier.
func (rs *Revocations) NotifyRevocations(f func(Revocation)) (stop func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.fs == nil {
		rs.fs = make(map[int]func(Revocation))
	}
	id := rs.next
	rs.next++
	rs.fs[id] = f
	return func() {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		delete(rs.fs, id)
	}
}

// Revoked tells every listener of r.
func (rs *Revocations) Revoked(r Revocation) {
	rs.mu.Lock()
	fs := make([]func(Revocation), 0, len(rs.fs))
	for _, f := range rs.fs {
		fs = append(fs, f)
	}
	rs.mu.Unlock()
	for _, f := range fs {
		f(r)
	}
}
