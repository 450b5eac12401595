// Package netlimit bounds the connections an HTTP server holds at once.
package netlimit

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// Listener is a net.Listener that holds at most max connections at once,
// for an http.Server whose ConnState is the Listener's ConnState.
//
// When a connection arrives with max already held, the held connection
// that has waited longest without a request in progress (accepted but
// with no whole request read yet, or idle between requests) is closed to
// make room: it is the cheapest to turn away, and this way a flood of
// connections that send nothing cannot keep out a client that sends its
// request at once. When every held connection has a request in progress,
// Accept waits for one of them to end or fall idle, and new connections
// wait in the system's queue of pending connections meanwhile. A request
// in progress is never cut short.
type Listener struct {
	net.Listener
	max int

	mu   sync.Mutex
	room *sync.Cond       // signalled when a connection leaves or falls idle, and on Close
	held map[*conn]uint64 // each held connection: when it fell idle (a tick), 0 when busy
	tick uint64           // orders the moments connections fell idle
	done bool             // Close was called
}

// New returns a Listener over l that holds at most n connections (at
// least 1).
func New(l net.Listener, n int) *Listener {
	ln := &Listener{Listener: l, max: max(n, 1), held: map[*conn]uint64{}}
	ln.room = sync.NewCond(&ln.mu)
	return ln
}

// Accept waits for room, then accepts a connection, closing the longest
// idle one if all max are held.
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
	// The idle connection found before may have become busy while Accept
	// waited: the new one then waits, as it would have in the queue.
	l.waitRoom()
	if l.done {
		l.mu.Unlock()
		c.Close()
		return nil, net.ErrClosed
	}
	var victim *conn
	if len(l.held) >= l.max {
		victim = l.longestIdle()
		delete(l.held, victim)
	}
	l.tick++
	l.held[lc] = l.tick // idle until the server reads a request
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return lc, nil
}

// waitRoom waits until a connection can be added, if need be by closing
// an idle one, or until Close. l.mu must be held.
func (l *Listener) waitRoom() {
	for !l.done && len(l.held) >= l.max && l.longestIdle() == nil {
		l.room.Wait()
	}
}

// longestIdle is the held connection idle the longest, nil when all are
// busy. l.mu must be held.
func (l *Listener) longestIdle() *conn {
	var oldest *conn
	for c, since := range l.held {
		if since != 0 && (oldest == nil || since < l.held[oldest]) {
			oldest = c
		}
	}
	return oldest
}

// ConnState records the state of a connection, for http.Server.ConnState:
// a connection is busy from the moment the server has read a request
// until it waits for the next one. An HTTPS server reports the TLS
// connection over the Listener's.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[lc]; !ok {
		return // closed, or closed to make room
	}
	switch s {
	case http.StateNew, http.StateIdle:
		l.tick++
		l.held[lc] = l.tick
		l.room.Broadcast()
	case http.StateActive, http.StateHijacked:
		// A hijacked connection is its handler's until closed.
		l.held[lc] = 0
	case http.StateClosed:
		delete(l.held, lc)
		l.room.Broadcast()
	}
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
