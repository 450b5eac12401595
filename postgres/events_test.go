package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestEventsMigration upgrades a database written before the feed: its
// stores' feeds are made from what they kept, as they would have been
// written (bar the actor of an archive, which was not kept).
func TestEventsMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	co := memstore.NewCore(db)
	key := &memstore.Caller{WorkspaceID: "wrkspc_migration", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_migration"}}
	agent := &memstore.Caller{WorkspaceID: key.WorkspaceID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "sesn_migration"}}
	ptr := func(s string) *string { return &s }
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
		b, err := co.CreateMemory(ctx, agent, st.ID, memstore.MemoryCreate{Path: "/b.md", Content: "b"})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []memstore.MemoryUpdate{{Content: ptr("a2")}, {Path: ptr("/c.md")}, {Path: ptr("/d.md"), Content: ptr("a3")}} {
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
	feeds := func(co *memstore.Core) [][]memstore.Event {
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
	want := feeds(co)
	if len(want[1]) != 8 || want[1][7].Type != memstore.EventStoreArchived {
		t.Fatalf("the feed as written: %+v", want[1])
	}
	want[1][7].Actor = memstore.Actor{} // not kept before the feed
	db.Close()

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema before the feed's migration, whatever its number.
	names, err := filepath.Glob("migrations/*_events.sql")
	if err != nil || len(names) != 1 {
		t.Fatalf("the feed's migration: %v %v", names, err)
	}
	n, err := strconv.Atoi(strings.SplitN(filepath.Base(names[0]), "_", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	// The migrations after the feed's go too, to be made again (the
	// stores' counts and sizes, webhooks).
	for _, q := range append(dropWebhooks, `DROP TABLE events`,
		`ALTER TABLE stores DROP COLUMN memory_count, DROP COLUMN content_size`, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version >= %d`, n)) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	conn.Close(ctx)
	db = mustOpenAt(t, url, postgres.Options{})
	if got := feeds(memstore.NewCore(db)); !reflect.DeepEqual(got, want) {
		t.Errorf("the feeds made by the migration:\n%+v\nwant as written:\n%+v", got, want)
	}
}
