package netlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// The pace a request body must keep on a server set up by Serve. The time
// counted is the time its handler waits for the body, so that a handler
// that works before reading it costs the client nothing.
const (
	// MinBodyRate is the slowest a request body may come once BodyGrace
	// has passed, in bytes per second: a client on the slowest link
	// sends far more, one that sends a byte now and then far less.
	MinBodyRate = 1024
	// BodyGrace is how long a body may take before MinBodyRate applies:
	// time for its first bytes to cross the network.
	BodyGrace = 5 * time.Second
	// UnauthenticatedBodyTimeout bounds the whole wait for the body of a
	// request that no credential vouches for (see Authenticated), such as
	// a sign-in form, which is a few hundred bytes: anyone can send one,
	// so it may not hold a connection long.
	UnauthenticatedBodyTimeout = 10 * time.Second
)

// ErrSlowBody is the error of a read of a request body that did not come
// at the pace Serve asks.
var ErrSlowBody = fmt.Errorf("the request body came too slowly: the server waits %s for its first bytes, then takes no fewer than %d bytes a second, "+
	"and waits %s in all for the body of a request without a credential; send the body without pauses", BodyGrace, MinBodyRate, UnauthenticatedBodyTimeout)

// Serve sets srv up to serve on l: l learns which connections have a
// request in progress, and which of those wait for their request's body
// (without which the cap would take them for idle, and close one
// mid-request to make room, or for busy, and let slow bodies keep every
// other client out); and each request body must come at the pace of
// MinBodyRate, BodyGrace and UnauthenticatedBodyTimeout, else its read
// fails with ErrSlowBody and the connection ends. srv.ReadTimeout, if
// any, still bounds a request in all. Call Serve before serving, after
// setting srv's Handler and ReadTimeout.
func (l *Listener) Serve(srv *http.Server) {
	srv.ConnState = l.ConnState
	if prev := srv.ConnContext; prev != nil {
		srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			return l.connContext(prev(ctx, c), c)
		}
	} else {
		srv.ConnContext = l.connContext
	}
	srv.Handler = paced(srv.Handler, srv.ReadTimeout)
}

// paced serves h with every request body paced.
func paced(h http.Handler, readTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		b := &body{ReadCloser: r.Body, rc: http.NewResponseController(w), start: time.Now(), length: r.ContentLength, readTimeout: readTimeout}
		if c, _ := r.Context().Value(connKey{}).(*conn); c != nil && r.ProtoMajor == 1 {
			// An HTTP/2 connection carries other requests: it is never
			// closed for one of them.
			b.c = c
			c.awaitBody(true)
		}
		// Reads that are not the handler's (net/http's, of a body the
		// handler left) are bounded too.
		b.rc.SetReadDeadline(b.start.Add(BodyGrace))
		// A copy: net/http decides what to do with a body the handler
		// left by its own type.
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		h.ServeHTTP(w, r)
	})
}

// bodyKey is the request context's key of its paced body.
type bodyKey struct{}

// Authenticated tells the server set up by Serve that a credential
// vouches for r: its body may then take as long as the server's
// ReadTimeout, at MinBodyRate or more, rather than
// UnauthenticatedBodyTimeout. Call it once the credential is checked,
// before reading the body.
func Authenticated(r *http.Request) {
	if b, _ := r.Context().Value(bodyKey{}).(*body); b != nil {
		b.authenticated.Store(true)
	}
}

// body is a request body read at a pace.
type body struct {
	io.ReadCloser
	rc            *http.ResponseController
	c             *conn // nil for HTTP/2
	start         time.Time
	length        int64 // -1 if unknown
	readTimeout   time.Duration
	authenticated atomic.Bool

	// The handler's reads.
	received int64
	waited   time.Duration // blocked in reads
	done     bool          // read to its end, or failed
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	now := time.Now()
	deadline, ok := b.deadline(now)
	if !ok {
		b.end()
		b.rc.SetReadDeadline(now) // what net/http reads next fails too: the connection ends
		return 0, ErrSlowBody
	}
	b.rc.SetReadDeadline(deadline)
	n, err := b.ReadCloser.Read(p)
	b.received += int64(n)
	b.waited += time.Since(now)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.end()
		return n, ErrSlowBody
	case err != nil || b.received == b.length:
		// Come in full. net/http lifts the deadline once it reads past
		// the body's end, to watch for the client leaving.
		b.end()
	}
	return n, err
}

// deadline is when the next read of the body must end: when the time
// waited for it would outrun what it has received at MinBodyRate after
// BodyGrace, or its bound in all comes; ok is false when that is past.
func (b *body) deadline(now time.Time) (time.Time, bool) {
	allowed := BodyGrace + time.Duration(b.received)*time.Second/MinBodyRate - b.waited
	d := now.Add(allowed)
	limit := UnauthenticatedBodyTimeout
	if b.authenticated.Load() {
		limit = b.readTimeout
	}
	if limit > 0 {
		if end := b.start.Add(limit); end.Before(d) {
			d = end
		}
	}
	return d, d.After(now)
}

// end records that the handler waits for the body no more.
func (b *body) end() {
	b.done = true
	if b.c != nil {
		b.c.awaitBody(false)
	}
}
