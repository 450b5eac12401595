package memstore

import (
	"context"
	"sync"
	"time"
)

// A Revocation says which credential has just stopped working, so that
// whatever holds on to an authenticated caller (a cache of
// authentications, an open MCP session) can let go of it at once.
//
// A notice with Refresh set stops nothing: a session's attachments (or
// its ConversationKey) changed, and whatever holds its callers must read
// them again. It goes
// the revocations' way so that every process sharing the database hears
// of it as soon as of a revocation, with no version to compare on each
// request; a process that misses it (a lost notice) refreshes when its
// cached authentication expires, as for a revocation.
//
// A notice with Unheard set stops nothing either: this process may have
// missed others' notices (its line to them was down), so every caller it
// holds must be read again, whatever it is.
type Revocation struct {
	APIKeyID  string // an API key was revoked
	SessionID string // a session was archived or deleted: every one of its tokens stops
	TokenID   string // one session token was revoked
	Refresh   bool   `json:",omitempty"` // SessionID's attachments or ConversationKey changed; its tokens still work
	Unheard   bool   `json:",omitempty"` // notices may have been missed: read every caller again
}

// Stops reports whether r ends what c, an authenticated caller, may do.
func (r Revocation) Stops(c *Caller) bool {
	switch {
	case c == nil, r.Refresh, r.Unheard:
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

// Stale reports whether c, an authenticated caller, must be read again
// after r: it is stopped, its session's attachments changed, or notices
// may have been missed.
func (r Revocation) Stale(c *Caller) bool {
	return r.Stops(c) || r.Unheard && c != nil ||
		r.Refresh && c != nil && c.Session != nil && c.Session.ID == r.SessionID
}

// RecheckTimeout bounds one lookup of a held caller's credential when it
// is read again (CallerChecker), so that one slow lookup does not hold up
// the others' for long.
const RecheckTimeout = 10 * time.Second

// A CallerChecker reads an authenticated caller's credential again, for
// what holds a caller for long (a stream) when revocations may have gone
// unheard (Revocation.Unheard): one lookup per caller, rather than a wait
// for the caller to go.
type CallerChecker interface {
	// CheckCaller returns EUnauthenticated when c's session token no
	// longer authenticates (revoked, expired, deleted, or its session
	// archived or deleted) or c's API key no longer does (revoked or
	// gone), another error when it cannot tell, and nil otherwise, and
	// for callers of other credentials.
	CheckCaller(ctx context.Context, c *Caller) error
}

// RevocationNotifier is offered by backends that can tell the moment a
// credential stops working: all tell of the revocations made in their
// process, and a backend that several processes share may tell of the
// others' too (PostgreSQL by its notices, SQLite by the notes each
// revocation leaves in the file). Where it does not, another process
// learns of a revocation only by authenticating again.
type RevocationNotifier interface {
	// NotifyRevocations calls f after each revocation made through this
	// backend has been committed, until stop is called. f must not block.
	NotifyRevocations(f func(Revocation)) (stop func())
}

// Revocations is a RevocationNotifier for backends to embed: Revoked
// tells every listener.
type Revocations struct{ l listeners[Revocation] }

// NotifyRevocations implements RevocationNotifier.
func (rs *Revocations) NotifyRevocations(f func(Revocation)) (stop func()) { return rs.l.add(f) }

// Revoked tells every listener of r.
func (rs *Revocations) Revoked(r Revocation) { rs.l.tell(r) }

// listeners are the functions that hear of something, each until it
// stops: the one registry of RevocationNotifier and EventNotifier.
type listeners[T any] struct {
	mu   sync.Mutex
	next int
	fs   map[int]func(T)
}

// add registers f until stop is called.
func (ls *listeners[T]) add(f func(T)) (stop func()) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.fs == nil {
		ls.fs = make(map[int]func(T))
	}
	id := ls.next
	ls.next++
	ls.fs[id] = f
	return func() {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		delete(ls.fs, id)
	}
}

// tell calls every listener with v, outside the lock, so that a listener
// may stop.
func (ls *listeners[T]) tell(v T) {
	ls.mu.Lock()
	fs := make([]func(T), 0, len(ls.fs))
	for _, f := range ls.fs {
		fs = append(fs, f)
	}
	ls.mu.Unlock()
	for _, f := range fs {
		f(v)
	}
}
