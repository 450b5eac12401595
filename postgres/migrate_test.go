package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/storetest"
)

// The databases of the development builds before the first release: their
// schema came from the migrations of migrations/dev, recorded in the
// table schema_migrations. The tests below make such databases as those
// builds did, by those migrations, and open them.

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

// connect opens a connection to the database at url, closed when tb
// ends.
func connect(tb testing.TB, url string) *pgx.Conn {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// execAll runs each statement of qs on conn.
func execAll(tb testing.TB, conn *pgx.Conn, qs ...string) {
	tb.Helper()
	for _, q := range qs {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
}

// devDatabase returns the URL of a new database as a development build
// made it at development version v: that build's migrations up to v
// applied in order, and recorded in schema_migrations.
func devDatabase(tb testing.TB, v int) string {
	tb.Helper()
	url := pgtest.DB(tb, migrate)
	conn := connect(tb, url)
	// Empty, as before any memstore opened it: the schema public made
	// again, with its comment, which pg_dump would show otherwise.
	var comment string
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(obj_description('public'::regnamespace), '')`).Scan(&comment); err != nil {
		tb.Fatal(err)
	}
	execAll(tb, conn, `DROP SCHEMA public CASCADE`, `CREATE SCHEMA public`,
		`COMMENT ON SCHEMA public IS '`+strings.ReplaceAll(comment, "'", "''")+`'`,
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`)
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
		execAll(tb, conn, string(b), fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, 0)`, n))
	}
	return url
}

// openLogged opens the database at url with its log in the returned
// buffer.
func openLogged(tb testing.TB, url string) (*postgres.DB, *syncbuf.Buffer) {
	tb.Helper()
	var log syncbuf.Buffer
	db, err := postgres.Open(context.Background(), url, postgres.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, &log
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
// versions, once opened, has the schema of a new database, as pg_dump
// writes it (every table, column, constraint, index, function, trigger,
// extension and text search configuration), with the version a new
// database records. The upgrade is logged.
func TestUpgradeDevSchema(t *testing.T) {
	want := schemaText(t, pgtest.DB(t, migrate))
	for v := 1; v <= len(devMigrations(t)); v++ {
		t.Run(fmt.Sprint("from ", v), func(t *testing.T) {
			url := devDatabase(t, v)
			db, log := openLogged(t, url)
			db.Close()
			if got := schemaText(t, url); got != want {
				t.Errorf("the schema after the upgrade differs from a new database's (-new +upgraded):\n%s", storetest.Diff(want, got))
			}
			wantUpgradeLogged(t, log, v)
		})
	}
}

// tableRows lists every row of every table of the database at url but
// the tables of schema versions, table by table.
func tableRows(tb testing.TB, url string) string {
	tb.Helper()
	ctx := context.Background()
	conn := connect(tb, url)
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname NOT IN ('memstore_schema', 'schema_migrations') ORDER BY c.relname`)
	if err != nil {
		tb.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		t := pgx.Identifier{table}.Sanitize()
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+t+` t ORDER BY 1`)
		if err != nil {
			tb.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n\t%s\n", table, strings.Join(lines, "\n\t"))
	}
	return b.String()
}

// schemaVersions are the versions the database at url records, in
// memstore_schema and in schema_migrations ("none" for a table it does
// not have).
func schemaVersions(tb testing.TB, url string) string {
	tb.Helper()
	ctx := context.Background()
	conn := connect(tb, url)
	var out []string
	for _, table := range []string{"memstore_schema", "schema_migrations"} {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
			tb.Fatal(err)
		}
		if !exists {
			out = append(out, table+" none")
			continue
		}
		rows, err := conn.Query(ctx, `SELECT version FROM `+table+` ORDER BY version`)
		if err != nil {
			tb.Fatal(err)
		}
		vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, fmt.Sprint(table, " ", vs))
	}
	return strings.Join(out, ", ")
}

// TestUpgradeDevDatabase opens a database of every kind of record as the
// last development build left it: every row stays as it was, the
// database is the release's from then on (opened again, it is not
// upgraded again), and everything works: credentials, search, writes,
// the feed and webhooks.
func TestUpgradeDevDatabase(t *testing.T) {
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	f := storetest.FillDatabase(t, db)
	db.Close()
	// The last development build's schema is the release's
	// (TestUpgradeDevSchema) but for the table of versions.
	last := len(devMigrations(t))
	conn := connect(t, url)
	execAll(t, conn, `DROP TABLE memstore_schema`,
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
		fmt.Sprintf(`INSERT INTO schema_migrations SELECT generate_series(1, %d), 0`, last))
	before := tableRows(t, url)

	db, log := openLogged(t, url)
	wantUpgradeLogged(t, log, last)
	if after := tableRows(t, url); after != before {
		t.Errorf("the rows changed in the upgrade (-before +after):\n%s", storetest.Diff(before, after))
	}
	if got, want := schemaVersions(t, url), "memstore_schema [1], schema_migrations none"; got != want {
		t.Errorf("the versions recorded after the upgrade: %s, want %s", got, want)
	}
	db.Close()
	db, log = openLogged(t, url)
	if log.String() != "" {
		t.Errorf("opened again, the database was upgraded again:\n%s", log)
	}
	storetest.CheckDatabase(t, db, f)
}

// searchColumns is the SQL of the values of a memory's search columns,
// search_text and search_words, as memstore makes them (search.go).
func searchColumns(path, content string) string {
	words := func(s string) string {
		var ws []string
		for w := range searchtext.Words(s) {
			ws = append(ws, w.Fold)
		}
		return strings.Join(ws, " ")
	}
	return fmt.Sprintf(`'%s', setweight(to_tsvector('memstore', '%s'), 'A') || setweight(to_tsvector('memstore', '%s'), 'B')`,
		searchtext.Fold(path)+"\n"+searchtext.Fold(content), words(path), words(content))
}

// TestUpgradeFirstDevDatabase opens a database that the first
// development build made (development version 1) with rows of every kind
// it kept: the development migrations carry them as they did. Each
// store's feed is made from its versions (a rename where the path
// changed), redactions and archive (whose actor was not kept); each
// store counts its live memories and their size, as the limit of
// memories per store reads them; search finds the memories; and every
// list of versions reads back.
func TestUpgradeFirstDevDatabase(t *testing.T) {
	ctx := context.Background()
	url := devDatabase(t, 1)
	const (
		ws         = "wrkspc_migration"
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
	execAll(t, connect(t, url), replaceAll(realIDs,
		`INSERT INTO workspaces VALUES ('wrkspc_migration', 'migration', 0)`,
		`INSERT INTO stores VALUES ('memstore_notes', 'wrkspc_migration', 'notes', '', '{}', 0, 0, NULL),
			('memstore_old', 'wrkspc_migration', 'old', '', '{}', 0, 100000000000, 100000000000)`,
		// In notes: a memory created, changed, renamed, its first version
		// redacted; another created and deleted.
		`INSERT INTO versions VALUES
			('memver_01', 'memstore_notes', 'mem_a', 'created', NULL, NULL, NULL, NULL, 1000000000, 'api_actor', 'apikey_alice', 4000000000, 'user_actor', 'user_admin'),
			('memver_02', 'memstore_notes', 'mem_a', 'modified', '/zoo/lemur.md', 'ring-tailed lemur', 'h2', 17, 2000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_03', 'memstore_notes', 'mem_a', 'modified', '/zoo/lemurs.md', 'ring-tailed lemur, curious', 'h3', 26, 3000000000, 'api_actor', 'apikey_alice', NULL, NULL, NULL),
			('memver_05', 'memstore_notes', 'mem_b', 'created', '/todo.md', 'buy milk', 'h5', 8, 5000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_06', 'memstore_notes', 'mem_b', 'deleted', '/todo.md', NULL, NULL, NULL, 6000000000, 'session_actor', 'sesn_agent', NULL, NULL, NULL),
			('memver_07', 'memstore_old', 'mem_c', 'created', '/old.md', 'from before', 'h7', 11, 7000000000, 'api_actor', 'apikey_alice', NULL, NULL, NULL)`,
		`INSERT INTO memories VALUES
			('mem_a', 'memstore_notes', '/zoo/lemurs.md', 'ring-tailed lemur, curious', 'h3', 26, 'memver_03', 1000000000, 3000000000, `+searchColumns("/zoo/lemurs.md", "ring-tailed lemur, curious")+`),
			('mem_c', 'memstore_old', '/old.md', 'from before', 'h7', 11, 'memver_07', 7000000000, 7000000000, `+searchColumns("/old.md", "from before")+`)`,
	)...)

	db, log := openLogged(t, url)
	wantUpgradeLogged(t, log, 1)
	c := &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key}}
	co := memstore.NewCore(db, memstore.MaxMemoriesPerStore(3))
	for id, want := range map[string][2]int64{notes: {1, 26}, old: {1, 11}} {
		st, err := co.Store(ctx, c, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.MemoryCount != want[0] || st.ContentSize != want[1] {
			t.Errorf("store %s reports %d memories of %d bytes, want %d of %d", id, st.MemoryCount, st.ContentSize, want[0], want[1])
		}
	}
	storetest.CheckDevFixture(t, co, c, notes, old, key, agent, realIDs)
}

// TestUpgradeDevWebhookOutbox opens a database made by a development
// build whose webhooks went through an outbox (development version 8),
// with events waiting in it: each becomes a pending delivery to every
// endpoint that wants it, with one ID per event, and every endpoint gets
// a cursor at the end of the feed of each store of its workspace.
func TestUpgradeDevWebhookOutbox(t *testing.T) {
	ctx := context.Background()
	url := devDatabase(t, 8)
	execAll(t, connect(t, url),
		`INSERT INTO workspaces VALUES ('wrkspc_hooks', 'hooks', 0)`,
		`INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES ('memstore_a', 'wrkspc_hooks', 'a', '', '{}', 1000000000, 1000000000)`,
		`INSERT INTO events VALUES ('memstore_a', 1, 'memory.created', 'memver_a', 'api_actor', 'apikey_a', 2000000000)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_every', 'wrkspc_hooks', '', '', 'http://127.0.0.1:9/', '{memory_store.created,memstore.memory.created}', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_created', 'wrkspc_hooks', '', '', 'http://127.0.0.1:9/', '{memory_store.created}', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at) VALUES
			('wrkspc_hooks', 'memory_store.created', 'memstore_a', '', '', 1000000000),
			('wrkspc_hooks', 'memstore.memory.created', 'memstore_a', 'mem_a', 'memver_a', 2000000000)`,
	)

	db, log := openLogged(t, url)
	wantUpgradeLogged(t, log, 8)
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
	var outbox bool
	if err := connect(t, url).QueryRow(ctx, `SELECT to_regclass('webhook_outbox') IS NOT NULL`).Scan(&outbox); err != nil || outbox {
		t.Errorf("the outbox is still there (%v)", err)
	}
}

// TestRefuseNewerDatabases shows that a database this memstore does not
// know is refused, and left as it is: one of a newer memstore, and one
// of a development build newer than the last this memstore knows.
func TestRefuseNewerDatabases(t *testing.T) {
	for _, c := range []struct {
		name string
		qs   []string
		want string
	}{
		{"newer", []string{`INSERT INTO memstore_schema VALUES (2, 0)`}, "newer than this memstore knows (1): upgrade memstore"},
		{"newer development build", []string{`DROP TABLE memstore_schema`,
			`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
			`INSERT INTO schema_migrations SELECT generate_series(1, 14), 0`}, "made by a development build of memstore newer than this one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := pgtest.DB(t, migrate)
			execAll(t, connect(t, url), c.qs...)
			before := schemaText(t, url)
			db, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err == nil {
				db.Close()
				t.Fatalf("opened, want the error %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if after := schemaText(t, url); after != before {
				t.Errorf("the refused database changed:\n%s", storetest.Diff(before, after))
			}
		})
	}
}

// TestOtherToolsSchemaMigrations: a database that another tool keeps its
// versions in, in a table also named schema_migrations, is no
// development build's: memstore makes its schema beside it and leaves
// that table and its rows alone.
func TestOtherToolsSchemaMigrations(t *testing.T) {
	url := devDatabase(t, 0) // schema_migrations, and no memstore table
	conn := connect(t, url)
	execAll(t, conn, `INSERT INTO schema_migrations VALUES (20260101, 0), (20260102, 0)`)
	db := mustOpenAt(t, url, postgres.Options{})
	if _, err := memstore.NewCore(db).CreateWorkspace(context.Background(), "beside"); err != nil {
		t.Fatalf("memstore's schema was not made: %v", err)
	}
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations WHERE version IN (20260101, 20260102)`).Scan(&n); err != nil || n != 2 {
		t.Errorf("the other tool's schema_migrations: %d of its 2 rows, %v", n, err)
	}
}

// replaceAll is ss, each replaced by r.
func replaceAll(r *strings.Replacer, ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.Replace(s)
	}
	return out
}
