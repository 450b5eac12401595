package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/httpstatus"
)

var _ memstore.FeedService = (*Client)(nil)

// Events implements memstore.FeedService (GET .../events).
func (c *Client) Events(ctx context.Context, caller *memstore.Caller, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	r := eventsRequest(storeID, f.After)
	if f.Limit != 0 {
		r.query.Set("limit", strconv.Itoa(f.Limit))
	}
	return call(ctx, c, caller, r, func(j *EventPageJSON, _ string) memstore.EventPage {
		page := memstore.EventPage{Events: make([]memstore.Event, len(j.Data)), Cursor: j.Cursor, More: j.HasMore}
		for i := range j.Data {
			page.Events[i] = j.Data[i].memstoreEvent()
		}
		return page
	})
}

// eventsRequest is the request of a store's feed after cursor after.
func eventsRequest(storeID, after string) clientRequest {
	p, err := clientStorePath(storeID)
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	return clientRequest{method: http.MethodGet, path: p + "/events", query: q, err: err}
}

// clientMaxEventBytes bounds one event of a stream as the client reads
// it: an event is a few hundred bytes, never content.
const clientMaxEventBytes = 64 << 10

// StreamEvents follows a store's feed over one Server-Sent Events stream
// from cursor after ("" for the first event, memstore.EventsNow for the
// changes to come), calling fn with each event in order, until ctx ends
// (nil), fn fails (its error), or the stream does. An error the server
// gives, before the stream or in an "error" event, is a *memstore.Error;
// a stream cut short is an ordinary error. Either way, the cursor of the
// last event fn took resumes the feed without a gap or a repeat.
func (c *Client) StreamEvents(ctx context.Context, caller *memstore.Caller, storeID, after string, fn func(memstore.Event) error) error {
	r, err := c.prepare(caller, eventsRequest(storeID, after))
	if err != nil {
		return err
	}
	body, where, err := c.openStream(ctx, r, "text/event-stream")
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), clientMaxEventBytes)
	var typ string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if err := dispatchEvent(where, typ, data, fn); err != nil {
				return err
			}
			typ, data = "", data[:0]
		case strings.HasPrefix(line, ":"): // a comment: the heartbeat
		case strings.HasPrefix(line, "event:"):
			typ = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: the event stream broke: %w", where, err)
	}
	return fmt.Errorf("%s: the server ended the event stream", where)
}

// dispatchEvent hands one received event to fn: an "error" event is the
// server's error.
func dispatchEvent(where, typ string, data []byte, fn func(memstore.Event) error) error {
	if len(data) == 0 {
		return nil
	}
	if typ == "error" {
		var env ErrorJSON
		if json.Unmarshal(data, &env) != nil || env.Error.Type == "" {
			return fmt.Errorf("%s: the event stream ended with an error the client cannot read", where)
		}
		// Only a transient failure is worth a new stream.
		retry := httpstatus.Of(env.Error.Type) >= 500 || env.Error.Type == memstore.EConflict
		return &memstore.Error{Code: env.Error.Type, Message: env.Error.Message, Detail: env.Error.Detail, Retry: retry}
	}
	var j EventJSON
	if err := json.Unmarshal(data, &j); err != nil || j.ID == "" {
		return fmt.Errorf("%s: an event of the stream is not a memory_store_event", where)
	}
	return fn(j.memstoreEvent())
}

// The pauses of WatchEvents between attempts to stream again: doubling
// from the first to the last.
const (
	watchFirstPause = 100 * time.Millisecond
	watchLastPause  = 5 * time.Second
)

// WatchEvents is StreamEvents that streams again, from the last event fn
// took, whenever a stream breaks or the server asks for a retry, pausing
// longer after each failure in a row, until ctx ends (nil), fn fails, or
// the server refuses for good (a *memstore.Error that invites no retry,
// such as a store deleted or a credential revoked). retrying, when not
// nil, hears of each failure it retries.
func (c *Client) WatchEvents(ctx context.Context, caller *memstore.Caller, storeID, after string, fn func(memstore.Event) error, retrying func(error)) error {
	if after == memstore.EventsNow {
		// The end as it is now: a stream that broke before its first
		// event must not begin again at a later end.
		page, err := c.Events(ctx, caller, storeID, memstore.EventFilter{After: after, Limit: 1})
		if err != nil {
			return err
		}
		after = page.Cursor
	}
	pause := watchFirstPause
	for {
		got := false
		var fnErr error
		err := c.StreamEvents(ctx, caller, storeID, after, func(e memstore.Event) error {
			if fnErr = fn(e); fnErr != nil {
				return fnErr
			}
			after, got = e.Cursor, true
			return nil
		})
		var me *memstore.Error
		switch {
		case ctx.Err() != nil:
			return nil
		case fnErr != nil:
			return fnErr
		case errors.As(err, &me) && !me.Retry:
			return err
		}
		if got {
			pause = watchFirstPause
		}
		if retrying != nil && err != nil {
			retrying(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, watchLastPause)
	}
}
