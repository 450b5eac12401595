package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestVersionsMigration upgrades a database written at migration 0007,
// with versions of every kind in two stores, to the versions table keyed
// by store and ID (0008): every list and lookup of versions reads back as
// it did, and the schema is that of a new database.
func TestVersionsMigration(t *testing.T) {
	ctx := context.Background()
	all := *sqlite.LastMigration
	*sqlite.LastMigration = 7
	db, path := mustOpenToClose(t)
	*sqlite.LastMigration = all
	dropEvents := withEvents(t, path)
	var stores []string
	for s := range 2 {
		st, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: fmt.Sprintf("store %d", s)}, memstore.Quota{})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st.ID)
		var last []*memstore.Memory
		for i := range 8 {
			by := []memstore.Actor{alice, agent}[i%2]
			m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/notes/%d.md", i), Content: fmt.Sprintf("note %d of store %d", i, s)}, by)
			if err != nil {
				t.Fatal(err)
			}
			c := m.Content + ", edited"
			if m, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, st.ID, m.ID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				t.Fatal(err)
			}
			last = append(last, m)
		}
		if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, st.ID, last[0].ID, "", agent); err != nil {
			t.Fatal(err)
		}
		// A redacted version that is not current, and a redacted current one.
		vs, err := db.Versions(ctx, ws, st.ID, memstore.VersionFilter{MemoryID: last[1].ID, Operation: memstore.OpCreated})
		if err != nil || len(vs.Items) != 1 {
			t.Fatalf("versions of %s: %v %v", last[1].ID, err, vs.Items)
		}
		for _, id := range []string{vs.Items[0].ID, last[2].VersionID} {
			if _, err := db.RedactVersion(ctx, ws, st.ID, id, admin); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := readVersions(t, db, stores)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dropEvents()
	if n := userVersion(t, path); n != 7 {
		t.Fatalf("user_version %d before the upgrade, want 7", n)
	}

	db = mustOpenAt(t, path, sqlite.Options{})
	after := readVersions(t, db, stores)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("versions read back differently after the migration:\nbefore %+v\nafter  %+v", before, after)
	}
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	mustOpenAt(t, fresh, sqlite.Options{})
	if got, want := schema(t, path), schema(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("schema after the migration:\n%v\nwant that of a new database:\n%v", got, want)
	}
	var autoindex int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'versions' AND name LIKE 'sqlite_autoindex%'`).Scan(&autoindex); err != nil || autoindex != 0 {
		t.Errorf("versions keeps an index of its own ID (%d, %v): the migration did not rebuild it", autoindex, err)
	}
	// The rebuilt table takes writes, and its redaction triggers still
	// fire: the memory whose current version was redacted changes.
	st := stores[0]
	p, err := db.Versions(ctx, ws, st, memstore.VersionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Items {
		if v.Redacted() && v.Operation == memstore.OpModified {
			c := "rewritten after the upgrade"
			if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, st, v.MemoryID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if q, err := db.Versions(ctx, ws, st, memstore.VersionFilter{Limit: 100}); err != nil || len(q.Items) != len(p.Items)+1 || q.Items[0].Content != "" {
		t.Errorf("after one more write: %v, %d versions, want %d", err, len(q.Items), len(p.Items)+1)
	}
}

// withEvents gives the database at path, of a schema before the feed's,
// the events table that this code writes to, as the feed's migration
// makes it, and returns what drops it again, leaving the schema as it
// was.
func withEvents(t *testing.T, path string) (drop func()) {
	t.Helper()
	names, err := filepath.Glob("migrations/*_events.sql")
	if err != nil || len(names) != 1 {
		t.Fatalf("the feed's migration: %v %v", names, err)
	}
	b, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if _, err := raw.Exec(string(b)); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := raw.Exec(`DROP TABLE events`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEventsMigration upgrades a database written before the feed: its
// stores' feeds are made from what they kept, as they would have been
// written (bar the actor of an archive, which was not kept).
func TestEventsMigration(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	co := memstore.NewCore(db)
	key := &memstore.Caller{WorkspaceID: ws, Actor: alice}
	var stores []string
	for s := range 2 {
		st, err := co.CreateStore(ctx, key, memstore.StoreCreate{Name: fmt.Sprint("store ", s)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st.ID)
		a, err := co.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: "/a.md", Content: "a"})
		if err != nil {
			t.Fatal(err)
		}
		b := sqlitetest.Create(t, db, ws, st.ID, "/b.md", "b", agent)
		for _, u := range []memstore.MemoryUpdate{
			{Content: ptr("a2")}, {Path: ptr("/c.md")}, {Path: ptr("/d.md"), Content: ptr("a3")},
		} {
			if _, err := co.UpdateMemory(ctx, key, st.ID, a.ID, u); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := co.RedactVersion(ctx, key, st.ID, a.VersionID); err != nil {
			t.Fatal(err)
		}
		if err := co.DeleteMemory(ctx, key, st.ID, b.ID, ""); err != nil {
			t.Fatal(err)
		}
		if s == 1 {
			if _, err := co.ArchiveStore(ctx, key, st.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	feeds := func() [][]memstore.Event {
		var out [][]memstore.Event
		for _, id := range stores {
			p, err := co.Events(ctx, key, id, memstore.EventFilter{Limit: memstore.MaxPageSize})
			if err != nil || p.More {
				t.Fatal(p, err)
			}
			out = append(out, p.Events)
		}
		return out
	}
	want := feeds()
	if len(want[1]) != 8 || want[1][7].Type != memstore.EventStoreArchived {
		t.Fatalf("the feed as written: %+v", want[1])
	}
	want[1][7].Actor = memstore.Actor{} // not kept before the feed
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to migration 0009: without the feed's table, nor what the
	// migrations after it made (0011 to 0016: the stores' counts and
	// sizes, webhooks and their deliveries, the revocations' table), to
	// be made again.
	raw := rawDB(t, path)
	for _, q := range []string{
		`DROP TABLE revocations`,
		`DROP TRIGGER webhook_cursors_of_store`, `DROP TABLE webhook_cursors`, `DROP VIEW webhook_events`, `DROP TRIGGER webhook_events_store_created`, `DROP TRIGGER webhook_events_store_deleted`,
		`DROP TABLE webhook_deliveries`, `DROP TABLE webhook_endpoints`,
		`DROP TABLE events`,
		`DROP TRIGGER memories_count_insert`, `DROP TRIGGER memories_count_delete`, `DROP TRIGGER memories_size_update`,
		`ALTER TABLE stores DROP COLUMN memory_count`, `ALTER TABLE stores DROP COLUMN content_size`,
		`PRAGMA user_version = 9`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	raw.Close()
	db = mustOpenAt(t, path, sqlite.Options{})
	co = memstore.NewCore(db)
	if got := feeds(); !reflect.DeepEqual(got, want) {
		t.Errorf("the feeds made by the migration:\n%+v\nwant as written:\n%+v", got, want)
	}
}

// readVersions reads, for each store, every version through each way of
// listing them (pages of 3, by memory, by actor, by operation) and by ID.
func readVersions(t *testing.T, db *sqlite.DB, stores []string) [][]memstore.Version {
	t.Helper()
	ctx := context.Background()
	list := func(store string, f memstore.VersionFilter) []memstore.Version {
		var all []memstore.Version
		f.Full, f.Limit = true, 3
		for {
			p, err := db.Versions(ctx, ws, store, f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Items...)
			if p.Next == "" {
				return all
			}
			f.Page = p.Next
		}
	}
	var out [][]memstore.Version
	for _, store := range stores {
		all := list(store, memstore.VersionFilter{})
		var got []memstore.Version
		got = append(got, all...)
		got = append(got, list(store, memstore.VersionFilter{MemoryID: all[len(all)-1].MemoryID})...)
		got = append(got, list(store, memstore.VersionFilter{SessionID: agent.ID})...)
		got = append(got, list(store, memstore.VersionFilter{APIKeyID: alice.ID, Operation: memstore.OpModified})...)
		for _, v := range all {
			w, err := db.Version(ctx, ws, store, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, *w)
		}
		out = append(out, got)
	}
	return out
}

func userVersion(t *testing.T, path string) (n int) {
	t.Helper()
	if err := rawDB(t, path).QueryRow(`PRAGMA user_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// schema lists the database's tables, indexes and triggers with their SQL.
func schema(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_schema ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var s []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		s = append(s, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMemoryCountMigration upgrades a database written at migration 0010,
// before stores kept the count and size of their memories, to 0011 and
// 0012: each store's count and content size are those of its live
// memories, as the store and the limit of memories per store show, and
// the count stays so through later writes.
func TestMemoryCountMigration(t *testing.T) {
	ctx := context.Background()
	all := *sqlite.LastMigration
	*sqlite.LastMigration = 10
	db, path := mustOpenToClose(t)
	*sqlite.LastMigration = all
	live, size := map[string]int{}, map[string]int64{}
	for s, n := range []int{0, 1, 5} {
		st, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: fmt.Sprintf("store %d", s)}, memstore.Quota{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n + 1 {
			m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", i), Content: strings.Repeat("x", i)}, alice)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 { // one created and deleted in each
				if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, st.ID, m.ID, "", alice); err != nil {
					t.Fatal(err)
				}
			}
		}
		live[st.ID] = n
		size[st.ID] = int64(n * (n + 1) / 2) // the deleted one was empty
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpenAt(t, path, sqlite.Options{})
	wantTotals(t, db, live, size)
	const limit = 6
	w := sqlitetest.Writer(db, memstore.MaxMemoriesPerStore(limit))
	for id, n := range live {
		made := 0
		for i := 0; made <= limit; i++ {
			if _, err := w.CreateMemory(ctx, ws, id, memstore.MemoryCreate{Path: fmt.Sprintf("/new/%d.md", i), Content: "y"}, alice); err != nil {
				if memstore.ErrorCode(err) != memstore.EInvalid {
					t.Fatal(err)
				}
				break
			}
			made++
		}
		if made != limit-n {
			t.Errorf("store %s with %d memories took %d more under a limit of %d, want %d", id, n, made, limit, limit-n)
		}
	}
}

// wantTotals checks that each store of live and size reports that count
// and content size.
func wantTotals(t *testing.T, db memstore.StoreStorage, live map[string]int, size map[string]int64) {
	t.Helper()
	for id, n := range live {
		st, err := db.Store(context.Background(), ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.MemoryCount != int64(n) || st.ContentSize != size[id] {
			t.Errorf("store %s reports %d memories of %d bytes, want %d of %d", id, st.MemoryCount, st.ContentSize, n, size[id])
		}
	}
}

// TestWebhookDeliveriesMigration upgrades a database written at
// migration 0013, with events waiting in the outbox, to 0014: each
// becomes a pending delivery to every endpoint that wants it, with one ID
// per event, and the outbox is gone.
func TestWebhookDeliveriesMigration(t *testing.T) {
	ctx := context.Background()
	all := *sqlite.LastMigration
	*sqlite.LastMigration = 13
	db, path := mustOpenToClose(t)
	*sqlite.LastMigration = all
	w, err := db.CreateWorkspace(ctx, "hooks")
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: alice}
	hooks := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
	every, err := hooks.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: memstore.WebhookEventTypes})
	if err != nil {
		t.Fatal(err)
	}
	created, err := hooks.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := memstore.NewCore(db).CreateStore(ctx, c, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	m := sqlitetest.Create(t, db, w.ID, s.ID, "/a.md", "one", alice)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	var waiting int
	if err := raw.QueryRow(`SELECT count(*) FROM webhook_outbox`).Scan(&waiting); err != nil || waiting != 2 {
		t.Fatalf("the outbox at 0013 holds %d events (%v), want the store's and the memory's", waiting, err)
	}
	raw.Close()

	db = mustOpenAt(t, path, sqlite.Options{})
	now := time.Now()
	ds, err := db.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 10, PerEndpoint: 10})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]string{} // the endpoints of each event's deliveries
	for _, d := range ds {
		key := d.Event.Type + " " + d.Event.ID
		events[key] = append(events[key], d.EndpointID)
		if d.Event.StoreID != s.ID || d.Event.WorkspaceID != w.ID || d.Event.CreatedAt.After(now) || !strings.HasPrefix(d.Event.ID, "wevt_") ||
			(d.Event.Type == memstore.WebhookMemoryCreated && (d.Event.MemoryID != m.ID || d.Event.VersionID != m.VersionID)) {
			t.Errorf("delivery %+v", d)
		}
	}
	if len(ds) != 3 || len(events) != 2 {
		t.Fatalf("the outbox became %d deliveries of %d events, want 3 of 2: %v", len(ds), len(events), events)
	}
	for key, eps := range events {
		slices.Sort(eps)
		want := []string{every.ID}
		if strings.HasPrefix(key, memstore.WebhookStoreCreated+" ") {
			want = []string{created.ID, every.ID}
			slices.Sort(want)
		}
		if !slices.Equal(eps, want) {
			t.Errorf("%s went to %v, want %v", key, eps, want)
		}
	}
	var outbox int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'webhook_outbox'`).Scan(&outbox); err != nil || outbox != 0 {
		t.Errorf("the outbox is still there (%v)", err)
	}
}
