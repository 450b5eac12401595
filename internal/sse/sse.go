// Package sse writes the server's Server-Sent Events streams: responses
// that last as long as their client listens. The server's write timeout,
// meant for requests that end, would cut them; instead each write of a
// stream is bounded on its own, so that a stream lives while heartbeats
// flow and a client that stops reading is let go within WriteTimeout.
package sse

import (
	"context"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/memstore/memstore/internal/tick"
)

// The bounds of every stream (docs/api.md, Limits).
const (
	// WriteTimeout bounds each write of a stream, flush included.
	WriteTimeout = 10 * time.Second
	// DefaultHeartbeat is how often an idle stream sends a comment, so
	// that neither proxies nor clients take it for dead, and a client
	// that stopped reading is found out.
	DefaultHeartbeat = 15 * time.Second
)

// heartbeat is the comment a stream sends while idle.
var heartbeat = []byte(": heartbeat\n\n")

// A Writer is a stream's response writer. Writes are made one at a time,
// each flushed at once within WriteTimeout, with no deadline between them
// (the server's write deadline is lifted). Give it in place of the
// response writer to whatever writes the stream; each Write must be whole
// events or comments, as heartbeats go between Writes.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu sync.Mutex
	// started is set once the response's header is written; streaming
	// once it was a 200 of text/event-stream, which heartbeats may join.
	started, streaming bool
}

// NewWriter lifts the server's read and write deadlines off w, whose
// request must have been read whole (the read deadline would otherwise
// end the request's context), and returns its stream writer.
func NewWriter(w http.ResponseWriter) *Writer {
	rc := http.NewResponseController(w)
	// Either may be unsupported: there is then no deadline to lift.
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	return &Writer{w: w, rc: rc}
}

// Header implements http.ResponseWriter.
func (s *Writer) Header() http.Header { return s.w.Header() }

// WriteHeader implements http.ResponseWriter.
func (s *Writer) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(code)
	s.w.WriteHeader(code)
}

// start notes the response's status, once. s.mu is held.
func (s *Writer) start(code int) {
	if s.started {
		return
	}
	s.started = true
	mt, _, _ := mime.ParseMediaType(s.w.Header().Get("Content-Type"))
	s.streaming = code == http.StatusOK && mt == "text/event-stream"
}

// Write implements http.ResponseWriter: b is written and flushed within
// WriteTimeout.
func (s *Writer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(http.StatusOK)
	return s.writeLocked(b)
}

func (s *Writer) writeLocked(b []byte) (int, error) {
	s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	defer s.rc.SetWriteDeadline(time.Time{})
	n, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	return n, err
}

// FlushError is what http.ResponseController.Flush calls: nothing is left
// to flush, as every Write flushes.
func (s *Writer) FlushError() error { return nil }

// Flush implements http.Flusher.
func (s *Writer) Flush() {}

// Unwrap gives http.ResponseController the writer underneath.
func (s *Writer) Unwrap() http.ResponseWriter { return s.w }

// Heartbeat sends a comment every interval, once the response is a
// stream, until ctx ends. When one cannot be sent (the client is gone or
// stopped reading) it calls end, which must end the stream, and returns.
func (s *Writer) Heartbeat(ctx context.Context, every time.Duration, end func()) {
	tick.Every(ctx, every, func() bool {
		s.mu.Lock()
		var err error
		if s.streaming {
			_, err = s.writeLocked(heartbeat)
		}
		s.mu.Unlock()
		if err != nil {
			end()
		}
		return err == nil
	})
}
