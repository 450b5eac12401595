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
// request in progress, and which of those wait on their clients (without
// which the cap would take them for idle, and close one mid-request to
// make room, or for busy, and let slow clients keep every other out);
// and each request body must come at the pace of MinBodyRate, BodyGrace
// and UnauthenticatedBodyTimeout, else its read fails with ErrSlowBody
// and the connection ends. srv.ReadTimeout, if any, still bounds a
// request in all. Call Serve before serving, after setting srv's Handler
// and ReadTimeout.
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

// paced serves h with every request recorded on its connection while its
// handler runs, and every request body paced.
func paced(h http.Handler, readTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &request{}
		if c, _ := r.Context().Value(connKey{}).(*conn); c != nil {
			req.c = c
			c.begin(req)
			defer c.end(req)
			if r.ProtoMajor >= 2 {
				// An HTTP/2 answer may wait on its client's flow control
				// with the connection's writes flowing: its handler's
				// writes are watched. HTTP/1 writes go to the connection,
				// which watches them.
				w = &writer{ResponseWriter: w, r: req}
			}
		}
		r = r.WithContext(context.WithValue(r.Context(), requestKey{}, req))
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		b := &body{ReadCloser: r.Body, r: req, rc: http.NewResponseController(w), start: time.Now(), length: r.ContentLength, readTimeout: readTimeout}
		req.body = b
		// Reads that are not the handler's (net/http's, of a body the
		// handler left) are bounded too.
		b.rc.SetReadDeadline(b.start.Add(BodyGrace))
		// A copy: net/http decides what to do with a body the handler
		// left by its own type.
		r.Body = b
		h.ServeHTTP(w, r)
	})
}

// requestKey is the request context's key of its *request.
type requestKey struct{}

// A request is one in its handler on a server set up by Serve.
type request struct {
	c    *conn // nil on another listener's connection
	body *body // nil without one

	// Since when (on the Listener's clock) it has waited, 0 when not:
	// for its body (its handler blocked reading it), for a shared slot
	// (Waiting), and for its client to take an answer (its handler
	// blocked writing, HTTP/2 only).
	bodySince, slotSince, writeSince atomic.Int64
}

// waiting reports whether r waits on its client or for a shared slot,
// and since when.
func (r *request) waiting(now int64) (since int64, ok bool) {
	for _, s := range []int64{r.bodySince.Load(), r.slotSince.Load()} {
		if s != 0 && (since == 0 || s < since) {
			since = s
		}
	}
	if s := r.writeSince.Load(); s != 0 && now-s >= int64(WriteGrace) && (since == 0 || s < since) {
		since = s
	}
	return since, since != 0
}

// mark records in at that r begins to wait, and wakes an Accept waiting
// for room, which it may now make. at.Store(0) records the end of the
// wait.
func (r *request) mark(at *atomic.Int64) {
	if r.c != nil {
		at.Store(r.c.l.now())
		r.c.l.wake()
	}
}

// Waiting records that the request of ctx, on a server set up by Serve,
// waits its turn for something the whole server shares, such as a slot
// to hash a password, rather than doing its own work: at the cap, its
// connection may then be closed to make room, as one waiting on its
// client may, which ends the wait (ctx ends). It returns the function to
// call when the wait ends. Without such a request it does nothing.
func Waiting(ctx context.Context) (end func()) {
	r, _ := ctx.Value(requestKey{}).(*request)
	if r == nil {
		return func() {}
	}
	r.mark(&r.slotSince)
	return func() { r.slotSince.Store(0) }
}

// Authenticated tells the server set up by Serve that a credential
// vouches for r: its body may then take as long as the server's
// ReadTimeout, at MinBodyRate or more, rather than
// UnauthenticatedBodyTimeout. Call it once the credential is checked,
// before reading the body.
func Authenticated(r *http.Request) {
	if req, _ := r.Context().Value(requestKey{}).(*request); req != nil && req.body != nil {
		req.body.authenticated.Store(true)
	}
}

// writer is the response writer of an HTTP/2 request, which records when
// its handler is blocked writing.
type writer struct {
	http.ResponseWriter
	r *request
}

func (w *writer) Write(p []byte) (int, error) {
	w.r.mark(&w.r.writeSince)
	defer w.r.writeSince.Store(0)
	return w.ResponseWriter.Write(p)
}

// FlushError flushes, as http.ResponseController.Flush asks.
func (w *writer) FlushError() error {
	w.r.mark(&w.r.writeSince)
	defer w.r.writeSince.Store(0)
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (w *writer) Flush() { w.FlushError() }

// Unwrap gives http.ResponseController the writer underneath.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// body is a request body read at a pace.
type body struct {
	io.ReadCloser
	r             *request
	rc            *http.ResponseController
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
	b.r.mark(&b.r.bodySince)
	n, err := b.ReadCloser.Read(p)
	b.r.bodySince.Store(0)
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
func (b *body) end() { b.done = true }
