package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// Admin are the services that manage a workspace's API keys, console
// users and webhook endpoints for the callers that may: a core's
// (memstore.Keys, Users and Webhooks over the database) or a remote
// core's (httpapi.Client).
type Admin struct {
	Keys     memstore.APIKeyService
	Users    memstore.UserService
	Webhooks memstore.WebhookService
}

// adminOf is the Admin of a core over db, as memstore serve wires it.
func adminOf(db memstore.Database) (Services, Admin) {
	core := memstore.NewCore(db)
	return core, Admin{Keys: memstore.NewKeys(core), Users: memstore.NewUsers(db),
		Webhooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))}
}

// adminEnv is the callers of runAdmin: an API key of workspace one and
// of workspace two, and a session token of workspace one.
type adminEnv struct {
	b            Services
	a            Admin
	one, two     *memstore.Caller
	session      *memstore.Caller
	wsOne, wsTwo string
}

func newAdminEnv(t *testing.T, open func(t *testing.T) (Services, Admin)) *adminEnv {
	t.Helper()
	ctx := t.Context()
	e := &adminEnv{}
	e.b, e.a = open(t)
	for _, w := range []struct {
		id     *string
		caller **memstore.Caller
		name   string
	}{{&e.wsOne, &e.one, "one"}, {&e.wsTwo, &e.two, "two"}} {
		ws, err := e.b.CreateWorkspace(ctx, w.name)
		if err != nil {
			t.Fatal(err)
		}
		*w.id, *w.caller = ws.ID, keyCaller(ws.ID, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetestadmin"})
	}
	st, err := e.b.CreateStore(ctx, e.one, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, secret, err := e.b.CreateSession(ctx, e.one, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if e.session, err = e.b.AuthenticateSession(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return e
}

// runAdmin runs the tests of administration through the services that
// surfaces call: what an API key may do in its workspace, and that a
// session token may do none of it nor a key reach another workspace's.
// open returns fresh, empty services and the Admin over the same
// database for each subtest.
func runAdmin(t *testing.T, open func(t *testing.T) (Services, Admin)) {
	t.Run("APIKeys", func(t *testing.T) { testAdminKeys(t, newAdminEnv(t, open)) })
	t.Run("Users", func(t *testing.T) { testAdminUsers(t, newAdminEnv(t, open)) })
	t.Run("Webhooks", func(t *testing.T) { testAdminWebhooks(t, newAdminEnv(t, open)) })
}

func testAdminKeys(t *testing.T, e *adminEnv) {
	ctx := t.Context()
	ks := e.a.Keys
	k, secret, err := ks.CreateAPIKey(ctx, e.one, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.ID, "apikey_") || k.WorkspaceID != e.wsOne || k.Name != "laptop" || k.Hint != memstore.SecretHint(secret) ||
		!strings.HasPrefix(secret, memstore.APIKeyPrefix) || k.RevokedAt != nil || k.CreatedAt.IsZero() {
		t.Errorf("created %+v with secret %q", k, secret)
	}
	if c, err := e.b.Authenticate(ctx, secret); err != nil || c.WorkspaceID != e.wsOne || c.Actor.ID != k.ID {
		t.Errorf("the new key authenticates as %+v, %v", c, err)
	}
	other, _, err := ks.CreateAPIKey(ctx, e.two, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ks.CreateAPIKey(ctx, e.one, "bad\nname")
	wantCode(t, err, memstore.EInvalid, "a control character in the name")

	got, err := ks.APIKey(ctx, e.one, k.ID)
	if err != nil || got.ID != k.ID || got.Name != "laptop" || got.Hint != k.Hint || !got.CreatedAt.Equal(k.CreatedAt) {
		t.Errorf("APIKey = %+v, %v", got, err)
	}
	p, err := ks.APIKeys(ctx, e.one, "", 0)
	if err != nil || len(p.Items) != 1 || p.Items[0].ID != k.ID || p.Next != "" {
		t.Errorf("APIKeys of workspace one = %+v, %v; want only %s", p, err, k.ID)
	}
	second, _, err := ks.CreateAPIKey(ctx, e.one, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	all, _ := allPages(t, "the keys of workspace one", 1, "", func(page string) (memstore.Page[memstore.APIKey], error) {
		return ks.APIKeys(ctx, e.one, page, 1)
	})
	for _, x := range all {
		ids = append(ids, x.ID)
	}
	if !slices.Equal(ids, []string{k.ID, second.ID}) {
		t.Errorf("the keys page by page: %q, want %q", ids, []string{k.ID, second.ID})
	}

	// Another workspace's key does not exist for this one.
	_, err = ks.APIKey(ctx, e.one, other.ID)
	wantCode(t, err, memstore.ENotFound, "another workspace's key")
	_, err = ks.RevokeAPIKey(ctx, e.one, other.ID)
	wantCode(t, err, memstore.ENotFound, "revoking another workspace's key")
	if got, err := ks.APIKey(ctx, e.two, other.ID); err != nil || got.RevokedAt != nil {
		t.Errorf("another workspace's key after a refused revocation: %+v, %v", got, err)
	}

	// A session token manages no key.
	_, _, err = ks.CreateAPIKey(ctx, e.session, "x")
	wantCode(t, err, memstore.EPermission, "a session token creates a key")
	_, err = ks.APIKeys(ctx, e.session, "", 0)
	wantCode(t, err, memstore.EPermission, "a session token lists keys")
	_, err = ks.APIKey(ctx, e.session, k.ID)
	wantCode(t, err, memstore.EPermission, "a session token reads a key")
	_, err = ks.RevokeAPIKey(ctx, e.session, k.ID)
	wantCode(t, err, memstore.EPermission, "a session token revokes a key")

	r, err := ks.RevokeAPIKey(ctx, e.one, k.ID)
	if err != nil || r.RevokedAt == nil || r.ID != k.ID {
		t.Fatalf("RevokeAPIKey = %+v, %v", r, err)
	}
	_, err = e.b.Authenticate(ctx, secret)
	wantCode(t, err, memstore.EUnauthenticated, "a revoked key")
	if again, err := ks.RevokeAPIKey(ctx, e.one, k.ID); err != nil || !again.RevokedAt.Equal(*r.RevokedAt) {
		t.Errorf("revoking again = %+v, %v; want the first revocation", again, err)
	}
}

func testAdminUsers(t *testing.T, e *adminEnv) {
	ctx := t.Context()
	us := e.a.Users
	ann, err := us.CreateUser(ctx, e.one, memstore.UserCreate{Name: "ann", Role: memstore.RoleAdmin, Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ann.ID, "user_") || ann.WorkspaceID != e.wsOne || ann.Role != memstore.RoleAdmin || !ann.HasPassword || ann.PasswordHash != "" {
		t.Errorf("created %+v", ann)
	}
	bob, err := us.CreateUser(ctx, e.one, memstore.UserCreate{Name: "bob", Role: memstore.RoleAuditor})
	if err != nil || bob.HasPassword {
		t.Fatalf("a user without a password: %+v, %v", bob, err)
	}
	for what, uc := range map[string]memstore.UserCreate{
		"a taken name":     {Name: "ann", Role: memstore.RoleMember, Password: goodPassword},
		"no role":          {Name: "cy", Password: goodPassword},
		"a role unknown":   {Name: "cy", Role: "owner", Password: goodPassword},
		"a short password": {Name: "cy", Role: memstore.RoleMember, Password: "short"},
		"a bad name":       {Name: "c y", Role: memstore.RoleMember},
	} {
		_, err := us.CreateUser(ctx, e.one, uc)
		if what == "a taken name" {
			wantCode(t, err, memstore.EConflict, what)
		} else {
			wantCode(t, err, memstore.EInvalid, what)
		}
	}
	for _, key := range []string{ann.ID, "ann"} {
		if got, err := us.User(ctx, e.one, key); err != nil || got.ID != ann.ID || !got.HasPassword {
			t.Errorf("User(%q) = %+v, %v", key, got, err)
		}
	}
	p, err := us.Users(ctx, e.one, memstore.UserFilter{Limit: 1})
	if err != nil || len(p.Items) != 1 || p.Items[0].Name != "ann" || p.Next == "" {
		t.Fatalf("the first page of users = %+v, %v", p, err)
	}
	if p, err = us.Users(ctx, e.one, memstore.UserFilter{Limit: 1, Page: p.Next}); err != nil || len(p.Items) != 1 || p.Items[0].Name != "bob" || p.Next != "" {
		t.Errorf("the second page of users = %+v, %v", p, err)
	}
	if u, err := us.SetPassword(ctx, e.one, "bob", goodPassword); err != nil || !u.HasPassword || u.ID != bob.ID {
		t.Errorf("SetPassword = %+v, %v", u, err)
	}
	_, err = us.SetPassword(ctx, e.one, "bob", "short")
	wantCode(t, err, memstore.EInvalid, "a short password")
	secret, expires, err := us.CreateSignInLink(ctx, e.one, "bob")
	if err != nil || !strings.HasPrefix(secret, memstore.SignInLinkPrefix) || expires.IsZero() {
		t.Errorf("CreateSignInLink = %q, %v, %v", secret, expires, err)
	}

	// Another workspace's user does not exist for this one.
	cy, err := us.CreateUser(ctx, e.two, memstore.UserCreate{Name: "cy", Role: memstore.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{cy.ID, "cy"} {
		_, err = us.User(ctx, e.one, key)
		wantCode(t, err, memstore.ENotFound, "another workspace's user "+key)
		wantCode(t, us.DeleteUser(ctx, e.one, key), memstore.ENotFound, "deleting another workspace's user "+key)
		_, err = us.SetPassword(ctx, e.one, key, goodPassword)
		wantCode(t, err, memstore.ENotFound, "setting another workspace's user's password "+key)
		_, _, err = us.CreateSignInLink(ctx, e.one, key)
		wantCode(t, err, memstore.ENotFound, "a sign-in link for another workspace's user "+key)
	}
	if got, err := us.User(ctx, e.two, cy.ID); err != nil || got.HasPassword {
		t.Errorf("another workspace's user after refusals: %+v, %v", got, err)
	}

	// A session token manages no user.
	_, err = us.CreateUser(ctx, e.session, memstore.UserCreate{Name: "dee", Role: memstore.RoleMember})
	wantCode(t, err, memstore.EPermission, "a session token creates a user")
	_, err = us.Users(ctx, e.session, memstore.UserFilter{})
	wantCode(t, err, memstore.EPermission, "a session token lists users")
	_, err = us.User(ctx, e.session, "ann")
	wantCode(t, err, memstore.EPermission, "a session token reads a user")
	wantCode(t, us.DeleteUser(ctx, e.session, "ann"), memstore.EPermission, "a session token deletes a user")
	_, err = us.SetPassword(ctx, e.session, "ann", goodPassword)
	wantCode(t, err, memstore.EPermission, "a session token sets a password")
	_, _, err = us.CreateSignInLink(ctx, e.session, "ann")
	wantCode(t, err, memstore.EPermission, "a session token makes a sign-in link")

	if err := us.DeleteUser(ctx, e.one, "bob"); err != nil {
		t.Fatal(err)
	}
	_, err = us.User(ctx, e.one, bob.ID)
	wantCode(t, err, memstore.ENotFound, "a deleted user")
	wantCode(t, us.DeleteUser(ctx, e.one, "bob"), memstore.ENotFound, "deleting again")
}

func testAdminWebhooks(t *testing.T, e *adminEnv) {
	ctx := t.Context()
	ws := e.a.Webhooks
	w, err := ws.CreateWebhook(ctx, e.one, memstore.WebhookCreate{URL: hookURL, Name: "ops", EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Secret, memstore.WebhookSecretPrefix) || w.State != memstore.WebhookEnabled || w.Name != "ops" || w.URL != hookURL {
		t.Errorf("created %+v", w)
	}
	got, err := ws.Webhook(ctx, e.one, w.ID)
	if err != nil || got.Secret != "" || got.Name != "ops" || got.WorkspaceID != e.wsOne {
		t.Errorf("Webhook = %+v, %v", got, err)
	}
	disabled := memstore.WebhookDisabled
	u, err := ws.UpdateWebhook(ctx, e.one, w.ID, memstore.WebhookUpdate{State: &disabled, Name: ptr("ops2"),
		EnabledEvents: []string{memstore.WebhookMemoryCreated, memstore.WebhookStoreDeleted}})
	if err != nil || u.State != memstore.WebhookDisabled || u.Name != "ops2" || u.URL != hookURL || u.Secret != "" ||
		strings.Join(u.EnabledEvents, " ") != memstore.WebhookMemoryCreated+" "+memstore.WebhookStoreDeleted {
		t.Errorf("UpdateWebhook = %+v, %v", u, err)
	}
	enabled := memstore.WebhookEnabled
	if u, err = ws.UpdateWebhook(ctx, e.one, w.ID, memstore.WebhookUpdate{State: &enabled}); err != nil || u.State != memstore.WebhookEnabled || u.Name != "ops2" {
		t.Errorf("enabled again: %+v, %v", u, err)
	}
	_, err = ws.UpdateWebhook(ctx, e.one, w.ID, memstore.WebhookUpdate{URL: ptr("ftp://example.com/")})
	wantCode(t, err, memstore.EInvalid, "an ftp URL")
	secret, err := ws.RegenerateWebhookSecret(ctx, e.one, w.ID)
	if err != nil || !strings.HasPrefix(secret, memstore.WebhookSecretPrefix) || secret == w.Secret {
		t.Errorf("RegenerateWebhookSecret = %q, %v", secret, err)
	}
	if ds, err := ws.WebhookDeliveries(ctx, e.one, w.ID, 10); err != nil || len(ds) != 0 {
		t.Errorf("WebhookDeliveries = %+v, %v; want none yet", ds, err)
	}
	items, more, err := ws.Webhooks(ctx, e.one, memstore.WebhookFilter{})
	if err != nil || more || len(items) != 1 || items[0].ID != w.ID || items[0].Secret != "" {
		t.Errorf("Webhooks = %+v, %v, %v", items, more, err)
	}

	// Another workspace's endpoint does not exist for this one.
	o, err := ws.CreateWebhook(ctx, e.two, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Webhook(ctx, e.one, o.ID)
	wantCode(t, err, memstore.ENotFound, "another workspace's endpoint")
	_, err = ws.UpdateWebhook(ctx, e.one, o.ID, memstore.WebhookUpdate{State: &disabled})
	wantCode(t, err, memstore.ENotFound, "disabling another workspace's endpoint")
	_, err = ws.RegenerateWebhookSecret(ctx, e.one, o.ID)
	wantCode(t, err, memstore.ENotFound, "regenerating another workspace's secret")
	wantCode(t, ws.DeleteWebhook(ctx, e.one, o.ID), memstore.ENotFound, "deleting another workspace's endpoint")
	_, err = ws.WebhookDeliveries(ctx, e.one, o.ID, 10)
	wantCode(t, err, memstore.ENotFound, "another workspace's deliveries")
	if got, err := ws.Webhook(ctx, e.two, o.ID); err != nil || got.State != memstore.WebhookEnabled {
		t.Errorf("another workspace's endpoint after refusals: %+v, %v", got, err)
	}

	// A session token manages no endpoint.
	_, err = ws.CreateWebhook(ctx, e.session, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
	wantCode(t, err, memstore.EPermission, "a session token creates an endpoint")
	_, _, err = ws.Webhooks(ctx, e.session, memstore.WebhookFilter{})
	wantCode(t, err, memstore.EPermission, "a session token lists endpoints")
	_, err = ws.UpdateWebhook(ctx, e.session, w.ID, memstore.WebhookUpdate{State: &disabled})
	wantCode(t, err, memstore.EPermission, "a session token disables an endpoint")
	wantCode(t, ws.DeleteWebhook(ctx, e.session, w.ID), memstore.EPermission, "a session token deletes an endpoint")

	if err := ws.DeleteWebhook(ctx, e.one, w.ID); err != nil {
		t.Fatal(err)
	}
	_, err = ws.Webhook(ctx, e.one, w.ID)
	wantCode(t, err, memstore.ENotFound, "a deleted endpoint")
}
