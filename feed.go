package memstore

import (
	"context"
	"time"
)

// The change feed: every change of a store, in order, as an Event.
//
// Each event has the store's next sequence number (Seq, from 1), given in
// the same transaction as the change it tells of, by the backend that
// writes it. The writes of one store are serialized (SQLite's single
// writer; PostgreSQL's lock on the store's row, taken by every write of
// memories, redaction and archive before the sequence is read), so a
// store's sequence has no gap and follows the order of the commits: a
// reader that sees event N sees every event before it. A consumer that
// resumes from the cursor of the last event it handled therefore misses
// none and sees none twice, whether it was cut off, the server
// restarted or it reads through another replica.
//
// An event holds no content. Its path and content_sha256 are read from
// the version it names, so that redacting a version erases them from its
// events as well. Events are kept as long as their store: its feed goes
// back to its first change; deleting the store deletes them with it. The
// same table is the outbox from which deliveries to other systems can
// resume, by the same sequence.

// EventType is what an event tells of.
type EventType string

// The types of event.
const (
	EventMemoryCreated   EventType = "memory.created"
	EventMemoryModified  EventType = "memory.modified" // the content changed, the path did not
	EventMemoryRenamed   EventType = "memory.renamed"  // the path changed (the content may have too)
	EventMemoryDeleted   EventType = "memory.deleted"
	EventVersionRedacted EventType = "version.redacted"
	EventStoreArchived   EventType = "store.archived"
)

// Operation is the operation of the version that an event of a memory's
// change records ("" for the other events).
func (t EventType) Operation() Operation {
	switch t {
	case EventMemoryCreated:
		return OpCreated
	case EventMemoryModified, EventMemoryRenamed:
		return OpModified
	case EventMemoryDeleted:
		return OpDeleted
	}
	return ""
}

// changeEvent is the event of a change that gives memory m the path
// path: a rename when the path changes.
func changeEvent(m *Memory, path string) EventType {
	if path != m.Path {
		return EventMemoryRenamed
	}
	return EventMemoryModified
}

// An Event is one change of a store in its feed. It never holds content.
type Event struct {
	// Cursor resumes the feed after this event: opaque, of this store.
	Cursor  string
	Seq     int64 // the store's sequence number, from 1, without gaps
	StoreID string
	Type    EventType
	// MemoryID and VersionID name the memory and the version the event
	// tells of: the new version for a memory's change, the redacted one
	// for a redaction; "" for store.archived.
	MemoryID  string
	VersionID string
	// Path and ContentSHA256 are the version's: "" once it is redacted,
	// and "" for store.archived; ContentSHA256 is "" for a deletion.
	Path          string
	ContentSHA256 string
	Actor         Actor
	CreatedAt     time.Time
}

// EventsNow, as EventFilter.After, starts after the store's latest event:
// only the changes still to come.
const EventsNow = "now"

// EventFilter selects a page of a store's feed.
type EventFilter struct {
	// After is the cursor of the last event already seen (an
	// Event.Cursor or an EventPage.Cursor); "" starts at the store's
	// first event, EventsNow after its latest.
	After string
	Limit int // page size, 1-100
}

// An EventPage is the events of a store that follow a cursor, oldest
// first.
type EventPage struct {
	Events []Event
	// Cursor resumes after the last event of the page, or where the
	// page began when it is empty: never "".
	Cursor string
	// More says that events follow the page already.
	More bool
}

// FeedService reads the feeds of the stores of the caller's workspace
// (ENotFound for another's). A session caller reads the feeds of its
// attached stores only (EPermission), as it lists their memories.
type FeedService interface {
	// Events returns the events that follow f.After (EInvalid for a bad
	// cursor or limit, ENotFound).
	Events(ctx context.Context, c *Caller, storeID string, f EventFilter) (EventPage, error)
}

// EventStorage is FeedService as a backend keeps it, inside the workspace
// workspaceID; trusted, as the other storage is. The limit is checked.
// It writes the events itself, in the transactions of the changes.
type EventStorage interface {
	Events(ctx context.Context, workspaceID, storeID string, f EventFilter) (EventPage, error)
}

// EventNotifier is offered by backends that can tell the moment a store
// has new events: all tell of those committed through them, and a backend
// that several processes share may tell of the others' too (PostgreSQL
// does). A notice only says where to look: a listener reads the feed from
// its own cursor, so that a lost or repeated notice costs a read, never
// an event.
type EventNotifier interface {
	// NotifyEvents calls f with a store's ID after events of that store
	// have been committed, or the store deleted (its feed is then gone,
	// which a reader learns by reading it: ENotFound), and with a
	// session's ID after events of its transcript have been committed
	// (the prefixes of the IDs tell them apart), until stop is called. f
	// must not block.
	NotifyEvents(f func(storeID string)) (stop func())
}

// Events implements FeedService.
func (co *Core) Events(ctx context.Context, c *Caller, storeID string, f EventFilter) (EventPage, error) {
	if err := c.CanRead(storeID); err != nil {
		return EventPage{}, err
	}
	if err := ValidateID("memory_store_id", storeID); err != nil {
		return EventPage{}, err
	}
	if _, err := PageSize(f.Limit, false); err != nil {
		return EventPage{}, err
	}
	return co.b.Events(ctx, c.WorkspaceID, storeID, f)
}

// NotifyEvents implements EventNotifier: the core tells of the events its
// backend tells of; with a backend that tells of none, f is never called.
func (co *Core) NotifyEvents(f func(storeID string)) (stop func()) {
	if n, ok := co.b.(EventNotifier); ok {
		return n.NotifyEvents(f)
	}
	return func() {}
}

// Notices is an EventNotifier for backends to embed: Notify tells every
// listener.
type Notices struct{ l listeners[string] }

// NotifyEvents implements EventNotifier.
func (ns *Notices) NotifyEvents(f func(storeID string)) (stop func()) { return ns.l.add(f) }

// Notify tells every listener that store storeID has new events.
func (ns *Notices) Notify(storeID string) { ns.l.tell(storeID) }

// FollowEvents follows store storeID's feed from cursor after: it calls
// fn with each page of new events, in order, until ctx ends (nil) or a
// read or fn fails (that error). It reads the feed again at once while
// more events wait, when wake delivers (a notice, which may be lost or
// repeated: nothing depends on it), and at least every recheck, which
// bounds how late a change is seen without notices.
func FollowEvents(ctx context.Context, feed FeedService, c *Caller, storeID, after string, wake <-chan struct{}, recheck time.Duration, fn func(EventPage) error) error {
	return follow(ctx, wake, recheck,
		func() (EventPage, error) {
			return feed.Events(ctx, c, storeID, EventFilter{After: after, Limit: MaxPageSize})
		},
		func(page EventPage) (bool, error) {
			if len(page.Events) > 0 {
				if err := fn(page); err != nil {
					return false, err
				}
			}
			after = page.Cursor
			return page.More, nil
		})
}

// follow is the loop of FollowEvents and FollowSessionEvents: read reads
// what is new, deliver hands it on and says whether more waits. It reads
// again at once while more waits, else when wake delivers or recheck has
// passed, until ctx ends (nil) or a read or a delivery fails (that
// error). What a read returns once ctx has ended is not delivered.
func follow[P any](ctx context.Context, wake <-chan struct{}, recheck time.Duration, read func() (P, error), deliver func(P) (more bool, err error)) error {
	t := time.NewTimer(recheck)
	defer t.Stop()
	for {
		page, err := read()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		more, err := deliver(page)
		if err != nil {
			return err
		}
		if more {
			continue
		}
		t.Reset(recheck)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-t.C:
		}
	}
}

// WakeOn returns a channel that holds a signal (at most one, pending)
// whenever n tells of new events of store storeID, for FollowEvents,
// until stop is called.
func WakeOn(n EventNotifier, storeID string) (wake <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	return ch, n.NotifyEvents(func(id string) {
		if id == storeID {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	})
}
