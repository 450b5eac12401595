package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/fairshare"
	"github.com/memstore/memstore/internal/heldcallers"
)

// The limits on open MCP sessions when HandlerConfig leaves them at 0.
// Each open session holds a server with its tools and a few goroutines,
// so they are bounded per memstore session and in all.
const (
	// DefaultIdleTimeout closes an MCP session that has sent no request
	// for this long. Clients that hold a session open between a user's
	// prompts start a new one when told the old one has ended (404).
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxSessionsPerSession is how many MCP sessions one memstore
	// session may hold open: a few clients, each reconnecting now and then.
	DefaultMaxSessionsPerSession = 16
	// DefaultMaxSessions is how many MCP sessions the server holds open:
	// each may hold a connection for its GET stream, so it stays well
	// below the server's connection cap.
	DefaultMaxSessions = 256
)

// DefaultMaxSessionsPerWorkspace is how many MCP sessions one workspace
// may hold open of a server's maxSessions when HandlerConfig leaves it at
// 0: a quarter, at least one, so that no workspace, however many sessions
// it has, can take the server's.
func DefaultMaxSessionsPerWorkspace(maxSessions int) int { return max(1, maxSessions/4) }

// openWait bounds how long a request that may open an MCP session waits,
// at a cap, for the requests opening others to end. Most of those open
// nothing (a client's probe, a body refused as too large), and their
// places are free as soon as they end: a client that sends its next
// request the moment it has an answer must not find them still taken.
const openWait = 5 * time.Second

// The reasons why no MCP session is opened or used.
var (
	errServerFull   = errors.New("server full")
	errOpening      = errors.New("too many being opened")
	errShareOpening = errors.New("too many of the workspace being opened")
	errShareFull    = errors.New("the workspace's share taken by others")
	errClosing      = errors.New("shutting down")
	errNotOpen      = errors.New("no such session")
	errNotYours     = errors.New("another memstore session's")
)

// sessions keeps the open MCP sessions of the HTTP handler: it caps them
// per memstore session, per workspace and in all, closes them when their
// credential stops working, and closes them all when the server shuts
// down.
//
// An MCP session is entered before the SDK makes it (with the ID the SDK
// will give it), so that every request naming it finds it here; its
// *mcp.ServerSession is attached when the SDK hands it its first request.
type sessions struct {
	perSession, perWorkspace, max int
	// held closes an MCP session when its caller's token stops working.
	held *heldcallers.Registry

	mu      sync.Mutex
	byID    map[string]*entry
	byOwner map[string][]*entry // by memstore session ID
	byShare map[string][]*entry // by workspace ID
	tick    uint64              // orders uses, for least recently used
	closing bool
	// changed is closed, and replaced, when an entry is closed, gets its
	// session or ends its opening request: what open waits for at a cap.
	changed chan struct{}
}

// An entry is one MCP session.
type entry struct {
	id      string
	caller  *memstore.Caller // of the token that opened it
	once    sync.Once        // attaches ss
	release func()           // ends its hold (sessions.held)

	// Guarded by sessions.mu.
	ss       *mcp.ServerSession // nil until the SDK hands it a request
	used     uint64
	requests int                     // requests in progress, but for GET streams
	opening  bool                    // the request that opened it is in progress
	streams  map[*getStream]struct{} // open GET streams, ended at shutdown
	expiry   *time.Timer             // at the caller's ExpiresAt
	closed   bool
}

// A getStream is an open GET stream's way to end it.
type getStream struct{ cancel context.CancelFunc }

func newSessions(perSession, perWorkspace, max int, held *heldcallers.Registry) *sessions {
	return &sessions{perSession: perSession, perWorkspace: perWorkspace, max: max, held: held,
		byID: map[string]*entry{}, byOwner: map[string][]*entry{}, byShare: map[string][]*entry{}, changed: make(chan struct{})}
}

// open enters a new MCP session of caller, with one request (the one
// without a session, which may open it) in progress: call opened when
// that request ends. At the memstore session's cap, its least recently
// used MCP session is closed to make room: clients seldom end their
// sessions (with DELETE), so the newest is the one in use; and as the cap
// is per memstore session, no one can close another's sessions this way.
// At the workspace's share, the memstore session's own least recently
// used is closed likewise, if it holds one, and the request is refused
// otherwise: a workspace's sessions cannot take more of the server's,
// and none can close another's. At the server's cap, the workspace
// holding the most gives up its least recently used one to a workspace
// holding at least two fewer (fairshare.Reclaim), so that workspaces that
// do not fill their shares share the server evenly. At a cap where sessions are still being opened,
// open first waits for those (at most openWait, or until ctx ends), then
// closes one in use or refuses.
func (s *sessions) open(ctx context.Context, caller *memstore.Caller) (*entry, error) {
	owner, share := caller.Session.ID, caller.WorkspaceID
	s.mu.Lock()
	defer s.mu.Unlock()
	var timeout <-chan time.Time
	for patient := true; ; {
		err := s.room(owner, share, patient)
		if err == nil {
			break
		}
		if err == errClosing || !patient || !s.opening(owner, share, err) {
			return nil, err
		}
		if timeout == nil {
			t := time.NewTimer(openWait)
			defer t.Stop()
			timeout = t.C
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			patient = false // a last try, closing what may be closed
		case <-ctx.Done():
			patient = false
		}
		s.mu.Lock()
	}
	s.tick++
	e := &entry{id: rand.Text(), caller: caller, used: s.tick, requests: 1, opening: true, streams: map[*getStream]struct{}{}}
	s.byID[e.id] = e
	s.byOwner[owner] = append(s.byOwner[owner], e)
	s.byShare[share] = append(s.byShare[share], e)
	if caller.ExpiresAt != nil {
		e.expiry = time.AfterFunc(time.Until(*caller.ExpiresAt), func() { s.close(e) })
	}
	e.release = s.held.Hold(context.Background(), caller, "", func() { s.close(e) })
	return e, nil
}

// room makes room for one more MCP session of the memstore session owner
// in workspace share, closing a session at a cap as open says; it says
// why there is none.
func (s *sessions) room(owner, share string, patient bool) error {
	if s.closing {
		return errClosing
	}
	// A share as large as the server's cap is none: the cap's rule
	// decides.
	if s.perSession < s.max && len(s.byOwner[owner]) >= s.perSession {
		if err := s.closeOne(s.byOwner[owner], patient, errOpening); err != nil {
			return err
		}
	}
	if s.perWorkspace < s.max && len(s.byShare[share]) >= s.perWorkspace {
		// Only owner's own may make room: the workspace's others belong
		// to other memstore sessions, whose agents it may not cut off.
		switch {
		case patient && opening(s.byShare[share]):
			return errShareOpening
		case leastRecentlyUsed(s.byOwner[owner]) != nil:
			s.closeLocked(leastRecentlyUsed(s.byOwner[owner]))
		case opening(s.byShare[share]):
			return errShareOpening
		default:
			return errShareFull
		}
	}
	if len(s.byID) >= s.max {
		held := make(map[string]int, len(s.byShare))
		for ws, entries := range s.byShare {
			held[ws] = len(entries)
		}
		from := fairshare.Reclaim(held, share)
		if from == "" {
			return errServerFull
		}
		if err := s.closeOne(s.byShare[from], false, errServerFull); err != nil {
			return err
		}
	}
	return nil
}

// closeOne closes the least recently used of entries, which are at a cap,
// or returns err, which says why there is no room. A patient caller would
// rather wait for those being opened, which most often open nothing, than
// close one in use.
func (s *sessions) closeOne(entries []*entry, patient bool, err error) error {
	if patient && opening(entries) {
		return err
	}
	victim := leastRecentlyUsed(entries)
	if victim == nil {
		return err
	}
	s.closeLocked(victim)
	return nil
}

// opening reports whether an MCP session is being opened that, when it
// ends or gets its session, may make the room that err says is missing:
// one of owner's for its cap, one of the workspace's for its share, any
// for the server's.
func (s *sessions) opening(owner, share string, err error) bool {
	switch err {
	case errOpening:
		return opening(s.byOwner[owner])
	case errShareOpening:
		return opening(s.byShare[share])
	case errShareFull:
		return false // the workspace's others are open, and not owner's to close
	}
	for _, e := range s.byID {
		if e.opening {
			return true
		}
	}
	return false
}

// opening reports whether one of entries is being opened.
func opening(entries []*entry) bool {
	for _, e := range entries {
		if e.opening {
			return true
		}
	}
	return false
}

// signal wakes the requests waiting in open.
func (s *sessions) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// leastRecentlyUsed is the MCP session of entries to close first: the
// least recently used of those without a request in progress, else of all
// those already made; nil if every one is still being opened.
func leastRecentlyUsed(entries []*entry) *entry {
	var idle, any *entry
	for _, e := range entries {
		if e.ss == nil {
			continue
		}
		if any == nil || e.used < any.used {
			any = e
		}
		if e.requests == 0 && (idle == nil || e.used < idle.used) {
			idle = e
		}
	}
	if idle != nil {
		return idle
	}
	return any
}

// attach gives e the session the SDK made for it; a session whose entry
// was closed meanwhile is closed at once. It is forgotten when it ends,
// however it ends (DELETE, idle timeout, Close).
func (s *sessions) attach(e *entry, ss *mcp.ServerSession) {
	e.once.Do(func() {
		s.mu.Lock()
		closed := e.closed
		e.ss = ss
		s.signal()
		s.mu.Unlock()
		if closed {
			go ss.Close()
			return
		}
		go func() {
			ss.Wait()
			s.close(e)
		}()
	})
}

// use finds the open MCP session id for a request of caller, and counts
// the request in progress until done; a GET stream is ended by shutdown
// instead, and is refused once it has begun.
func (s *sessions) use(id string, caller *memstore.Caller, stream *getStream) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	switch {
	case e == nil:
		return nil, errNotOpen
	case e.caller.Session.ID != caller.Session.ID:
		return nil, errNotYours
	case stream != nil && s.closing:
		return nil, errClosing
	}
	s.tick++
	e.used = s.tick
	if stream != nil {
		e.streams[stream] = struct{}{}
	} else {
		e.requests++
	}
	return e, nil
}

// protocol is the revision of MCP that e's client asked for when it
// initialized the session, "" before.
func (s *sessions) protocol(e *entry) string {
	s.mu.Lock()
	ss := e.ss
	s.mu.Unlock()
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// opened ends the request counted by open. The SDK makes a session for
// every such request but keeps it only if the request initialized it:
// any other entry is forgotten now rather than when the SDK's closing of
// its session is noticed (see attach), and the requests waiting in open
// are woken, as the client that made the request may already have sent
// its next one.
func (s *sessions) opened(e *entry) {
	s.mu.Lock()
	ss := e.ss
	s.mu.Unlock()
	kept := ss != nil && ss.InitializeParams() != nil // not under s.mu: it takes the SDK's lock
	s.mu.Lock()
	defer s.mu.Unlock()
	e.opening = false
	s.signal()
	s.end(e, kept)
}

// done ends a request counted by use. A session the SDK closes is
// forgotten when it ends (see attach).
func (s *sessions) done(e *entry, stream *getStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stream != nil {
		delete(e.streams, stream)
		return
	}
	s.end(e, e.ss != nil)
}

// end ends one request of e; an entry without a session to keep, once
// its opening request has ended, is forgotten. Once the server is
// shutting down, a session is closed when its last request ends.
func (s *sessions) end(e *entry, kept bool) {
	e.requests--
	if (!kept && !e.opening) || (e.requests == 0 && s.closing) {
		s.closeLocked(e)
	}
}

// close closes e's session and forgets it.
func (s *sessions) close(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked(e)
}

func (s *sessions) closeLocked(e *entry) {
	if e.closed {
		return
	}
	e.closed = true
	s.signal()
	if e.expiry != nil {
		e.expiry.Stop()
	}
	e.release()
	delete(s.byID, e.id)
	forget(s.byOwner, e.caller.Session.ID, e)
	forget(s.byShare, e.caller.WorkspaceID, e)
	if e.ss != nil {
		// Close waits for the session's requests in progress to end.
		go e.ss.Close()
	}
}

// forget removes e from m[key].
func forget(m map[string][]*entry, key string, e *entry) {
	rest := m[key][:0]
	for _, o := range m[key] {
		if o != e {
			rest = append(rest, o)
		}
	}
	if len(rest) == 0 {
		delete(m, key)
	} else {
		m[key] = rest
	}
}

// shutdown refuses new sessions and streams, ends the open GET streams,
// and closes every session now or, if it has requests in progress, when
// the last ends: those get their answers.
func (s *sessions) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for _, e := range s.byID {
		for st := range e.streams {
			st.cancel()
		}
		if e.requests == 0 {
			s.closeLocked(e)
		}
	}
}

// count is the number of MCP sessions open: those the SDK has made, not
// the requests in progress that may yet open one.
func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.byID {
		if e.ss != nil {
			n++
		}
	}
	return n
}
