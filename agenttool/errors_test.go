package agenttool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// every call of every tool on /a.md of the one store mounted at
// /mnt/memory/notes.
var everyCall = []struct{ tool, args string }{
	{"memory_list", `{}`},
	{"memory_list", `{"path_prefix": "/mnt/memory/notes/dir"}`},
	{"memory_search", `{"query": "alpha"}`},
	{"memory_search", `{"query": "alpha", "path_prefix": "/mnt/memory/notes/"}`},
	{"memory_read", `{"path": "/a.md"}`},
	{"memory_write", `{"path": "/a.md", "content": "new"}`},
	{"memory_write", `{"path": "/new.md", "content": "new"}`},
	{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "beta"}`},
	{"memory_delete", `{"path": "/a.md"}`},
}

// TestServiceErrors: every error a service may return reaches the model as
// a message it can act on, and an internal one as a generic message that
// names nothing of the server.
func TestServiceErrors(t *testing.T) {
	secret := errors.New("open /var/lib/memstore/memstore.db: disk I/O error")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"internal", secret, "Error: Memory is unavailable because of an internal error; nothing was changed. Try again later."},
		{"wrapped internal", context.DeadlineExceeded, "Error: Memory is unavailable because of an internal error"},
		{"unauthenticated", memstore.Errorf(memstore.EUnauthenticated, "invalid session token st-memstore-…abcd"),
			"Error: Memory cannot be reached: this session's credentials were refused (the session may have ended)."},
		{"permission", memstore.Errorf(memstore.EPermission, "memory store memstore_x is not attached to session sesn_y"),
			"Error: This session may not do that with /mnt/memory/notes/"},
		{"busy", &memstore.Error{Code: memstore.EConflict, Message: "the database is busy; retry", Retry: true},
			"Error: The memory store mounted at /mnt/memory/notes/ is busy; nothing was changed. Try again in a moment."},
		{"archived", memstore.ErrArchived("memstore_x"),
			"Error: The memory store mounted at /mnt/memory/notes/ is archived"},
		{"store gone", memstore.Errorf(memstore.ENotFound, "memory store memstore_x not found"),
			"Error: The memory store mounted at /mnt/memory/notes/ no longer exists, so /mnt/memory/notes/"},
		{"invalid", memstore.Errorf(memstore.EInvalid, "limit must be between 1 and 100."), "Error: /mnt/memory/notes/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := sqlitetest.Open(t, sqliteOptions)
			notes := newStore(t, db, "Notes", "/a.md", "alpha\n")
			ms := hook(db, func(string) error { return tt.err })
			svc := agenttool.Services{Memories: memstore.NewCore(ms), Search: failingSearch{tt.err}}
			ts := newToolset(t, svc, newSession(attach{store: notes}))
			for _, c := range everyCall {
				got := fails(t, ts, c.tool, c.args)
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("%s %s:\n%s\nwant:\n%s", c.tool, c.args, got, tt.want)
				}
				if strings.Contains(got, "/var/lib") || strings.Contains(got, "disk") || strings.Contains(got, "st-memstore-") {
					t.Errorf("%s %s: the message shows internals: %s", c.tool, c.args, got)
				}
			}
			wantContent(t, db, notes.ID, "/a.md", "alpha\n")
			wantAbsent(t, db, notes.ID, "/new.md")
		})
	}
}

// TestStoreDeleted: a store deleted while attached is reported as gone by
// every tool.
func TestStoreDeleted(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n")
	ts := newToolset(t, services(db), newSession(attach{store: notes}))
	if err := db.DeleteStore(t.Context(), ws, notes.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range everyCall {
		if c.tool == "memory_search" {
			continue // in TestSearch
		}
		wantContains(t, fails(t, ts, c.tool, c.args), "The memory store mounted at /mnt/memory/notes/ no longer exists")
	}
}

// TestListStoreGone: listing every store shows those that can be listed
// and says why another cannot.
func TestListStoreGone(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	gone := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Gone"})
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n")
	ts := newToolset(t, services(db), newSession(attach{store: gone}, attach{store: notes}))
	if err := db.DeleteStore(t.Context(), ws, gone.ID); err != nil {
		t.Fatal(err)
	}
	want := `2 memory stores are attached to this session. Entries up to 2 levels deep in each; an entry ending in / is a directory, which path_prefix lists.

/mnt/memory/gone/ — memory store "Gone", read-write
(not listed: The memory store mounted at /mnt/memory/gone/ no longer exists, so /mnt/memory/gone/ cannot be reached.)

/mnt/memory/notes/ — memory store "Notes", read-write
/mnt/memory/notes/a.md  6 bytes`
	if got := ok(t, ts, "memory_list", nil); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := ok(t, ts, "memory_list", map[string]any{"path_prefix": "/"}); got != want {
		t.Errorf("/ with several stores is their root:\n%s", got)
	}
}
