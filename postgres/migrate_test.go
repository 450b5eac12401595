package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/schema"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/storetest"
)

// The databases of the development builds before the first release
// recorded their schema's version in the table schema_migrations; the
// last of those builds had the release's schema. The tests below make
// such databases from a new one and open them.

// lastDev is the last development build's version.
const lastDev = 13

// asDevelopmentBuild is the statements that make a new database look as
// a development build at version v left it.
func asDevelopmentBuild(v int) []string {
	return []string{`DROP TABLE memstore_schema`,
		// The first release's schema: the search columns in the
		// memories' rows, before 0009 moved them.
		`ALTER TABLE memories ADD COLUMN search_text text, ADD COLUMN search_words tsvector`,
		`UPDATE memories m SET search_text = s.search_text, search_words = s.search_words FROM memory_search s WHERE s.id = m.id`,
		`ALTER TABLE memories ALTER COLUMN search_text SET NOT NULL, ALTER COLUMN search_words SET NOT NULL, ALTER COLUMN search_words SET STORAGE MAIN`,
		`CREATE INDEX memories_words ON memories USING gin (search_words)`,
		`CREATE INDEX memories_trigrams ON memories USING gin (search_text gin_trgm_ops)`,
		`CREATE INDEX memories_path_words ON memories USING gin (ts_filter(search_words, '{a}'))`,
		`DROP TABLE memory_search`, `DROP TABLE search_queue`, `DROP FUNCTION memories_search_queue() CASCADE`,
		// Without the second migration's
		// counts of changes.
		`DROP TABLE change_counts`, `DROP FUNCTION versions_change_count() CASCADE`,
		// Nor the functions of 0007.
		`DROP FUNCTION memory_create`, `DROP FUNCTION memory_overlapping`, `DROP FUNCTION id_after`, `DROP FUNCTION memory_search_words`,
		// Nor the search postings of 0006, which it fills again.
		`DROP TABLE search_postings`, `DROP FUNCTION memories_search_postings() CASCADE`, `DROP FUNCTION memory_search_postings`,
		// Nor the vectors of 0005, nor 0010's switch of their queue.
		`DROP FUNCTION vector_queue_on()`,
		`DROP TABLE memory_vectors`, `DROP TABLE vector_queue`, `DROP TABLE vector_log`, `DROP TABLE vector_log_trimmed`,
		`DROP FUNCTION memories_vector_queue() CASCADE`, `DROP FUNCTION versions_vector_redact() CASCADE`, `DROP FUNCTION memory_vectors_log() CASCADE`,
		// Nor the dreams of 0004.
		`DROP TABLE dreams`, `ALTER TABLE webhook_deliveries DROP COLUMN dream_id`,
		// Nor the session events of 0003.
		`DROP TABLE session_events`,
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
		fmt.Sprintf(`INSERT INTO schema_migrations SELECT generate_series(1, %d), 0`, v)}
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

// emptyDatabase returns the URL of a new database without memstore's
// schema, as another tool that keeps its versions in schema_migrations
// left it.
func emptyDatabase(tb testing.TB) string {
	tb.Helper()
	url := pgtest.DB(tb, migrate)
	execAll(tb, connect(tb, url), `DROP SCHEMA public CASCADE`, `CREATE SCHEMA public`,
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`)
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

// tableRows lists every row of every table of the database at url but
// the tables of schema versions, table by table. The vector queue is
// listed without its order numbers, which a migration that fills it
// again gives anew.
func tableRows(tb testing.TB, url string) string {
	tb.Helper()
	ctx := context.Background()
	conn := connect(tb, url)
	var b strings.Builder
	for _, table := range publicTables(tb, conn) {
		if table == "memstore_schema" || table == "schema_migrations" {
			continue
		}
		t := pgx.Identifier{table}.Sanitize()
		q := `SELECT t::text FROM ` + t + ` t ORDER BY 1`
		if table == "vector_queue" {
			q = `SELECT (memory_id, workspace_id, version_id, attempts, lease_until)::text FROM vector_queue ORDER BY 1`
		}
		rows, err := conn.Query(ctx, q)
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
	if err := db.IndexQueued(t.Context()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The last development build's schema is the first release's but
	// for the table of versions (proven when the release schema was made
	// from its migrations); the second migration fills the counts of
	// changes from the versions, as the trigger kept them.
	before := tableRows(t, url)
	execAll(t, connect(t, url), asDevelopmentBuild(lastDev)...)

	db, log := openLogged(t, url)
	wantUpgradeLogged(t, log, lastDev)
	if after := tableRows(t, url); after != before {
		t.Errorf("the rows changed in the upgrade (-before +after):\n%s", storetest.Diff(before, after))
	}
	if got, want := schemaVersions(t, url), "memstore_schema [1 2 3 4 5 6 7 8 9 10], schema_migrations none"; got != want {
		t.Errorf("the versions recorded after the upgrade: %s, want %s", got, want)
	}
	db.Close()
	db, log = openLogged(t, url)
	if log.String() != "" {
		t.Errorf("opened again, the database was upgraded again:\n%s", log)
	}
	storetest.CheckDatabase(t, db, f)
}

// TestRefuseNewerDatabases shows that a database this memstore does not
// know is refused, and left as it is: one of a newer memstore, one of a
// development build newer than the last this memstore knows, and one of
// an earlier development build, sent to the build that upgrades it.
func TestRefuseNewerDatabases(t *testing.T) {
	for _, c := range []struct {
		name string
		qs   []string
		want string
	}{
		{"newer", []string{`INSERT INTO memstore_schema VALUES (11, 0)`}, "newer than this memstore knows (10): upgrade memstore"},
		{"newer development build", asDevelopmentBuild(lastDev + 1), "made by a development build of memstore newer than this one"},
		{"early development build", asDevelopmentBuild(lastDev - 3), "early development build of memstore (its schema is at development version 10; this memstore takes over version 13 only): open it once with memstore built from commit " + schema.LastDevelopmentBuild},
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
	url := emptyDatabase(t)
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
