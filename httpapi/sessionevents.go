package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/memstore/memstore"
)

// Session transcripts (docs/api.md, Session transcripts): the SDKs'
// Beta.Sessions.Events (Send, List, StreamEvents) and memstore's
// extension that appends a whole turn in the Messages API's shape. An
// event travels as the SDKs' event object (memstore.SessionEvent.Object).
// The events service decides who may read and append.

// routeSessionEvents adds the transcript routes under session.
func (s *Server) routeSessionEvents(session string) {
	s.handle("POST "+session+"/events", s.sendSessionEvents)
	s.handle("GET "+session+"/events", s.listSessionEvents)
	s.handle("GET "+session+"/events/stream", s.streamSessionEvents)
	s.handle("POST "+session+"/turns", s.appendSessionTurn)
}

// SessionEventsJSON is the answer of a Send and of a turn: the events
// kept, in order.
type SessionEventsJSON struct {
	Data []json.RawMessage `json:"data"`
}

func newSessionEventsJSON(events []memstore.SessionEvent) SessionEventsJSON {
	j := SessionEventsJSON{Data: make([]json.RawMessage, len(events))}
	for i := range events {
		j.Data[i] = events[i].Object()
	}
	return j
}

// sessionEventObject is an event's wire object.
func sessionEventObject(e *memstore.SessionEvent) json.RawMessage { return e.Object() }

// sendSessionEvents serves POST /v1/sessions/{id}/events: {"events": [...]}.
func (s *Server) sendSessionEvents(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body map[string]json.RawMessage
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	for k := range body {
		if k != "events" {
			return invalid("%s is not a field of a send: the body is {\"events\": [...]}", shortParam(k))
		}
	}
	var events []json.RawMessage
	if err := unmarshalMissing(body["events"], &events); err != nil {
		return invalid("events must be an array of event objects: %v", err)
	}
	out, err := s.events.SendSessionEvents(r.Context(), c, r.PathValue("session_id"), events)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newSessionEventsJSON(out))
	return nil
}

// appendSessionTurn serves POST /v1/sessions/{id}/turns, memstore's
// extension: {"messages": [...]} in the Messages API's shape.
func (s *Server) appendSessionTurn(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body map[string]json.RawMessage
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	for k := range body {
		if k != "messages" {
			return invalid("%s is not a field of a turn: the body is {\"messages\": [...]}, as the Messages API's", shortParam(k))
		}
	}
	var turn memstore.Turn
	if err := unmarshalMissing(body["messages"], &turn.Messages); err != nil {
		return invalid("messages must be an array of {role, content} objects: %v", err)
	}
	out, err := s.events.AppendSessionTurn(r.Context(), c, r.PathValue("session_id"), turn)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, newSessionEventsJSON(out))
	return nil
}

// unmarshalMissing is unmarshalNullable, for a field that may be absent
// (nil), which leaves dst as it is.
func unmarshalMissing(v json.RawMessage, dst any) error {
	if v == nil {
		return nil
	}
	return unmarshalNullable(v, dst)
}

// sessionEventListParams are the parameters the list of events takes.
var sessionEventListParams = map[string]bool{
	"limit": true, "page": true, "order": true, "types[]": true, "types": true,
	"created_at[gt]": true, "created_at[gte]": true, "created_at[lt]": true, "created_at[lte]": true, "beta": true,
}

// listSessionEvents serves GET /v1/sessions/{id}/events: oldest first
// unless order=desc.
func (s *Server) listSessionEvents(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	if err := p.only(sessionEventListParams, "the list of a session's events cannot filter by %s; "+
		"it takes limit, page, order, types[] and created_at[gt|gte|lt|lte]"); err != nil {
		return err
	}
	f := memstore.SessionEventFilter{
		Types:       p.list("types"),
		CreatedAtGT: p.createdAt("gt"), CreatedAtGTE: p.createdAt("gte"), CreatedAtLT: p.createdAt("lt"), CreatedAtLTE: p.createdAt("lte"),
		Limit: p.limit(false), Page: p.get("page"),
	}
	f.Descending = !p.ascending(true)
	if p.err != nil {
		return p.err
	}
	page, err := s.events.ListSessionEvents(r.Context(), c, r.PathValue("session_id"), f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, sessionEventObject))
	return nil
}

// streamSessionEvents serves GET /v1/sessions/{id}/events/stream: the
// events appended from the moment it opens, as Server-Sent Events (id:
// the event's ID, event: its type, data: its object). A new event wakes
// the stream through the database's notices, whichever process appended
// it; without one, the stream reads again every StreamRecheck.
// Everything that can be refused is decided before the first byte; a
// failure after it ends the stream with an "error" event.
func (s *Server) streamSessionEvents(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	if len(p.list("event_deltas")) > 0 {
		return invalid("event_deltas is not supported: memstore streams whole events only; leave it out")
	}
	sessionID := r.PathValue("session_id")
	if r.Header.Get("Last-Event-ID") != "" {
		return invalid("Last-Event-ID is not supported: a session's stream sends the events appended after it opens; "+
			"read those before with GET /v1/sessions/%s/events (created_at[gt] or a page)", sessionID)
	}
	ctx, cancel := streamContext(r, c)
	defer cancel()
	o, err := s.streams.add(c, cancel)
	if err != nil {
		return err
	}
	defer s.streams.release(o)
	// A credential that stops working ends the stream, saying so.
	var stopped atomic.Bool
	defer s.held.Hold(ctx, c, "", func() { stopped.Store(true); cancel() })()
	// Listening before the first read: an event appended meanwhile
	// wakes the stream.
	wake, stop := s.wakes.listen(sessionID)
	defer stop()
	after, err := memstore.LastSessionEventSeq(ctx, s.events, c, sessionID)
	if err != nil {
		return err
	}

	sw, send := startStream(w)
	if err := send([]byte(": open\n\n")); err != nil {
		return nil // the client is gone
	}
	defer s.heartbeat(ctx, sw, cancel)()

	var buf bytes.Buffer
	err = memstore.FollowSessionEvents(ctx, s.events, c, sessionID, after, wake, StreamRecheck, func(events []memstore.SessionEvent) error {
		buf.Reset()
		for i := range events {
			e := &events[i]
			buf.WriteString("id: " + e.ID + "\nevent: " + e.Type + "\ndata: ")
			buf.Write(e.Object())
			buf.WriteString("\n\n")
		}
		return send(buf.Bytes())
	})
	ended := o.reclaimed.Load() || stopped.Load() || errors.Is(ctx.Err(), context.DeadlineExceeded)
	switch {
	case o.reclaimed.Load():
		err = &memstore.Error{Code: memstore.EOverloaded, Retry: true, Message: reclaimedMessage}
	case ended:
		err = memstore.Errorf(memstore.EUnauthenticated, "this stream's credential stopped working: its token was revoked or expired, or its session was archived or deleted")
	}
	if err != nil && (ctx.Err() == nil || ended) {
		s.sendStreamError(ctx, w, send, "a session's event stream failed", err)
	}
	return nil
}

// sessionEventIn is a wire event object as the client keeps it: its ID,
// type and time, and its other fields as its body. The wire does not
// carry its number (Seq), which stays 0.
func sessionEventIn(raw json.RawMessage, sessionID, ws string) (memstore.SessionEvent, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return memstore.SessionEvent{}, err
	}
	e := memstore.SessionEvent{SessionID: sessionID, WorkspaceID: ws}
	var at string
	json.Unmarshal(fields["id"], &e.ID)
	json.Unmarshal(fields["type"], &e.Type)
	json.Unmarshal(fields["processed_at"], &at)
	e.ProcessedAt, _ = time.Parse(time.RFC3339Nano, at)
	delete(fields, "id")
	delete(fields, "processed_at")
	body, err := json.Marshal(fields)
	e.Body = body
	return e, err
}
