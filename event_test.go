package memstore_test

import (
	"encoding/json"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestTranscriptCallers: the callers the core checks beside API keys and
// tokens. A console user reads a transcript when the role reads sessions
// (admin, auditor) and appends when it manages them (admin); a member
// does neither. The caller of a session that memstore runs itself (its
// Session set, no token: a dream's worker) appends to its own session
// alone.
func TestTranscriptCallers(t *testing.T) {
	ctx := t.Context()
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, "roles")
	core := memstore.NewCore(db)
	key := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_x"}}
	mine, _, _, err := core.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	other, _, _, err := core.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	turn := memstore.Turn{Messages: []memstore.TurnMessage{{Role: "assistant", Content: json.RawMessage(`"done"`)}}}
	user := func(r memstore.Role) *memstore.Caller {
		return &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_" + string(r)}, Role: r}
	}
	for _, tc := range []struct {
		role        memstore.Role
		read, write bool
	}{
		{memstore.RoleAdmin, true, true},
		{memstore.RoleAuditor, true, false},
		{memstore.RoleMember, false, false},
	} {
		c := user(tc.role)
		_, err := core.ListSessionEvents(ctx, c, mine.ID, memstore.SessionEventFilter{})
		if (err == nil) != tc.read || err != nil && memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%s reads a transcript: %v, want allowed %v", tc.role, err, tc.read)
		}
		_, err = core.AppendSessionTurn(ctx, c, mine.ID, turn)
		if (err == nil) != tc.write || err != nil && memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%s appends a turn: %v, want allowed %v", tc.role, err, tc.write)
		}
	}

	worker := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: mine.ID}, Session: mine}
	if _, err := core.AppendSessionTurn(ctx, worker, mine.ID, turn); err != nil {
		t.Errorf("a session's own worker appends: %v", err)
	}
	if _, err := core.AppendSessionTurn(ctx, worker, other.ID, turn); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session's worker appends to another session: %v, want permission_error", err)
	}
	if _, err := core.ListSessionEvents(ctx, worker, other.ID, memstore.SessionEventFilter{}); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session's worker reads another session: %v, want permission_error", err)
	}
	if _, err := core.AppendSessionTurn(ctx, nil, mine.ID, turn); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("no caller: %v", err)
	}
	page, err := core.ListSessionEvents(ctx, key, other.ID, memstore.SessionEventFilter{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("refused appends wrote to the other session: %v %v", page.Items, err)
	}
}
