package memstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestKeysChecked: an admin manages the workspace's keys, an auditor only
// lists them, a member and a session token do neither, and no caller
// reaches another workspace's key.
func TestKeysChecked(t *testing.T) {
	ctx := context.Background()
	db, ws := openWorkspace(t, "default")
	other := sqlitetest.Workspace(t, db, "other")
	core := memstore.NewCore(db)
	keys := memstore.NewKeys(core)
	as := func(r memstore.Role) *memstore.Caller {
		return &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_" + string(r)}, Role: r}
	}
	admin, auditor, member := as(memstore.RoleAdmin), as(memstore.RoleAuditor), as(memstore.RoleMember)
	sess := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "sesn_x"}, Session: &memstore.Session{ID: "sesn_x"}}

	k, secret, err := keys.CreateAPIKey(ctx, admin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the new key does not work: %v", err)
	}
	foreign, _, err := core.CreateAPIKey(ctx, other.ID, "theirs")
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
		if _, err := keys.APIKeys(ctx, c, "", 0); memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%+v listed keys: %v", c, err)
		}
	}
	list, err := keys.APIKeys(ctx, auditor, "", 0)
	if err != nil || len(list.Items) != 1 || list.Items[0].ID != k.ID || list.Next != "" {
		t.Fatalf("auditor's list = %+v, %v; want only %s", list, err, k.ID)
	}
	// Pages: the workspace's keys oldest first, limit at a time, each
	// page's Next where the following one starts.
	var more []string
	for range 4 {
		m, _, err := keys.CreateAPIKey(ctx, admin, "more")
		if err != nil {
			t.Fatal(err)
		}
		more = append(more, m.ID)
	}
	var paged []string
	for page, n := "", 0; ; n++ {
		p, err := keys.APIKeys(ctx, auditor, page, 2)
		if err != nil || n > 3 {
			t.Fatalf("page %d: %+v, %v", n, p, err)
		}
		for _, it := range p.Items {
			paged = append(paged, it.ID)
		}
		if page = p.Next; page == "" {
			break
		}
	}
	if got, want := strings.Join(paged, ","), strings.Join(append([]string{k.ID}, more...), ","); got != want {
		t.Errorf("keys page by page: %s, want %s", got, want)
	}
	if _, err := keys.APIKeys(ctx, auditor, "", memstore.MaxPageSize+1); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Errorf("a limit over the most: %v", err)
	}
	for _, bad := range []string{"apikey_\x00", "\xff\xfe", strings.Repeat("k", 10_000)} {
		if _, err := keys.APIKeys(ctx, auditor, bad, 0); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("cursor %.20q: %v, want EInvalid", bad, err)
		}
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
	if _, err := core.Authenticate(ctx, secret); err != nil {
		t.Fatalf("a refused revocation stopped the key: %v", err)
	}
	if got, err := keys.RevokeAPIKey(ctx, admin, k.ID); err != nil || got.RevokedAt == nil {
		t.Fatalf("revoke = %+v, %v", got, err)
	}
	if _, err := core.Authenticate(ctx, secret); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked key still works: %v", err)
	}
}
