package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/memstore/memstore"
)

// SendSessionEvents implements memstore.EventService (POST
// /v1/sessions/{id}/events).
func (c *Client) SendSessionEvents(ctx context.Context, caller *memstore.Caller, sessionID string, events []json.RawMessage) ([]memstore.SessionEvent, error) {
	p, err := clientSessionPath(sessionID)
	return sessionEventsCall(ctx, c, caller, sessionID, clientRequest{method: http.MethodPost, path: p + "/events", body: map[string]any{"events": events}, err: err})
}

// AppendSessionTurn implements memstore.EventService (POST
// /v1/sessions/{id}/turns, memstore's extension).
func (c *Client) AppendSessionTurn(ctx context.Context, caller *memstore.Caller, sessionID string, turn memstore.Turn) ([]memstore.SessionEvent, error) {
	p, err := clientSessionPath(sessionID)
	return sessionEventsCall(ctx, c, caller, sessionID, clientRequest{method: http.MethodPost, path: p + "/turns", body: turn, err: err})
}

func sessionEventsCall(ctx context.Context, c *Client, caller *memstore.Caller, sessionID string, r clientRequest) ([]memstore.SessionEvent, error) {
	type answer struct {
		events []memstore.SessionEvent
		err    error
	}
	a, err := call(ctx, c, caller, r, func(j *SessionEventsJSON, ws string) answer {
		out, err := sessionEventsIn(j.Data, sessionID, ws)
		return answer{events: out, err: err}
	})
	if err == nil {
		err = a.err
	}
	return a.events, err
}

// ListSessionEvents implements memstore.EventService (GET
// /v1/sessions/{id}/events). The wire carries no event's number, so the
// events it returns have Seq 0, and it cannot list after a number
// (EInvalid).
func (c *Client) ListSessionEvents(ctx context.Context, caller *memstore.Caller, sessionID string, f memstore.SessionEventFilter) (memstore.Page[memstore.SessionEvent], error) {
	p, err := clientSessionPath(sessionID)
	if f.AfterSeq != 0 {
		return memstore.Page[memstore.SessionEvent]{}, memstore.Errorf(memstore.EInvalid, "the API lists events by page, not after a sequence number: stream them instead (GET /v1/sessions/{id}/events/stream)")
	}
	q := clientListQuery(f.Limit, f.Page, false)
	if f.Descending {
		q.Set("order", "desc")
	}
	for _, t := range f.Types {
		q.Add("types[]", t)
	}
	clientCreatedAt(q, f.CreatedAtGT, f.CreatedAtGTE, f.CreatedAtLT, f.CreatedAtLTE)
	type answer struct {
		page memstore.Page[memstore.SessionEvent]
		err  error
	}
	a, err := call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/events", query: q, err: err}, func(j *PageJSON[json.RawMessage], ws string) answer {
		items, err := sessionEventsIn(j.Data, sessionID, ws)
		if err != nil {
			return answer{err: err}
		}
		page := memstore.Page[memstore.SessionEvent]{Items: items}
		if j.NextPage != nil {
			page.Next = *j.NextPage
		}
		return answer{page: page}
	})
	if err == nil {
		err = a.err
	}
	return a.page, err
}

// sessionEventsIn is wire events of a session as the client keeps them
// (sessionEventIn).
func sessionEventsIn(raws []json.RawMessage, sessionID, ws string) ([]memstore.SessionEvent, error) {
	out := make([]memstore.SessionEvent, len(raws))
	for i, raw := range raws {
		e, err := sessionEventIn(raw, sessionID, ws)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}
