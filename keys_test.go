package memstore_test

import (
	"context"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestKeysChecked: an admin manages the workspace's keys, an auditor only
// lists them, a member and a session token do neither, and no caller
// reaches another workspace's key.
func TestKeysChecked(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, "default")
	other := sqlitetest.Workspace(t, db, "other")
	keys := memstore.NewKeys(db)
	as := func(r memstore.Role) *memstore.Caller {
		return &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_" + string(r)}, Role: r}
	}
	admin, auditor, member := as(memstore.RoleAdmin), as(memstore.RoleAuditor), as(memstore.RoleMember)
	sess := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "sesn_x"}, Session: &memstore.Session{ID: "sesn_x"}}

	k, secret, err := keys.CreateAPIKey(ctx, admin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the new key does not work: %v", err)
	}
	foreign, _, err := db.CreateAPIKey(ctx, other.ID, "theirs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*memstore.Caller{auditor, member, sess, nil} {
		if _, _, err := keys.CreateAPIKey(ctx, c, "x"); err == nil {
			t.Errorf("%+v created a key", c)
		}
		if _, err := keys.RevokeAPIKey(ctx, c, k.ID); err == nil {
			t.Errorf("%+v revoked a key", c)
		}
	}
	for _, c := range []*memstore.Caller{member, sess} {
		if _, err := keys.APIKeys(ctx, c); memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%+v listed keys: %v", c, err)
		}
	}
	list, err := keys.APIKeys(ctx, auditor)
	if err != nil || len(list) != 1 || list[0].ID != k.ID {
		t.Fatalf("auditor's list = %+v, %v; want only %s", list, err, k.ID)
	}
	for _, c := range []*memstore.Caller{member, sess} {
		if _, err := keys.APIKey(ctx, c, k.ID); memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%+v got a key: %v", c, err)
		}
	}
	if got, err := keys.APIKey(ctx, auditor, k.ID); err != nil || got.ID != k.ID || got.Name != "ci" {
		t.Errorf("auditor's APIKey = %+v, %v; want %s", got, err, k.ID)
	}
	if _, err := keys.APIKey(ctx, admin, foreign.ID); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("getting another workspace's key: %v, want ENotFound", err)
	}
	if _, err := keys.RevokeAPIKey(ctx, admin, foreign.ID); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("revoking another workspace's key: %v, want ENotFound", err)
	}
	if _, err := db.Authenticate(ctx, secret); err != nil {
		t.Fatalf("a refused revocation stopped the key: %v", err)
	}
	if got, err := keys.RevokeAPIKey(ctx, admin, k.ID); err != nil || got.RevokedAt == nil {
		t.Fatalf("revoke = %+v, %v", got, err)
	}
	if _, err := db.Authenticate(ctx, secret); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked key still works: %v", err)
	}
}
