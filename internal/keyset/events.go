package keyset

import "github.com/memstore/memstore"

// A store's feed is read by sequence number: its cursor names the store,
// so that a cursor of one store's feed is refused by another's, and the
// number of the last event seen.

// EventsAfter is the sequence number after which a page of store
// storeID's feed begins for cursor after: 0 for "" (the start), and
// ok false for memstore.EventsNow, whose number only the store knows
// (its latest). EInvalid for anything but a cursor of this store's feed.
func EventsAfter(after, storeID string) (seq int64, ok bool, err error) {
	switch after {
	case "":
		return 0, true, nil
	case memstore.EventsNow:
		return 0, false, nil
	}
	c, err := Parse(after, Events)
	if err != nil || c.Key != storeID || c.Seq < 0 {
		return 0, false, memstore.Errorf(memstore.EInvalid, "%q is not a cursor of the events of memory store %s", after, storeID)
	}
	return c.Seq, true, nil
}

// EventsPage is the page of store storeID's feed that begins after event
// number after, given events, the next at most n+1 events in order (one
// more than the page holds tells that more follow): it fills in each
// event's cursor and the page's.
func EventsPage(storeID string, after int64, events []memstore.Event, n int) memstore.EventPage {
	page := memstore.EventPage{Events: events, Cursor: eventCursor(storeID, after)}
	if len(events) > n {
		page.Events, page.More = events[:n], true
	}
	if page.Events == nil {
		page.Events = []memstore.Event{}
	}
	for i := range page.Events {
		e := &page.Events[i]
		e.StoreID, e.Cursor = storeID, eventCursor(storeID, e.Seq)
		page.Cursor = e.Cursor
	}
	return page
}

func eventCursor(storeID string, seq int64) string {
	return Cursor{Kind: Events, Key: storeID, Seq: seq}.String()
}
