package netlimit

import (
	"sync"
	"sync/atomic"
	"time"
)

// The pace at which a client must take what is written to it, on every
// connection of a Listener.
const (
	// WriteGrace is how long a write to a connection may be blocked, its
	// client taking nothing, before the connection counts as waiting on
	// its client: at the cap, it may then be closed to make room.
	WriteGrace = time.Second
	// WriteStallTimeout ends a connection whose client takes nothing of
	// what is written to it for that long: each writeChunk bytes written
	// must be taken within it. An answer that its client reads, however
	// slowly, goes on (within the server's own write timeout), and so
	// does a stream that writes now and then, as each write is bounded
	// on its own.
	WriteStallTimeout = 10 * time.Second
)

// writeChunk is the most written at once under one WriteStallTimeout, so
// that a large answer is progress that can be seen: a client on the
// slowest link takes it in a fraction of the time.
const writeChunk = 32 << 10

// writes is a connection's writes: each within WriteStallTimeout as well
// as within the write deadline the server sets, if any.
type writes struct {
	wmu sync.Mutex // one write at a time, so that its progress is its own

	// writeSince is when the write the connection is blocked in began
	// (on the Listener's clock), 0 when none is.
	writeSince atomic.Int64

	dmu      sync.Mutex
	deadline time.Time // the server's write deadline, zero for none
	stallEnd time.Time // the bound of the write in progress, or of the last
}

func (c *conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var n int
	for len(p) > 0 {
		chunk := p[:min(len(p), writeChunk)]
		now := time.Now()
		c.writeSince.Store(c.l.at(now))
		if err := c.armWrite(now.Add(WriteStallTimeout)); err != nil {
			c.writeSince.Store(0)
			return n, err
		}
		m, err := c.Conn.Write(chunk)
		c.writeSince.Store(0)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// armWrite sets the bound of the write about to begin, and applies the
// earlier of it and the server's deadline. Between writes the bound is
// left as it is: it bounds no write, and the next write sets its own.
func (c *conn) armWrite(end time.Time) error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.stallEnd = end
	return c.Conn.SetWriteDeadline(earliest(c.deadline, end))
}

// SetWriteDeadline sets the server's write deadline, which bounds every
// write besides WriteStallTimeout.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.deadline = t
	if c.writeSince.Load() != 0 {
		t = earliest(t, c.stallEnd) // set from another goroutine while a write is blocked
	}
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets the read and write deadlines.
func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// earliest is the earlier of two deadlines, zero standing for none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}
