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
	_, _, secret, err := e.core.CreateSession(t.Context(), &memstore.Caller{WorkspaceID: ws.ID, Actor: e.admin.Actor}, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestWorkspaceShareOfSessions: one workspace opens MCP sessions as fast
// as it can, from several memstore sessions, and holds no more than its
// share of the server's: at the share, a memstore session that holds
// none of them is refused (429, naming the flag), and none of the
// workspace's sessions is closed for it. Another workspace's client then
// connects at once.
func TestWorkspaceShareOfSessions(t *testing.T) {
	e := newEnv(t)
	const max, share, perSession = 8, 4, 2
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: max, MaxSessionsPerWorkspace: share, MaxSessionsPerSession: perSession})
	type opened struct{ sid, token string }
	var kept []opened
	for i := range max / perSession {
		_, token := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
		for range perSession {
			if i < share/perSession {
				kept = append(kept, opened{open(t, srv.URL, token), token})
				continue
			}
			a := post(t, srv.URL, token, "", initialize("beyond the share"))
			if a.status != http.StatusTooManyRequests || a.sessionID != "" {
				t.Errorf("memstore session %d, holding none of its workspace's %d MCP sessions, opening one: %d %.200s; want 429", i, share, a.status, a.body)
				continue
			}
			if _, msg := rpcError(t, a); !strings.Contains(msg, "--mcp-max-sessions-per-workspace") {
				t.Errorf("message %q; want it to name the flag", msg)
			}
		}
	}
	if n := h.OpenSessions(); n != share {
		t.Errorf("one workspace holds %d MCP sessions; want its share, %d", n, share)
	}
	for i, o := range kept {
		if a := post(t, srv.URL, o.token, o.sid, toolsList); a.status != 200 {
			t.Errorf("session %d, opened within the share: %d %.200s; want it still open", i, a.status, a.body)
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

// TestWorkspaceShareSparesOthersSessions: a memstore session (token A)
// that keeps opening MCP sessions in a workspace at its share closes only
// its own, least recently used first: the MCP sessions of another
// memstore session of the workspace (token B) stay open.
func TestWorkspaceShareSparesOthersSessions(t *testing.T) {
	e := newEnv(t)
	const share = 4
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 16, MaxSessionsPerWorkspace: share, MaxSessionsPerSession: 16})
	_, tokenB := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	b := []string{open(t, srv.URL, tokenB), open(t, srv.URL, tokenB)}
	var a []string
	for range 3 * share {
		a = append(a, open(t, srv.URL, e.secret))
	}
	if n := h.OpenSessions(); n != share {
		t.Errorf("the workspace holds %d MCP sessions; want its share, %d", n, share)
	}
	for i, sid := range b {
		if ans := post(t, srv.URL, tokenB, sid, toolsList); ans.status != 200 {
			t.Errorf("token B's MCP session %d, after token A filled the workspace's share: %d %.200s; want it still open", i, ans.status, ans.body)
		}
	}
	for i, sid := range a {
		want := http.StatusNotFound // closed to make room for A's next, oldest first
		if i >= len(a)-(share-len(b)) {
			want = 200
		}
		if ans := post(t, srv.URL, e.secret, sid, toolsList); ans.status != want {
			t.Errorf("token A's MCP session %d of %d: %d %.200s; want %d", i, len(a), ans.status, ans.body, want)
		}
	}
}

// TestWorkspaceShareFromPool: without MaxSessionsPerWorkspace, a
// workspace's share is a quarter of MaxSessions, whatever it is; a share
// as large as MaxSessions is none, and the server's cap decides (503).
func TestWorkspaceShareFromPool(t *testing.T) {
	e := newEnv(t)
	_, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 8})
	_, other := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	open(t, srv.URL, e.secret)
	open(t, srv.URL, e.secret)
	if a := post(t, srv.URL, other, "", initialize("a third")); a.status != http.StatusTooManyRequests {
		t.Errorf("a third MCP session of the workspace, with MaxSessions 8: %d %.200s; want 429, a share of 2", a.status, a.body)
	}

	e = newEnv(t)
	_, srv = serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 2, MaxSessionsPerWorkspace: 2, MaxSessionsPerSession: 2})
	open(t, srv.URL, e.secret)
	open(t, srv.URL, e.secret)
	if a := post(t, srv.URL, e.secret, "", initialize("a third")); a.status != http.StatusServiceUnavailable {
		t.Errorf("a third MCP session of a memstore session whose shares are the server's 2: %d %.200s; want 503", a.status, a.body)
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
