package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/memstore/memstore"
)

// runFeed runs the tests of memstore.FeedService: the order and content
// of a store's events, paging and resuming from any cursor, redaction
// erasing a version's path from its events, and completeness while
// writes race a reader. open returns a fresh, empty backend.
func runFeed(t *testing.T, open func(t *testing.T) Services) {
	o := func(t *testing.T) (*asKeys, string) {
		b := open(t)
		a := &asKeys{stores: b, memories: b, versions: b, feed: b}
		return a, mustCreateStore(t, a, wsA, "feed").ID
	}
	t.Run("Order", func(t *testing.T) { testFeedOrder(t, o) })
	t.Run("Resume", func(t *testing.T) { testFeedResume(t, o) })
	t.Run("Redaction", func(t *testing.T) { testFeedRedaction(t, o) })
	t.Run("RacingWrites", func(t *testing.T) { testFeedRacing(t, o) })
}

// allEvents reads a store's whole feed after cursor after, pages of limit.
func allEvents(t *testing.T, b *asKeys, storeID, after string, limit int) ([]memstore.Event, string) {
	t.Helper()
	var all []memstore.Event
	for range maxPages {
		page, err := b.Events(t.Context(), wsA, storeID, memstore.EventFilter{After: after, Limit: limit})
		if err != nil {
			t.Fatalf("Events(after %q): %v", after, err)
		}
		if page.Cursor == "" {
			t.Fatalf("Events(after %q): a page without a cursor", after)
		}
		all, after = append(all, page.Events...), page.Cursor
		if !page.More {
			return all, after
		}
		if len(page.Events) == 0 {
			t.Fatal("a page with more to come holds no event")
		}
	}
	t.Fatal("the feed never ends")
	return nil, ""
}

// wantSeqs checks that events are numbered from first on, without a gap.
func wantSeqs(t *testing.T, events []memstore.Event, first int64) {
	t.Helper()
	for i, e := range events {
		if e.Seq != first+int64(i) {
			t.Fatalf("event %d has number %d, want %d (events %+v)", i, e.Seq, first+int64(i), events)
		}
	}
}

func testFeedOrder(t *testing.T, open func(*testing.T) (*asKeys, string)) {
	b, sid := open(t)
	a := mustCreateMemoryBy(t, b, wsA, sid, "/a.md", "one", actorKey)
	mod := mustUpdateMemory(t, b, wsA, sid, a.ID, memstore.MemoryUpdate{Content: ptr("two")}, actorSession)
	ren := mustUpdateMemory(t, b, wsA, sid, a.ID, memstore.MemoryUpdate{Path: ptr("/b.md")}, actorKey)
	both := mustUpdateMemory(t, b, wsA, sid, a.ID, memstore.MemoryUpdate{Path: ptr("/c.md"), Content: ptr("three")}, actorKey)
	mustUpdateMemory(t, b, wsA, sid, a.ID, memstore.MemoryUpdate{Content: ptr("three")}, actorKey) // no change, no event
	mustDeleteMemory(t, b, wsA, sid, a.ID, actorKey2)
	del, err := b.Versions(t.Context(), wsA, sid, memstore.VersionFilter{MemoryID: a.ID, Operation: memstore.OpDeleted})
	if err != nil || len(del.Items) != 1 {
		t.Fatalf("the deletion's version: %+v, %v", del, err)
	}
	other := mustCreateStore(t, b, wsA, "other")
	mustCreateMemory(t, b, wsA, other.ID, "/elsewhere.md", "x")
	if _, err := b.ArchiveStore(t.Context(), wsA, sid, actorUser); err != nil {
		t.Fatal(err)
	}

	events, _ := allEvents(t, b, sid, "", 0)
	type want struct {
		typ     memstore.EventType
		version string
		path    string
		sum     string
		by      memstore.Actor
	}
	wants := []want{
		{memstore.EventMemoryCreated, a.VersionID, "/a.md", sha("one"), actorKey},
		{memstore.EventMemoryModified, mod.VersionID, "/a.md", sha("two"), actorSession},
		{memstore.EventMemoryRenamed, ren.VersionID, "/b.md", sha("two"), actorKey},
		{memstore.EventMemoryRenamed, both.VersionID, "/c.md", sha("three"), actorKey},
		{memstore.EventMemoryDeleted, del.Items[0].ID, "/c.md", "", actorKey2},
		{memstore.EventStoreArchived, "", "", "", actorUser},
	}
	if len(events) != len(wants) {
		t.Fatalf("%d events, want %d: %+v", len(events), len(wants), events)
	}
	wantSeqs(t, events, 1)
	for i, w := range wants {
		e := events[i]
		memID := a.ID
		if w.typ == memstore.EventStoreArchived {
			memID = ""
		}
		if e.Type != w.typ || e.VersionID != w.version || e.MemoryID != memID || e.Path != w.path || e.ContentSHA256 != w.sum || e.Actor != w.by || e.StoreID != sid || e.CreatedAt.IsZero() || e.Cursor == "" {
			t.Errorf("event %d: %+v, want %+v of memory %s", i, e, w, memID)
		}
		if i > 0 && e.CreatedAt.Before(events[i-1].CreatedAt) {
			t.Errorf("event %d is dated before the one it follows", i)
		}
	}
	v := mustVersion(t, b, wsA, sid, mod.VersionID)
	wantTime(t, events[1].CreatedAt, v.CreatedAt, "a change's event time")

	// Another store's feed is its own, numbered from 1.
	oe, _ := allEvents(t, b, other.ID, "", 0)
	if len(oe) != 1 || oe[0].Seq != 1 || oe[0].Path != "/elsewhere.md" {
		t.Errorf("the other store's feed: %+v", oe)
	}
	_, err = b.Events(t.Context(), wsB, sid, memstore.EventFilter{})
	wantCode(t, err, memstore.ENotFound, "the feed of another workspace's store")
	if err := b.DeleteStore(t.Context(), wsA, sid); err != nil {
		t.Fatal(err)
	}
	_, err = b.Events(t.Context(), wsA, sid, memstore.EventFilter{})
	wantCode(t, err, memstore.ENotFound, "the feed of a deleted store")
}

func testFeedResume(t *testing.T, open func(*testing.T) (*asKeys, string)) {
	b, sid := open(t)
	now, err := b.Events(t.Context(), wsA, sid, memstore.EventFilter{After: memstore.EventsNow})
	if err != nil || len(now.Events) != 0 || now.More || now.Cursor == "" {
		t.Fatalf("the feed of a new store from now: %+v, %v", now, err)
	}
	for i := range 7 {
		mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/m%d.md", i), "x")
	}
	events, end := allEvents(t, b, sid, "", 2)
	if len(events) != 7 {
		t.Fatalf("%d events in pages of 2, want 7", len(events))
	}
	wantSeqs(t, events, 1)
	fromNow, _ := allEvents(t, b, sid, now.Cursor, 3)
	if len(fromNow) != 7 || fromNow[0].Seq != 1 {
		t.Errorf("from the cursor of the empty store: %d events, want all 7", len(fromNow))
	}
	// From any event's cursor, the rest and only the rest.
	for i, e := range events {
		rest, _ := allEvents(t, b, sid, e.Cursor, 0)
		if len(rest) != len(events)-i-1 || (len(rest) > 0 && rest[0].Seq != e.Seq+1) {
			t.Errorf("after event %d: %d events, want %d", e.Seq, len(rest), len(events)-i-1)
		}
	}
	// At the end: nothing, and the same cursor, until a change.
	page, err := b.Events(t.Context(), wsA, sid, memstore.EventFilter{After: end})
	if err != nil || len(page.Events) != 0 || page.More || page.Cursor != end {
		t.Errorf("at the end: %+v, %v; want no event and cursor %s", page, err, end)
	}
	page, err = b.Events(t.Context(), wsA, sid, memstore.EventFilter{After: memstore.EventsNow})
	if err != nil || len(page.Events) != 0 || page.Cursor != end {
		t.Errorf("from now: %+v, %v; want no event and the end's cursor %s", page, err, end)
	}
	m := mustCreateMemory(t, b, wsA, sid, "/late.md", "x")
	late, _ := allEvents(t, b, sid, end, 0)
	if len(late) != 1 || late[0].VersionID != m.VersionID || late[0].Seq != 8 {
		t.Errorf("after the end, a new change: %+v", late)
	}

	other := mustCreateStore(t, b, wsA, "other")
	_, err = b.Events(t.Context(), wsA, other.ID, memstore.EventFilter{After: end})
	wantCode(t, err, memstore.EInvalid, "another store's cursor")
	for _, bad := range []string{"page_x", "123", "later"} {
		_, err = b.Events(t.Context(), wsA, sid, memstore.EventFilter{After: bad})
		wantCode(t, err, memstore.EInvalid, "cursor "+bad)
	}
	for _, limit := range []int{-1, memstore.MaxPageSize + 1} {
		_, err = b.Events(t.Context(), wsA, sid, memstore.EventFilter{Limit: limit})
		wantCode(t, err, memstore.EInvalid, fmt.Sprint("limit ", limit))
	}
}

func testFeedRedaction(t *testing.T, open func(*testing.T) (*asKeys, string)) {
	b, sid := open(t)
	secret := "/secret/passwords.md"
	m := mustCreateMemory(t, b, wsA, sid, secret, "hunter2")
	first := m.VersionID
	mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/public.md"), Content: ptr("nothing")}, actorKey)
	if _, err := b.RedactVersion(t.Context(), wsA, sid, first, actorUser); err != nil {
		t.Fatal(err)
	}
	events, _ := allEvents(t, b, sid, "", 0)
	if len(events) != 3 {
		t.Fatalf("%d events, want 3: %+v", len(events), events)
	}
	wantSeqs(t, events, 1)
	for _, e := range events {
		if e.Path == secret || e.ContentSHA256 == sha("hunter2") {
			t.Errorf("event %d still names the redacted version's path or hash: %+v", e.Seq, e)
		}
	}
	c, r := events[0], events[2]
	if c.Type != memstore.EventMemoryCreated || c.VersionID != first || c.Path != "" || c.ContentSHA256 != "" {
		t.Errorf("the redacted version's own event: %+v, want its version without path or hash", c)
	}
	if events[1].Path != "/public.md" {
		t.Errorf("the next version's event lost its path: %+v", events[1])
	}
	if r.Type != memstore.EventVersionRedacted || r.VersionID != first || r.MemoryID != m.ID || r.Actor != actorUser || r.Path != "" {
		t.Errorf("the redaction's event: %+v", r)
	}
	// Redacting again changes nothing, so tells of nothing.
	if _, err := b.RedactVersion(t.Context(), wsA, sid, first, actorUser); err != nil {
		t.Fatal(err)
	}
	if again, _ := allEvents(t, b, sid, r.Cursor, 0); len(again) != 0 {
		t.Errorf("a second redaction made events: %+v", again)
	}
}

// testFeedRacing: writers race a reader that follows the feed by its
// cursor; every change is read once, in order, with no gap.
func testFeedRacing(t *testing.T, open func(*testing.T) (*asKeys, string)) {
	b, sid := open(t)
	const writers, each = 4, 10
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions []string
	)
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			m := mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/w%d.md", w), "0")
			mu.Lock()
			versions = append(versions, m.VersionID)
			mu.Unlock()
			for i := 1; i < each; i++ {
				m, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr(fmt.Sprint(i))}, actorKey)
				if err != nil {
					t.Errorf("update: %v", err)
					return
				}
				mu.Lock()
				versions = append(versions, m.VersionID)
				mu.Unlock()
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	var (
		seen   []memstore.Event
		cursor string
	)
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true // one last read after the writes
		default:
		}
		page, err := b.Events(t.Context(), wsA, sid, memstore.EventFilter{After: cursor, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		seen, cursor = append(seen, page.Events...), page.Cursor
		if page.More {
			finished = false
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("read %d events, want %d", len(seen), writers*each)
	}
	wantSeqs(t, seen, 1)
	got := make([]string, len(seen))
	for i, e := range seen {
		got[i] = e.VersionID
	}
	slices.Sort(got)
	slices.Sort(versions)
	if !slices.Equal(got, versions) {
		t.Errorf("the events name versions %v, want %v", got, versions)
	}
}
