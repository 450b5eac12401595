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

// TestWorkspaceSearchRateLimited: a session refused for its workspace's
// rate, not its own, is told so: its other sessions share that rate.
func TestWorkspaceSearchRateLimited(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ts := newToolset(t, services(db, memstore.WithLimits(memstore.Limits{SearchesPerWorkspace: 1}), memstore.CoreClock(func() time.Time { return now })),
		newSession(attach{store: notes}))
	args := map[string]any{"query": "alpha"}
	ok(t, ts, "memory_search", args)
	const want = "Error: Memory searches are coming too fast for this session's workspace, whose sessions and keys share a rate; nothing was searched. Wait 1 second and search again."
	if got := fails(t, ts, "memory_search", args); got != want {
		t.Errorf("a search beyond the workspace's rate:\n%s\nwant:\n%s", got, want)
	}
}
