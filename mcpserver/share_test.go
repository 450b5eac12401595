package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/mcpserver"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// otherWorkspace makes a second workspace in e's database, with a store,
// and returns the session token of a session attaching it.
func otherWorkspace(t *testing.T, e *env, name string) string {
	t.Helper()
	ws := sqlitetest.Workspace(t, e.db, name)
	st := sqlitetest.Store(t, e.db, ws.ID, memstore.StoreCreate{Name: "Theirs"})
	_, _, secret, err := e.db.CreateSession(t.Context(), ws.ID, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestWorkspaceShareOfSessions: one workspace opens MCP sessions as fast
// as it can, from several memstore sessions, and holds no more than its
// share of the server's: opening one more closes its least recently used.
// Another workspace's client then connects at once.
func TestWorkspaceShareOfSessions(t *testing.T) {
	e := newEnv(t)
	const max, share, perSession = 8, 4, 2
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: max, MaxSessionsPerWorkspace: share, MaxSessionsPerSession: perSession})
	var sids, tokens []string
	for range max / perSession {
		_, token := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
		for range perSession {
			sids = append(sids, open(t, srv.URL, token))
			tokens = append(tokens, token)
		}
	}
	if n := h.OpenSessions(); n != share {
		t.Errorf("one workspace holds %d MCP sessions; want its share, %d", n, share)
	}
	for i, sid := range sids {
		want := http.StatusNotFound // closed to make room, oldest first
		if i >= len(sids)-share {
			want = 200
		}
		if a := post(t, srv.URL, tokens[i], sid, toolsList); a.status != want {
			t.Errorf("session %d of %d: %d %.200s; want %d", i, len(sids), a.status, a.body, want)
		}
	}

	cs, err := connectHTTP(t.Context(), srv.URL, otherWorkspace(t, e, "other"))
	if err != nil {
		t.Fatalf("another workspace's client, with the first at its share: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Error(err)
	}
}

// TestFullServerReclaims: when one workspace holds every MCP session of
// the server (its share is all of them), another workspace's initialize
// closes the least recently used session of the workspace holding the
// most, until both hold as many; the first cannot take them back.
func TestFullServerReclaims(t *testing.T) {
	e := newEnv(t)
	const max = 4
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: max, MaxSessionsPerWorkspace: max})
	var mine []string
	for range max {
		mine = append(mine, open(t, srv.URL, e.secret))
	}
	other := otherWorkspace(t, e, "other")
	open(t, srv.URL, other)
	if a := post(t, srv.URL, e.secret, mine[0], toolsList); a.status != http.StatusNotFound {
		t.Errorf("the least recently used session of the workspace holding all: %d; want it closed (404)", a.status)
	}
	if a := post(t, srv.URL, e.secret, "", initialize("take it back")); a.status != http.StatusServiceUnavailable {
		t.Errorf("the first workspace, holding 3 of 4, opening another: %d %.200s; want 503", a.status, a.body)
	} else if _, msg := rpcError(t, a); !strings.Contains(msg, "--mcp-max-sessions") {
		t.Errorf("message %q", msg)
	}
	open(t, srv.URL, other) // 2 against 2
	if a := post(t, srv.URL, other, "", initialize("one too many")); a.status != http.StatusServiceUnavailable {
		t.Errorf("the second workspace, holding as many as the first, opening another: %d %.200s; want 503", a.status, a.body)
	}
	if n := h.OpenSessions(); n != max {
		t.Errorf("%d MCP sessions open, want %d", n, max)
	}
}
