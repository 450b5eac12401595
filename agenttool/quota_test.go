package agenttool_test

import (
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestSearchRateLimited: a session searching faster than its share is
// told to wait, with the time, rather than of an internal error; once the
// time has passed it searches again, in one store as in all.
func TestSearchRateLimited(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	ref := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Ref"})
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ts := newToolset(t, services(db, memstore.WithLimits(memstore.Limits{SearchesPerCredential: 1}), memstore.CoreClock(clock)),
		newSession(attach{store: notes}, attach{store: ref}))
	const want = "Error: Memory searches are coming too fast for this session; nothing was searched. Wait 1 second and search again."
	for _, args := range []map[string]any{{"query": "alpha"}, {"query": "alpha", "path_prefix": "/mnt/memory/notes/"}} {
		ok(t, ts, "memory_search", args)
		if got := fails(t, ts, "memory_search", args); got != want {
			t.Errorf("a search beyond the rate (%v):\n%s\nwant:\n%s", args, got, want)
		}
		now = now.Add(time.Second)
	}
}
