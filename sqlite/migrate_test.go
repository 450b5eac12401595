package sqlite_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/schema"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/storetest"
)

// The databases of the development builds before the first release kept
// application_id 0 and their version in user_version; the last of those
// builds had the release's schema. The tests below make such databases
// from a new one and open them.

// lastDev is the last development build's version.
const lastDev = 18

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
	// The last development build's schema is the first release's but
	// for the mark of the release (proven when the release schema was
	// made from its migrations), without the counts of changes of the
	// second migration, which fills them from the versions: as the
	// trigger kept them; nor the third's session events, the fourth's
	// dreams or the fifth's vectors (whose queue the fifth fills again
	// with every memory), nor the sixth's count of deletions and moves
	// of each store's memories, which starts at 0 (a count that only
	// tells a change from none).
	raw := rawDB(t, path)
	if _, err := raw.Exec(`UPDATE stores SET places_changed = 0`); err != nil {
		t.Fatal(err)
	}
	// The vector log's counter, still at 0, goes with the dropped log.
	before := strings.Replace(tableRows(t, raw), "\nrow of sqlite_sequence\n\t[vector_log 0]\n", "", 1)
	if _, err := raw.Exec(fmt.Sprintf("DROP TRIGGER versions_change_count; DROP TABLE change_counts; DROP TABLE session_events; "+
		"DROP TABLE dreams; ALTER TABLE webhook_deliveries DROP COLUMN dream_id; "+
		"DROP TABLE memory_vectors; DROP TABLE vector_queue; DROP TABLE vector_log; "+
		"DROP TRIGGER memories_vector_insert; DROP TRIGGER memories_vector_changed; DROP TRIGGER versions_vector_redact; "+
		"DROP TRIGGER memories_place_moved; DROP TRIGGER memories_count_delete; ALTER TABLE stores DROP COLUMN places_changed; "+
		"CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN "+
		"UPDATE stores SET memory_count = memory_count - 1, content_size = content_size - old.size WHERE id = old.store_id; END; "+
		"PRAGMA application_id = 0; PRAGMA user_version = %d", lastDev)); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, log := openLogged(t, path)
	wantUpgradeLogged(t, log, lastDev)
	if after := tableRows(t, rawDB(t, path)); after != before {
		t.Errorf("the rows changed in the upgrade (-before +after):\n%s", storetest.Diff(before, after))
	}
	if h := header(t, path); h != "1835363699 6" {
		t.Errorf("application_id and user_version after the upgrade: %s, want memstore's and 6", h)
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

// TestRefuseOtherDatabases shows that a database this memstore does not
// know is refused, and left as it is: one of a newer memstore, one of a
// development build newer than the last this memstore knows, one of an
// earlier development build (sent to the build that upgrades it), and a
// file of another application.
func TestRefuseOtherDatabases(t *testing.T) {
	for _, c := range []struct {
		name, header, want string
	}{
		{"newer", "PRAGMA application_id = 1835363699; PRAGMA user_version = 7", "newer than this memstore knows (6): upgrade memstore"},
		{"newer development build", "PRAGMA application_id = 0; PRAGMA user_version = 19", "made by a development build of memstore newer than this one"},
		{"early development build", "PRAGMA application_id = 0; PRAGMA user_version = 10", "early development build of memstore (its schema is at development version 10; this memstore takes over version 18 only): open it once with memstore built from commit " + schema.LastDevelopmentBuild},
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
