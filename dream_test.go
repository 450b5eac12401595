package memstore_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestDreamRoles: console users reach dreams as they reach stores: an
// auditor lists and reads them but may not create, cancel or archive
// one; a member and an admin may. A refused call changes nothing.
func TestDreamRoles(t *testing.T) {
	ctx := t.Context()
	db := sqlitetest.Open(t, sqlite.Options{})
	co := memstore.NewCore(db, memstore.WithDreams(true))
	w, err := db.CreateWorkspace(ctx, "roles")
	if err != nil {
		t.Fatal(err)
	}
	key := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_roles"}}
	user := func(r memstore.Role) *memstore.Caller {
		return &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_" + string(r)}, Role: r}
	}
	st, err := co.CreateStore(ctx, key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	ses, _, _, err := co.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	dc := memstore.DreamCreate{Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: st.ID},
		{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}}, Model: memstore.DreamModel{ID: "claude-test"}}
	d, err := co.CreateDream(ctx, key, dc)
	if err != nil {
		t.Fatal(err)
	}

	auditor := user(memstore.RoleAuditor)
	if _, err := co.Dreams(ctx, auditor, memstore.DreamFilter{}); err != nil {
		t.Errorf("an auditor's list: %v", err)
	}
	if _, err := co.Dream(ctx, auditor, d.ID); err != nil {
		t.Errorf("an auditor's get: %v", err)
	}
	for what, call := range map[string]func() error{
		"create":  func() error { _, err := co.CreateDream(ctx, auditor, dc); return err },
		"cancel":  func() error { _, err := co.CancelDream(ctx, auditor, d.ID); return err },
		"archive": func() error { _, err := co.ArchiveDream(ctx, auditor, d.ID); return err },
	} {
		err := call()
		if memstore.ErrorCode(err) != memstore.EPermission || !strings.Contains(memstore.ErrorMessage(err), "the auditor role cannot manage dreams") {
			t.Errorf("an auditor's %s: %v, want a permission_error naming the role", what, err)
		}
	}
	if got, err := co.Dream(ctx, key, d.ID); err != nil || got.Status != memstore.DreamPending {
		t.Errorf("after the auditor's refusals: %v, %v", got, err)
	}
	for _, r := range []memstore.Role{memstore.RoleMember, memstore.RoleAdmin} {
		made, err := co.CreateDream(ctx, user(r), dc)
		if err != nil {
			t.Errorf("a %s's create: %v", r, err)
			continue
		}
		if _, err := co.CancelDream(ctx, user(r), made.ID); err != nil {
			t.Errorf("a %s's cancel: %v", r, err)
		}
	}
	// The permission the console asks before it offers is the call's.
	if memstore.ErrorCode(auditor.CanDream(true)) != memstore.EPermission || auditor.CanDream(false) != nil || key.CanDream(true) != nil {
		t.Error("CanDream does not answer as the calls do")
	}
}
