package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/fairshare"
	"github.com/memstore/memstore/internal/sse"
)

// The change feed, GET /v1/memory_stores/{id}/events (docs/api.md,
// Change feed): a page of a store's events after a cursor, or, for a
// client that accepts text/event-stream, a stream of Server-Sent Events
// that replays the events after the cursor (Last-Event-ID, else ?after=)
// and then sends each new one as it is committed. An event's SSE id is
// its cursor, so that a client that reconnects with the last id it
// received misses none and receives none twice. The feed decides who may
// read it; the server only reads it on the caller's behalf, as the caller
// reads it, and never holds content.

// EventJSON is a memory_store_event object: never content. Path and
// content_sha256 are null where the event has none (a redacted version,
// a deletion's hash, an archive).
type EventJSON struct {
	Type          string     `json:"type"`
	ID            string     `json:"id"` // the cursor after this event
	Sequence      int64      `json:"sequence"`
	Event         string     `json:"event"`
	MemoryStoreID string     `json:"memory_store_id"`
	MemoryID      *string    `json:"memory_id"`
	VersionID     *string    `json:"memory_version_id"`
	Path          *string    `json:"path"`
	ContentSHA256 *string    `json:"content_sha256"`
	Actor         *ActorJSON `json:"actor"`
	CreatedAt     Timestamp  `json:"created_at"`
}

// EventPageJSON is a page of a store's feed. Cursor is never null: it
// resumes after the page's last event, or where the page began.
type EventPageJSON struct {
	Type    string      `json:"type"`
	Data    []EventJSON `json:"data"`
	Cursor  string      `json:"cursor"`
	HasMore bool        `json:"has_more"`
}

// nonEmpty is s, or nil for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NewEventJSON is the wire form of e.
func NewEventJSON(e *memstore.Event) EventJSON {
	j := EventJSON{
		Type: typeEvent, ID: e.Cursor, Sequence: e.Seq, Event: string(e.Type), MemoryStoreID: e.StoreID,
		MemoryID: nonEmpty(e.MemoryID), VersionID: nonEmpty(e.VersionID),
		Path: nonEmpty(e.Path), ContentSHA256: nonEmpty(e.ContentSHA256), CreatedAt: Timestamp(e.CreatedAt),
	}
	if e.Actor.Type != "" {
		j.Actor = NewActorJSON(e.Actor)
	}
	return j
}

// memstoreEvent is the event j stands for.
func (j *EventJSON) memstoreEvent() memstore.Event {
	e := memstore.Event{
		Cursor: j.ID, Seq: j.Sequence, StoreID: j.MemoryStoreID, Type: memstore.EventType(j.Event),
		MemoryID: deref(j.MemoryID), VersionID: deref(j.VersionID), Path: deref(j.Path), ContentSHA256: deref(j.ContentSHA256),
		CreatedAt: time.Time(j.CreatedAt),
	}
	if j.Actor != nil {
		e.Actor = j.Actor.Actor()
	}
	return e
}

func newEventPageJSON(p memstore.EventPage) EventPageJSON {
	j := EventPageJSON{Type: typeEventPage, Data: make([]EventJSON, len(p.Events)), Cursor: p.Cursor, HasMore: p.More}
	for i := range p.Events {
		j.Data[i] = NewEventJSON(&p.Events[i])
	}
	return j
}

// wantsStream reports whether the request asks for Server-Sent Events.
func wantsStream(r *http.Request) bool {
	for _, a := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(a), "text/event-stream") {
			return true
		}
	}
	return false
}

// storeEvents serves GET .../events: a page, or a stream.
func (s *Server) storeEvents(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	after := p.get("after")
	storeID := r.PathValue("memory_store_id")
	if wantsStream(r) {
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			after = id
		}
		if p.err != nil {
			return p.err
		}
		return s.streamEvents(w, r, c, storeID, after)
	}
	limit := p.limit(false)
	if p.err != nil {
		return p.err
	}
	page, err := s.feed.Events(r.Context(), c, storeID, memstore.EventFilter{After: after, Limit: limit})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newEventPageJSON(page))
	return nil
}

// streamContext is the context of a response that outlives a request's
// usual span (a stream): r's, ended too when c's credential expires, or
// by the returned cancel, which ends both.
func streamContext(r *http.Request, c *memstore.Caller) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	if c.ExpiresAt == nil {
		return ctx, cancel
	}
	ctx, cancelAt := context.WithDeadline(ctx, *c.ExpiresAt)
	return ctx, func() { cancelAt(); cancel() }
}

// streamEvents streams a store's feed from cursor after. Everything that
// can be refused (the caller, the store, the cursor, the bounds on
// streams) is decided before the first byte, as an ordinary error; a
// failure after it ends the stream with an "error" event.
func (s *Server) streamEvents(w *responseWriter, r *http.Request, c *memstore.Caller, storeID, after string) error {
	ctx, cancel := streamContext(r, c)
	defer cancel()
	o, err := s.streams.add(c, cancel)
	if err != nil {
		return err
	}
	defer s.streams.release(o)
	defer s.held.Hold(ctx, c, storeID, cancel)()
	// Listening before the first read: a change committed meanwhile
	// wakes the stream.
	wake, stop := s.wakes.listen(storeID)
	defer stop()
	first, err := s.feed.Events(ctx, c, storeID, memstore.EventFilter{After: after, Limit: memstore.MaxPageSize})
	if err != nil {
		return err
	}

	sw, send := startStream(w)
	if err := send([]byte(": memstore events of " + storeID + "\n\n")); err != nil {
		return nil // the client is gone
	}
	defer s.heartbeat(ctx, sw, cancel)()

	var buf bytes.Buffer
	sendPage := func(p memstore.EventPage) error {
		buf.Reset()
		for i := range p.Events {
			e := &p.Events[i]
			fmt.Fprintf(&buf, "id: %s\nevent: %s\ndata: ", e.Cursor, e.Type)
			if err := encodeJSON(&buf, NewEventJSON(e)); err != nil {
				return err
			}
			buf.WriteByte('\n') // encodeJSON ended the data line
		}
		return send(buf.Bytes())
	}
	if len(first.Events) > 0 {
		if err := sendPage(first); err != nil {
			return nil
		}
	}
	err = memstore.FollowEvents(ctx, s.feed, c, storeID, first.Cursor, wake, StreamRecheck, sendPage)
	if o.reclaimed.Load() {
		err = &memstore.Error{Code: memstore.EOverloaded, Retry: true, Message: reclaimedMessage}
	}
	if err != nil && (ctx.Err() == nil || o.reclaimed.Load()) {
		s.sendStreamError(ctx, w, send, "an event stream failed", err)
	}
	return nil
}

// startStream starts w's response as a stream of Server-Sent Events: its
// headers and status, and send, which writes to it. The server's read
// and write timeouts are for requests that end: a stream's reads have
// ended, and each of its writes gets its own deadline (sse.Writer).
func startStream(w *responseWriter) (sw *sse.Writer, send func([]byte) error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer would hold events back
	h.Del("Content-Length")
	sw = sse.NewWriter(w)
	sw.WriteHeader(http.StatusOK)
	return sw, func(b []byte) error {
		_, err := sw.Write(b)
		return err
	}
}

// heartbeat keeps the stream sw alive until ctx ends, calling cancel
// when a heartbeat cannot be written. The returned stop cancels and
// waits for it: nothing may write once the handler has returned.
func (s *Server) heartbeat(ctx context.Context, sw *sse.Writer, cancel context.CancelFunc) (stop func()) {
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		sw.Heartbeat(ctx, s.heartbeatEvery, cancel)
	}()
	return func() { cancel(); <-beating }
}

// sendStreamError ends a stream with an "error" event saying err: a
// memstore error as it is, any other logged (as what) and said as an
// internal error.
func (s *Server) sendStreamError(ctx context.Context, w *responseWriter, send func([]byte) error, what string, err error) {
	var e *memstore.Error
	if !errors.As(err, &e) {
		s.log.LogAttrs(ctx, slog.LevelError, what,
			slog.String("request_id", w.requestID), slog.String("error", err.Error()))
		e = &memstore.Error{Code: memstore.EInternal, Message: internalMessage}
	}
	var buf bytes.Buffer
	buf.WriteString("event: error\ndata: ")
	encodeJSON(&buf, ErrorJSON{Type: typeError, Error: ErrorDetail{Type: e.Code, Message: e.Message, Detail: e.Detail}, RequestID: w.requestID})
	buf.WriteByte('\n')
	send(buf.Bytes())
}

// reclaimedMessage is the error event of a stream ended to make room for
// another workspace's (fairshare.Reclaim).
const reclaimedMessage = "this stream was ended to make room for another workspace's: the server has as many event streams open as it may, " +
	"and this workspace held the most; resume with Last-Event-ID once a stream of this workspace has ended"

// streamSet bounds the open streams, in all, per workspace (its share)
// and per credential (Server.held ends those of a credential that is
// revoked).
// At the bound in all, the workspace holding the most streams gives up
// its oldest to a workspace holding at least two fewer
// (fairshare.Reclaim), so that workspaces share the server evenly
// however many credentials each has.
type streamSet struct {
	max, perWorkspace, perCredential int

	mu           sync.Mutex
	open         map[*openStream]struct{}
	byCredential map[string]int
	byWorkspace  map[string]int
	opened       uint64 // orders the streams by age
}

type openStream struct {
	caller *memstore.Caller
	cancel context.CancelFunc
	seq    uint64 // when it was opened (streamSet.opened)
	// reclaimed is set when the stream was ended to make room for
	// another workspace's.
	reclaimed atomic.Bool
}

// credential is the key of c's credential among the streams'
// (memstore.Caller.Credential).
func credential(c *memstore.Caller) string {
	key, _ := c.Credential()
	return key
}

// add counts a new stream of c, which cancel ends, or refuses it when
// c's credential or workspace has as many as it may (a retryable 429),
// or the server has and no other workspace gives one up (529); release
// forgets it.
func (ss *streamSet) add(c *memstore.Caller, cancel context.CancelFunc) (*openStream, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	cred, ws := credential(c), c.WorkspaceID
	switch {
	case ss.byCredential[cred] >= ss.perCredential:
		return nil, &memstore.Error{Code: memstore.ERateLimited, Retry: true,
			Message: memstore.LimitReached("this credential", ss.perCredential, "open event streams", "close one before opening another", "--feed-max-streams-per-credential")}
	case ss.byWorkspace[ws] >= ss.perWorkspace:
		return nil, &memstore.Error{Code: memstore.ERateLimited, Retry: true,
			Message: memstore.LimitReached("this workspace", ss.perWorkspace, "open event streams, its share of the server's", "close one before opening another", "--feed-max-streams-per-workspace")}
	case len(ss.open) >= ss.max:
		from := fairshare.Reclaim(ss.byWorkspace, ws)
		if from == "" {
			return nil, &memstore.Error{Code: memstore.EOverloaded, Retry: true,
				Message: memstore.LimitReached("the server", ss.max, "open event streams", "no workspace holds two more than this one; retry later", "--feed-max-streams")}
		}
		var oldest *openStream
		for o := range ss.open {
			if o.caller.WorkspaceID == from && (oldest == nil || o.seq < oldest.seq) {
				oldest = o
			}
		}
		ss.forget(oldest)
		oldest.reclaimed.Store(true)
		oldest.cancel()
	}
	if ss.open == nil {
		ss.open, ss.byCredential, ss.byWorkspace = map[*openStream]struct{}{}, map[string]int{}, map[string]int{}
	}
	ss.opened++
	o := &openStream{caller: c, cancel: cancel, seq: ss.opened}
	ss.open[o] = struct{}{}
	ss.byCredential[cred]++
	ss.byWorkspace[ws]++
	return o, nil
}

// release forgets o once its handler ends, unless it was already.
func (ss *streamSet) release(o *openStream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.open[o]; ok {
		ss.forget(o)
	}
}

// forget takes o out of the counts. ss.mu must be held.
func (ss *streamSet) forget(o *openStream) {
	delete(ss.open, o)
	cred, ws := credential(o.caller), o.caller.WorkspaceID
	if ss.byCredential[cred]--; ss.byCredential[cred] == 0 {
		delete(ss.byCredential, cred)
	}
	if ss.byWorkspace[ws]--; ss.byWorkspace[ws] == 0 {
		delete(ss.byWorkspace, ws)
	}
}

// closeAll ends every stream, for a server that shuts down.
func (ss *streamSet) closeAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for o := range ss.open {
		o.cancel()
	}
}

// wakeSet hands out the feed's notices to the streams of each store.
type wakeSet struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

// listen returns a channel that receives (at most one pending) signal
// when store storeID has new events, until stop.
func (ws *wakeSet) listen(storeID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]map[chan struct{}]struct{}{}
	}
	if ws.m[storeID] == nil {
		ws.m[storeID] = map[chan struct{}]struct{}{}
	}
	ws.m[storeID][ch] = struct{}{}
	return ch, func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		delete(ws.m[storeID], ch)
		if len(ws.m[storeID]) == 0 {
			delete(ws.m, storeID)
		}
	}
}

// notify wakes the streams of store storeID without blocking: an
// memstore.EventNotifier listener.
func (ws *wakeSet) notify(storeID string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for ch := range ws.m[storeID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
