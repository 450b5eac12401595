package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

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
		out := make([]memstore.SessionEvent, len(j.Data))
		for i, raw := range j.Data {
			e, err := sessionEventIn(raw, sessionID, ws)
			if err != nil {
				return answer{err: err}
			}
			out[i] = e
		}
		return answer{events: out}
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
	clientTimeRange(q, f.CreatedAtGTE, f.CreatedAtLTE)
	for op, t := range map[string]*time.Time{"gt": f.CreatedAtGT, "lt": f.CreatedAtLT} {
		if t != nil {
			q.Set("created_at["+op+"]", t.Format(time.RFC3339Nano))
		}
	}
	type answer struct {
		page memstore.Page[memstore.SessionEvent]
		err  error
	}
	a, err := call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/events", query: q, err: err}, func(j *PageJSON[json.RawMessage], ws string) answer {
		page := memstore.Page[memstore.SessionEvent]{Items: make([]memstore.SessionEvent, 0, len(j.Data))}
		for _, raw := range j.Data {
			e, err := sessionEventIn(raw, sessionID, ws)
			if err != nil {
				return answer{err: err}
			}
			page.Items = append(page.Items, e)
		}
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
