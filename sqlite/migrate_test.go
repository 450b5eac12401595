package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/storetest"
)

// The databases of the development builds before the first release: their
// schema came from the migrations of migrations/dev, numbered apart, and
// they kept application_id 0. The tests below make such databases as
// those builds did, by those migrations, and open them.

// devMigrations are the development builds' migrations, in order.
func devMigrations(tb testing.TB) []string {
	tb.Helper()
	names, err := filepath.Glob("migrations/dev/*.sql")
	if err != nil || len(names) == 0 {
		tb.Fatalf("the development migrations: %v %v", names, err)
	}
	slices.Sort(names)
	return names
}

// devDatabase makes at path a database as a development build made it
// at development version v: that build's migrations up to v applied in
// order, v in user_version, application_id 0. It returns a connection
// to it, closed when tb ends.
func devDatabase(tb testing.TB, path string, v int) *sql.DB {
	tb.Helper()
	raw := rawDB(tb, path)
	for _, name := range devMigrations(tb) {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0])
		if err != nil {
			tb.Fatal(name, err)
		}
		if n > v {
			break
		}
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := raw.Exec(string(b)); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		tb.Fatal(err)
	}
	return raw
}

// openLogged opens the database at path with its log in the returned
// buffer.
func openLogged(tb testing.TB, path string) (*sqlite.DB, *syncbuf.Buffer) {
	tb.Helper()
	var log syncbuf.Buffer
	return mustOpenAt(tb, path, sqlite.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}), &log
}

// wantUpgradeLogged checks that log tells of the upgrade of a database
// made by a development build at development version v.
func wantUpgradeLogged(tb testing.TB, log *syncbuf.Buffer, v int) {
	tb.Helper()
	if s := log.String(); !strings.Contains(s, "upgraded a database made by a development build") ||
		!strings.Contains(s, fmt.Sprintf("development_version=%d ", v)) {
		tb.Errorf("the log does not tell of the upgrade from development version %d:\n%s", v, s)
	}
}

// TestUpgradeDevSchema is the proof that the release schema
// (migrations/0001_schema.sql) is that of the development builds' last
// migration: a database that a development build made at any of its
// versions, once opened, has the schema of a new database, table for
// table, index for index, trigger for trigger, with the rows a new
// database starts with, and the release's application_id and
// user_version. The upgrade is logged.
func TestUpgradeDevSchema(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	mustOpenAt(t, fresh, sqlite.Options{})
	want := schemaText(t, fresh)
	for v := 1; v <= len(devMigrations(t)); v++ {
		t.Run(fmt.Sprint("from ", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dev.db")
			devDatabase(t, path, v).Close()
			_, log := openLogged(t, path)
			if got := schemaText(t, path); got != want {
				t.Errorf("the schema after the upgrade differs from a new database's (-new +upgraded):\n%s", storetest.Diff(want, got))
			}
			wantUpgradeLogged(t, log, v)
		})
	}
}

// TestUpgradeDevDatabase opens a database of every kind of record as the
// last development build left it: every row stays as it was, the
// database is the release's from then on (opened again, it is not
// upgraded again), and everything works: credentials, search, writes,
// the feed and webhooks.
func TestUpgradeDevDatabase(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	f := storetest.FillDatabase(t, db)
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The last development build's schema is the release's
	// (TestUpgradeDevSchema) but for the mark of the release.
	last := len(devMigrations(t))
	raw := rawDB(t, path)
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id = 0; PRAGMA user_version = %d", last)); err != nil {
		t.Fatal(err)
	}
	before := tableRows(t, raw)
	raw.Close()

	db, log := openLogged(t, path)
	wantUpgradeLogged(t, log, last)
	if after := tableRows(t, rawDB(t, path)); after != before {
		t.Errorf("the rows changed in the upgrade (-before +after):\n%s", storetest.Diff(before, after))
	}
	if h := header(t, path); h != "1835363699 1" {
		t.Errorf("application_id and user_version after the upgrade: %s, want memstore's and 1", h)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, log = openLogged(t, path)
	if log.String() != "" {
		t.Errorf("opened again, the database was upgraded again:\n%s", log)
	}
	storetest.CheckDatabase(t, db, f)
}

// header is the database's application_id and user_version.
func header(tb testing.TB, path string) string {
	tb.Helper()
	var app, v int
	raw := rawDB(tb, path)
	if err := raw.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		tb.Fatal(err)
	}
	if err := raw.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprint(app, " ", v)
}

// TestUpgradeFirstDevDatabase opens a database that the first
// development build made (development version 1: stores, memories and
// versions) with rows of every kind it kept: the development migrations
// carry them as they did. Each store's feed is made from its versions
// (a rename where the path changed), redactions and archive (whose actor
// was not kept); each store counts its live memories and their size, as
// the limit of memories per store reads them; search finds the memories;
// and every list of versions reads back as before.
func TestUpgradeFirstDevDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.db")
	raw := devDatabase(t, path, 1)
	const (
		notes, old = "memstore_notes", "memstore_old"
		key, agent = "apikey_alice", "sesn_agent"
	)
	// Version IDs as memstore makes them (time-ordered), of the times
	// the versions below were made at, in seconds.
	var pairs []string
	for _, i := range []int{1, 2, 3, 5, 6, 7} {
		pairs = append(pairs, fmt.Sprintf("memver_0%d", i), ids.Floor(memstore.VersionIDPrefix, time.Unix(int64(i), 0)))
	}
	realIDs := strings.NewReplacer(pairs...)
	for _, q := range []string{
		`INSERT INTO stores (id, workspace_id, name, created_at, updated_at) VALUES ('memstore_notes', 'wrkspc_test', 'notes', 0, 0)`,
		`INSERT INTO stores (id, workspace_id, name, created_at, updated_at, archived_at) VALUES ('memstore_old', 'wrkspc_test', 'old', 0, 100000000000, 100000000000)`,
		// In notes: a memory created, changed, renamed, its first version
		// redacted; another created and deleted.
		`INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id) VALUES
			('memver_01', 'memstore_notes', 'mem_a', 'created', NULL, NULL, NULL, NULL, 1000000000, 'api_actor', 'apikey_alice', 4000000000, 'user_actor', 'user_admin'),
			('memver_02', 'memstore_notes', 'mem_a', 'modified', '/zoo/lemur.md', 'ring-tailed lemur', 'h2', 17, 2000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_03', 'memstore_notes', 'mem_a', 'modified', '/zoo/lemurs.md', 'ring-tailed lemur, curious', 'h3', 26, 3000000000, 'api_actor', 'apikey_alice', NULL, NULL, NULL),
			('memver_05', 'memstore_notes', 'mem_b', 'created', '/todo.md', 'buy milk', 'h5', 8, 5000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_06', 'memstore_notes', 'mem_b', 'deleted', '/todo.md', NULL, NULL, NULL, 6000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_07', 'memstore_old', 'mem_c', 'created', '/old.md', 'from before', 'h7', 11, 7000000000, 'api_actor', 'apikey_alice', NULL, NULL, NULL)`,
		`INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at) VALUES
			('mem_a', 'memstore_notes', '/zoo/lemurs.md', 'ring-tailed lemur, curious', 'h3', 26, 'memver_03', 1000000000, 3000000000),
			('mem_c', 'memstore_old', '/old.md', 'from before', 'h7', 11, 'memver_07', 7000000000, 7000000000)`,
	} {
		if _, err := raw.Exec(realIDs.Replace(q)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, log := openLogged(t, path)
	wantUpgradeLogged(t, log, 1)
	c := &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key}}
	co := memstore.NewCore(db, memstore.MaxMemoriesPerStore(3))
	wantTotals(t, db, map[string]int{notes: 1, old: 1}, map[string]int64{notes: 26, old: 11})
	storetest.CheckDevFixture(t, co, c, notes, old, key, agent, realIDs)
	checkIndexes(t, db, rawIndex(t, path), "after the upgrade")
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

// TestUpgradeDevWebhookOutbox opens a database made by a development
// build whose webhooks went through an outbox (development version 13),
// with events waiting in it: each becomes a pending delivery to every
// endpoint that wants it, with one ID per event, and every endpoint gets
// a cursor at the end of the feed of each store of its workspace.
func TestUpgradeDevWebhookOutbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dev.db")
	raw := devDatabase(t, path, 13)
	for _, q := range []string{
		`INSERT INTO workspaces VALUES ('wrkspc_hooks', 'hooks', 0)`,
		`INSERT INTO stores (id, workspace_id, name, created_at, updated_at) VALUES ('memstore_a', 'wrkspc_hooks', 'a', 1000000000, 1000000000)`,
		`INSERT INTO events VALUES ('memstore_a', 1, 'memory.created', 'memver_a', 'api_actor', 'apikey_a', 2000000000)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_every', 'wrkspc_hooks', '', '', 'http://127.0.0.1:9/', 'memory_store.created,memstore.memory.created', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_created', 'wrkspc_hooks', '', '', 'http://127.0.0.1:9/', 'memory_store.created', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at) VALUES
			('wrkspc_hooks', 'memory_store.created', 'memstore_a', '', '', 1000000000),
			('wrkspc_hooks', 'memstore.memory.created', 'memstore_a', 'mem_a', 'memver_a', 2000000000)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, log := openLogged(t, path)
	wantUpgradeLogged(t, log, 13)
	now := time.Now()
	ds, err := db.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 10, PerEndpoint: 10, AllFeeds: true})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]string{} // the endpoints of each event's deliveries
	for _, d := range ds {
		key := d.Event.Type + " " + d.Event.ID
		events[key] = append(events[key], d.EndpointID)
		if d.Event.StoreID != "memstore_a" || d.Event.WorkspaceID != "wrkspc_hooks" || !strings.HasPrefix(d.Event.ID, "wevt_") ||
			(d.Event.Type == memstore.WebhookMemoryCreated && (d.Event.MemoryID != "mem_a" || d.Event.VersionID != "memver_a" || d.Event.CreatedAt.Unix() != 2)) {
			t.Errorf("delivery %+v", d)
		}
	}
	// The feed's event is delivered once, from the outbox: the cursors
	// start past it.
	if len(ds) != 3 || len(events) != 2 {
		t.Fatalf("the outbox became %d deliveries of %d events, want 3 of 2: %v", len(ds), len(events), events)
	}
	for key, eps := range events {
		slices.Sort(eps)
		want := []string{"webhook_every"}
		if strings.HasPrefix(key, memstore.WebhookStoreCreated+" ") {
			want = []string{"webhook_created", "webhook_every"}
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

// TestRefuseOtherDatabases shows that a database this memstore does not
// know is refused, and left as it is: one of a newer memstore, one of a
// development build newer than the last this memstore knows, and a file
// of another application.
func TestRefuseOtherDatabases(t *testing.T) {
	for _, c := range []struct {
		name, header, want string
	}{
		{"newer", "PRAGMA application_id = 1835363699; PRAGMA user_version = 2", "newer than this memstore knows (1): upgrade memstore"},
		{"newer development build", "PRAGMA application_id = 0; PRAGMA user_version = 19", "made by a development build of memstore newer than this one"},
		{"another application", "PRAGMA application_id = 1; PRAGMA user_version = 1", "not a memstore database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, path := mustOpenToClose(t)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			raw := rawDB(t, path)
			if _, err := raw.Exec(c.header); err != nil {
				t.Fatal(err)
			}
			before := schemaText(t, path)
			raw.Close()
			db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
			if err == nil {
				db.Close()
				t.Fatalf("opened, want the error %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if after := schemaText(t, path); after != before {
				t.Errorf("the refused database changed:\n%s", storetest.Diff(before, after))
			}
		})
	}
}
