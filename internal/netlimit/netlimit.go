// Package netlimit bounds the connections an HTTP server holds at once,
// how slowly their requests' bodies may come, and how slowly their
// clients may take the answers.
package netlimit

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// FirstRequestGrace is how long a new connection is given for the server
// to read a request on it, before it counts as idle: it is never closed
// to make room meanwhile, nor, while one is, a request in progress, so
// that in a flood of connections each may still say what it wants, and a
// flood of connections that send nothing cuts nothing off. Such a flood
// is accepted at max connections per FirstRequestGrace.
const FirstRequestGrace = time.Second

// pollInterval is how often an Accept waiting for room looks again
// for a connection to close: one becomes closable as time passes (a
// write blocked for WriteGrace, a new connection past its
// FirstRequestGrace), which nothing signals.
const pollInterval = 100 * time.Millisecond

// Listener is a net.Listener that holds at most max connections at once,
// for an http.Server set up by Serve.
//
// When a connection arrives with max already held, a held connection that
// waits on its client is closed to make room, so that neither a flood of
// connections that send nothing, nor one of requests that trickle in, nor
// one of clients that do not read their answers can keep out a client
// that sends its request at once. The one closed is:
//
//   - the one idle the longest: idle between requests, or with no
//     request read yet past its FirstRequestGrace; the cheapest to turn
//     away;
//   - else, unless a connection is still in its FirstRequestGrace, the
//     one that has waited the longest on its client: each of its
//     requests in progress waits for its body, or for a shared slot
//     (Waiting), or has its handler blocked writing an answer its client
//     does not take (for WriteGrace); or the connection is blocked
//     writing so; or it has had no request in its handler for WriteGrace
//     while the server still sends on it (answers made, not taken).
//
// Otherwise Accept waits for a connection to end or to start waiting, and
// new connections wait in the system's queue of pending connections
// meanwhile: a request in progress that waits on nothing of its client's
// is never cut off. This holds for HTTP/1 and HTTP/2 alike: an HTTP/2
// connection waits on its client when every stream in progress on it
// does.
type Listener struct {
	net.Listener
	max   int
	epoch time.Time // the origin of the connections' clocks (see now)

	mu   sync.Mutex
	room *sync.Cond         // signalled when a connection leaves or starts waiting on its client, and on Close
	held map[*conn]struct{} // the connections held
	done bool               // Close was called

	waiters atomic.Int32 // Accepts waiting for room: only then are changes signalled
}

// New returns a Listener over l that holds at most n connections (at
// least 1).
func New(l net.Listener, n int) *Listener {
	ln := &Listener{Listener: l, max: max(n, 1), epoch: time.Now(), held: map[*conn]struct{}{}}
	ln.room = sync.NewCond(&ln.mu)
	return ln
}

// now is the Listener's clock: monotonic nanoseconds, never 0, which
// stands for "not".
func (l *Listener) now() int64 { return l.at(time.Now()) }

// at is t on the Listener's clock.
func (l *Listener) at(t time.Time) int64 { return int64(t.Sub(l.epoch)) + 1 }

// Accept waits for room, then accepts a connection, closing one that
// waits on its client if all max are held.
func (l *Listener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.waitRoom()
	done := l.done
	l.mu.Unlock()
	if done {
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	now := l.now()
	lc := &conn{Conn: c, l: l, accepted: now}
	lc.idleSince.Store(now) // idle until the server reads a request
	l.mu.Lock()
	// The connection found before may have become busy while Accept
	// waited: the new one then waits, as it would have in the queue.
	var victim *conn
	for !l.done && len(l.held) >= l.max {
		if victim = l.victim(); victim != nil {
			delete(l.held, victim)
			break
		}
		l.wait()
	}
	done = l.done
	if !done {
		l.held[lc] = struct{}{}
	}
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	if done {
		c.Close()
		return nil, net.ErrClosed
	}
	return lc, nil
}

// waitRoom waits until a connection can be added, if need be by closing
// one that waits on its client, or until Close. l.mu must be held.
func (l *Listener) waitRoom() {
	for !l.done && len(l.held) >= l.max && l.victim() == nil {
		l.wait()
	}
}

// wait waits for a change that may make room, or for pollInterval.
// l.mu must be held.
func (l *Listener) wait() {
	l.waiters.Add(1)
	t := time.AfterFunc(pollInterval, l.signal)
	l.room.Wait()
	t.Stop()
	l.waiters.Add(-1)
}

// The classes of held connections that may be closed to make room, the
// first closed first.
const (
	notWaiting = iota
	idle
	waitingOnClient
	newConn // within its FirstRequestGrace: never closed
)

// victim is the held connection to close to make room (see Listener),
// nil when none may be closed now. l.mu must be held.
func (l *Listener) victim() *conn {
	now := l.now()
	var best *conn
	var bestClass int
	var bestSince int64
	young := false
	for c := range l.held {
		class, since := c.waiting(now)
		switch {
		case class == newConn:
			young = true
		case class == notWaiting:
		case best == nil || class < bestClass || class == bestClass && since < bestSince:
			best, bestClass, bestSince = c, class, since
		}
	}
	if young && bestClass != idle {
		// A new connection, its request not read yet, soon proves idle
		// (past its FirstRequestGrace) or sends one: wait for that,
		// rather than close a request in progress, so that a flood of
		// connections that send nothing cannot cut those off.
		return nil
	}
	return best
}

// signal wakes the Accepts that wait for room.
func (l *Listener) signal() {
	l.mu.Lock()
	l.room.Broadcast()
	l.mu.Unlock()
}

// wake wakes the Accepts that wait for room, if any: a connection may
// now be closed to make room. Without one waiting it costs nothing.
func (l *Listener) wake() {
	if l.waiters.Load() > 0 {
		l.signal()
	}
}

// ConnState records the state of a connection, for http.Server.ConnState:
// a connection is busy from the moment the server has read a request
// (for HTTP/2, opened a stream) until it waits for the next one. An HTTPS
// server reports the TLS connection over the Listener's.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	lc := l.own(c)
	if lc == nil {
		return
	}
	switch s {
	case http.StateIdle:
		lc.idleSince.Store(l.now())
		l.wake()
	case http.StateActive:
		lc.idleSince.Store(0)
		lc.quiet(l.now())
	case http.StateHijacked:
		// A hijacked connection is its handler's until closed.
		lc.hijacked.Store(true)
		lc.idleSince.Store(0)
	case http.StateClosed:
		l.remove(lc)
	}
}

// own is c as the Listener's connection, unwrapping TLS; nil for another
// listener's.
func (l *Listener) own(c net.Conn) *conn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*conn)
	if !ok || lc.l != l {
		return nil
	}
	return lc
}

// remove forgets c, making room.
func (l *Listener) remove(c *conn) {
	l.mu.Lock()
	if _, ok := l.held[c]; ok {
		delete(l.held, c)
		l.room.Broadcast()
	}
	l.mu.Unlock()
}

// Held is the number of connections held now.
func (l *Listener) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// Close closes the listener; an Accept waiting for room returns at once.
func (l *Listener) Close() error {
	l.mu.Lock()
	l.done = true
	l.room.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// conn is a held connection: closing it makes room.
type conn struct {
	net.Conn
	l        *Listener
	accepted int64 // when, on l's clock

	idleSince atomic.Int64 // when it fell idle, 0 while busy
	served    atomic.Bool  // a request has begun on it
	hijacked  atomic.Bool

	mu         sync.Mutex
	reqs       []*request // its requests in progress, in their handlers
	quietSince int64      // when it last was busy with no request in progress

	writes // its writes and their deadlines (write.go)
}

// waiting is c's class among the connections that may be closed to make
// room, and since when it has been in it; notWaiting when it may not be
// closed.
func (c *conn) waiting(now int64) (class int, since int64) {
	if c.hijacked.Load() {
		return notWaiting, 0
	}
	if s := c.idleSince.Load(); s != 0 {
		if !c.served.Load() && now-c.accepted < int64(FirstRequestGrace) {
			return newConn, s
		}
		return idle, s
	}
	// Blocked writing what its client does not take.
	if s := c.writeSince.Load(); s != 0 && now-s >= int64(WriteGrace) {
		since = s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		// Busy with no request in its handler, once one has run: what
		// is left is the server's sending answers already made (HTTP/2
		// streams that their client does not let through), or reading
		// what a handler left of a body.
		if s := c.quietSince; s != 0 && c.served.Load() && now-s >= int64(WriteGrace) && (since == 0 || s < since) {
			since = s
		}
	} else if s, ok := c.allWaiting(now); ok && (since == 0 || s < since) {
		since = s
	}
	if since == 0 {
		return notWaiting, 0
	}
	return waitingOnClient, since
}

// allWaiting reports whether every request in progress on c waits on its
// client or for a shared slot, and since when all have. c.mu must be
// held.
func (c *conn) allWaiting(now int64) (since int64, ok bool) {
	for _, r := range c.reqs {
		s, ok := r.waiting(now)
		if !ok {
			return 0, false
		}
		since = max(since, s)
	}
	return since, true
}

// quiet notes that c is busy with no request in progress since now, if
// it has none.
func (c *conn) quiet(now int64) {
	c.mu.Lock()
	if len(c.reqs) == 0 {
		c.quietSince = now
	}
	c.mu.Unlock()
}

// begin records a request in progress on c.
func (c *conn) begin(r *request) {
	c.served.Store(true)
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
}

// end records that r's handler has returned.
func (c *conn) end(r *request) {
	c.mu.Lock()
	for i, o := range c.reqs {
		if o == r {
			c.reqs = append(c.reqs[:i], c.reqs[i+1:]...)
			break
		}
	}
	if len(c.reqs) == 0 {
		c.quietSince = c.l.now()
	}
	c.mu.Unlock()
}

func (c *conn) Close() error {
	c.l.remove(c)
	return c.Conn.Close()
}

// connKey is the request context's key of the connection it came on.
type connKey struct{}

// connContext is http.Server.ConnContext for Serve. HTTP/2 requests'
// contexts derive from their connection's too.
func (l *Listener) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := l.own(c); lc != nil {
		ctx = context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}
