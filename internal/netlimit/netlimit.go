// Package netlimit bounds the connections an HTTP server holds at once,
// and how slowly their requests' bodies may come.
package netlimit

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Listener is a net.Listener that holds at most max connections at once,
// for an http.Server set up by Serve.
//
// When a connection arrives with max already held, a held connection that
// waits on its client is closed to make room: first the one idle the
// longest (accepted but with no whole request read yet, or idle between
// requests), which is the cheapest to turn away; else the one whose
// request's body has been awaited the longest (a request whose headers
// came but whose body trickles in, or never comes). This way neither a
// flood of connections that send nothing nor one of requests that send
// their bodies a byte at a time can keep out a client that sends its
// request at once. When every held connection has a request in progress
// that waits on no body, Accept waits for one of them to end or fall
// idle, and new connections wait in the system's queue of pending
// connections meanwhile. A request whose body has come is never cut
// short.
type Listener struct {
	net.Listener
	max int

	mu   sync.Mutex
	room *sync.Cond       // signalled when a connection leaves, falls idle or waits for a body, and on Close
	held map[*conn]uint64 // each held connection: when it fell idle (a tick), 0 when busy
	done bool             // Close was called

	tick atomic.Uint64 // orders the moments connections began to wait on their clients
}

// New returns a Listener over l that holds at most n connections (at
// least 1).
func New(l net.Listener, n int) *Listener {
	ln := &Listener{Listener: l, max: max(n, 1), held: map[*conn]uint64{}}
	ln.room = sync.NewCond(&ln.mu)
	return ln
}

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
	lc := &conn{Conn: c, l: l}
	l.mu.Lock()
	// The connection found before may have become busy while Accept
	// waited: the new one then waits, as it would have in the queue.
	l.waitRoom()
	if l.done {
		l.mu.Unlock()
		c.Close()
		return nil, net.ErrClosed
	}
	var victim *conn
	if len(l.held) >= l.max {
		victim = l.waiting()
		delete(l.held, victim)
	}
	l.held[lc] = l.tick.Add(1) // idle until the server reads a request
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return lc, nil
}

// waitRoom waits until a connection can be added, if need be by closing
// one that waits on its client, or until Close. l.mu must be held.
func (l *Listener) waitRoom() {
	for !l.done && len(l.held) >= l.max && l.waiting() == nil {
		l.room.Wait()
	}
}

// waiting is the held connection to close to make room: the one idle the
// longest, else the one that has waited the longest for its request's
// body; nil when none waits on its client. l.mu must be held.
func (l *Listener) waiting() *conn {
	var idle, body *conn
	var bodySince uint64
	for c, since := range l.held {
		if since != 0 {
			if idle == nil || since < l.held[idle] {
				idle = c
			}
			continue
		}
		if s := c.bodySince(); s != 0 && (body == nil || s < bodySince) {
			body, bodySince = c, s
		}
	}
	if idle != nil {
		return idle
	}
	return body
}

// ConnState records the state of a connection, for http.Server.ConnState:
// a connection is busy from the moment the server has read a request
// until it waits for the next one. An HTTPS server reports the TLS
// connection over the Listener's.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	lc := l.own(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[lc]; !ok {
		return // closed, or closed to make room
	}
	lc.body.Store(false) // a request's body is awaited once Serve's handler says so
	switch s {
	case http.StateNew, http.StateIdle:
		l.held[lc] = l.tick.Add(1)
		l.room.Broadcast()
	case http.StateActive, http.StateHijacked:
		// A hijacked connection is its handler's until closed.
		l.held[lc] = 0
	case http.StateClosed:
		delete(l.held, lc)
		l.room.Broadcast()
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
	l *Listener

	// body is set while the request in progress still awaits its body
	// from the client: from when Serve's handler sees a request with a
	// body (HTTP/1) until the body has come, or the request ends.
	body atomic.Bool
	// reading is when the read the connection is blocked in began (a
	// tick), 0 when none is.
	reading atomic.Uint64
}

func (c *conn) Read(p []byte) (int, error) {
	c.reading.Store(c.l.tick.Add(1))
	if c.body.Load() {
		c.l.wake() // it may now make room
	}
	n, err := c.Conn.Read(p)
	c.reading.Store(0)
	return n, err
}

// bodySince is when c began to wait for its request's body, as the read
// it is blocked in began; 0 when it waits for none.
func (c *conn) bodySince() uint64 {
	if !c.body.Load() {
		return 0
	}
	return c.reading.Load()
}

// awaitBody records whether c's request in progress awaits its body.
func (c *conn) awaitBody(yes bool) {
	c.body.Store(yes)
	if yes && c.reading.Load() != 0 {
		c.l.wake()
	}
}

// wake wakes an Accept that waits for room.
func (l *Listener) wake() {
	l.mu.Lock()
	l.room.Broadcast()
	l.mu.Unlock()
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	if _, ok := c.l.held[c]; ok {
		delete(c.l.held, c)
		c.l.room.Broadcast()
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// connKey is the request context's key of the connection it came on.
type connKey struct{}

// connContext is http.Server.ConnContext for Serve.
func (l *Listener) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := l.own(c); lc != nil {
		ctx = context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}
