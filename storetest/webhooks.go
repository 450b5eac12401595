package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// runWebhooks runs the tests of webhook endpoints: who may manage them,
// their validation, storage, paging and secrets. open returns a fresh,
// empty database for each subtest.
func runWebhooks(t *testing.T, open func(t *testing.T) memstore.Database) {
	t.Run("WebhookEndpoints", func(t *testing.T) { testWebhookEndpoints(t, open(t)) })
	t.Run("WebhookCallers", func(t *testing.T) { testWebhookCallers(t, open(t)) })
}

const hookURL = "http://127.0.0.1:9/hooks"

func webhookWorkspace(t *testing.T, b memstore.Database, name string) *memstore.Caller {
	t.Helper()
	w, err := b.CreateWorkspace(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return keyCaller(w.ID, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_" + name})
}

func testWebhookEndpoints(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	ws := memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true))
	c, other := webhookWorkspace(t, b, "one"), webhookWorkspace(t, b, "two")

	w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, Name: "ops",
		EnabledEvents: []string{memstore.WebhookStoreCreated, memstore.WebhookMemoryCreated, memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	wantPrefix(t, w.ID, "webhook_", "endpoint ID")
	if !strings.HasPrefix(w.Secret, memstore.WebhookSecretPrefix) || w.State != memstore.WebhookEnabled || w.URL != hookURL ||
		w.Name != "ops" || strings.Join(w.EnabledEvents, " ") != "memory_store.created memstore.memory.created" || w.CreatedAt.IsZero() {
		t.Errorf("created %+v", w)
	}
	got, err := ws.Webhook(ctx, c, w.ID)
	if err != nil || got.Secret != "" || got.URL != hookURL || !got.CreatedAt.Equal(w.CreatedAt) || len(got.EnabledEvents) != 2 {
		t.Errorf("Webhook = %+v, %v", got, err)
	}
	_, err = ws.Webhook(ctx, other, w.ID)
	wantError(t, err, memstore.ErrNoWebhook(w.ID), "another workspace's endpoint")
	kept, err := b.Webhook(ctx, c.WorkspaceID, w.ID)
	if err != nil || kept.Secret != w.Secret {
		t.Errorf("the stored secret is %q, %v; want the one created", kept.Secret, err)
	}

	for _, bad := range []memstore.WebhookCreate{
		{URL: hookURL},
		{URL: hookURL, EnabledEvents: []string{"memory.created"}},
		{URL: "ftp://example.com/x", EnabledEvents: []string{memstore.WebhookStoreCreated}},
		{URL: "/relative", EnabledEvents: []string{memstore.WebhookStoreCreated}},
		{URL: "https://user:pw@example.com/", EnabledEvents: []string{memstore.WebhookStoreCreated}},
		{URL: "https://example.com/" + strings.Repeat("a", memstore.MaxWebhookURLLength), EnabledEvents: []string{memstore.WebhookStoreCreated}},
		{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}, Name: strings.Repeat("n", memstore.MaxWebhookNameLength+1)},
	} {
		_, err := ws.CreateWebhook(ctx, c, bad)
		wantCode(t, err, memstore.EInvalid, "create "+bad.URL)
	}

	// Without the allowance, private addresses in any form, localhost
	// names and http are refused, and so is an update to one; a name is
	// taken without DNS (these tests run offline), to be checked on
	// every connection.
	strict := memstore.NewWebhooks(b)
	for _, u := range []string{"https://127.0.0.1/x", "https://10.1.2.3/x", "https://169.254.169.254/latest", "https://[::1]/x", "https://localhost/x",
		"http://93.184.215.14/x", "https://[::ffff:0:127.0.0.1]/x", "https://[::ffff:0:a9fe:a9fe]/latest", "https://[64:ff9b::10.0.0.1]/x",
		"https://api.localhost./x", "https://2130706433/x"} {
		_, err := strict.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: u, EnabledEvents: []string{memstore.WebhookStoreCreated}})
		wantCode(t, err, memstore.EInvalid, "create without the allowance "+u)
	}
	for _, u := range []string{"https://93.184.215.14/x", "https://hooks.example.com/x"} {
		made, err := strict.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: u, EnabledEvents: []string{memstore.WebhookStoreCreated}})
		if err != nil {
			t.Errorf("create %s: %v", u, err)
			continue
		}
		translated := "https://[::ffff:0:10.0.0.1]/x"
		_, err = strict.UpdateWebhook(ctx, c, made.ID, memstore.WebhookUpdate{URL: &translated})
		wantCode(t, err, memstore.EInvalid, "update to "+translated)
		if made.URL != "https://93.184.215.14/x" { // that one stays, the second of the endpoints paged below
			if err := strict.DeleteWebhook(ctx, c, made.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	name, state, url := "renamed", memstore.WebhookDisabled, "https://example.com/new"
	up, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{Name: &name, State: &state, URL: &url, EnabledEvents: []string{memstore.WebhookMemoryDeleted}})
	if err != nil || up.Name != "renamed" || up.State != memstore.WebhookDisabled || up.URL != url || up.Secret != "" ||
		strings.Join(up.EnabledEvents, " ") != memstore.WebhookMemoryDeleted || up.UpdatedAt.Before(w.UpdatedAt) {
		t.Errorf("UpdateWebhook = %+v, %v", up, err)
	}
	bogus := memstore.WebhookState("paused")
	_, err = ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{State: &bogus})
	wantCode(t, err, memstore.EInvalid, "an unknown state")
	_, err = ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{EnabledEvents: []string{}})
	wantCode(t, err, memstore.EInvalid, "no event types")
	_, err = ws.UpdateWebhook(ctx, other, w.ID, memstore.WebhookUpdate{Name: &name})
	wantCode(t, err, memstore.ENotFound, "update another workspace's endpoint")
	if got, _ := ws.Webhook(ctx, c, w.ID); got.Name != "renamed" || got.URL != url {
		t.Errorf("a refused update changed the endpoint: %+v", got)
	}

	secret, err := ws.RegenerateWebhookSecret(ctx, c, w.ID)
	if err != nil || !strings.HasPrefix(secret, memstore.WebhookSecretPrefix) || secret == w.Secret {
		t.Errorf("RegenerateWebhookSecret = %q, %v", secret, err)
	}
	if kept, _ := b.Webhook(ctx, c.WorkspaceID, w.ID); kept.Secret != secret {
		t.Errorf("the stored secret is not the regenerated one")
	}
	_, err = ws.RegenerateWebhookSecret(ctx, other, w.ID)
	wantCode(t, err, memstore.ENotFound, "regenerate another workspace's secret")

	// Paging: the two made, then more up to the limit, the last few
	// raced for by more creates than there is room for: exactly the room
	// is made, and the limit refuses the rest and one more.
	const room, racers = 3, 8
	createOne := func(c *memstore.Caller) error {
		_, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreDeleted}})
		return err
	}
	for i := 2; i < memstore.MaxWebhookEndpoints-room; i++ {
		if err := createOne(c); err != nil {
			t.Fatal(err)
		}
	}
	made, errs := race(racers, func() error { return createOne(c) })
	if made != room {
		t.Errorf("%d concurrent creates made %d endpoints with room for %d", racers, made, room)
	}
	for _, err := range errs {
		wantRefusal(t, err, memstore.ErrWebhookLimit(c.WorkspaceID), "", "a concurrent endpoint beyond the limit")
	}
	wantRefusal(t, createOne(c), memstore.ErrWebhookLimit(c.WorkspaceID), "", "an endpoint beyond the limit")
	if err := createOne(webhookWorkspace(t, b, "three")); err != nil {
		t.Errorf("an endpoint in another workspace while the first is full: %v", err)
	}
	var seen []string
	f := memstore.WebhookFilter{Limit: 7, Asc: true}
	for {
		items, more, err := ws.Webhooks(ctx, c, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Secret != "" {
				t.Errorf("Webhooks shows a secret")
			}
			seen = append(seen, it.ID)
		}
		if !more {
			break
		}
		f.AfterID = items[len(items)-1].ID
	}
	if len(seen) != memstore.MaxWebhookEndpoints || seen[0] != w.ID {
		t.Fatalf("listed %d endpoints by pages, first %v; want %d, first %s", len(seen), seen[:1], memstore.MaxWebhookEndpoints, w.ID)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("endpoints out of order: %v", seen)
		}
	}
	desc, more, err := ws.Webhooks(ctx, c, memstore.WebhookFilter{Limit: 3})
	if err != nil || !more || len(desc) != 3 || desc[0].ID != seen[len(seen)-1] {
		t.Errorf("newest first: %d, more %v, %v", len(desc), more, err)
	}
	// The first of those before it in list order, as the hosted API pages.
	before, more, err := ws.Webhooks(ctx, c, memstore.WebhookFilter{Limit: 2, BeforeID: seen[5], Asc: true})
	if err != nil || !more || len(before) != 2 || before[0].ID != seen[0] || before[1].ID != seen[1] {
		t.Errorf("before %s: %v, more %v, %v", seen[5], before, more, err)
	}
	if items, _, _ := ws.Webhooks(ctx, c, memstore.WebhookFilter{}); len(items) != memstore.DefaultPageSize || items[0].ID != seen[len(seen)-1] {
		t.Errorf("the default page: %d endpoints, newest first", len(items))
	}
	if items, _, _ := ws.Webhooks(ctx, other, memstore.WebhookFilter{Limit: 100}); len(items) != 0 {
		t.Errorf("another workspace lists %d endpoints", len(items))
	}
	_, _, err = ws.Webhooks(ctx, c, memstore.WebhookFilter{Limit: 1000})
	wantCode(t, err, memstore.EInvalid, "an oversized page")

	wantCode(t, ws.DeleteWebhook(ctx, other, w.ID), memstore.ENotFound, "delete another workspace's endpoint")
	if err := ws.DeleteWebhook(ctx, c, w.ID); err != nil {
		t.Fatal(err)
	}
	_, err = ws.Webhook(ctx, c, w.ID)
	wantCode(t, err, memstore.ENotFound, "a deleted endpoint")
	wantCode(t, ws.DeleteWebhook(ctx, c, w.ID), memstore.ENotFound, "delete again")
}

// testWebhookCallers checks that only API keys and admin users manage
// endpoints: never a session token, nor another role.
func testWebhookCallers(t *testing.T, b memstore.Database) {
	ctx := context.Background()
	ws := memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true))
	c := webhookWorkspace(t, b, "one")
	w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	admin := *c
	admin.Role = memstore.RoleAdmin
	if _, err := ws.Webhook(ctx, &admin, w.ID); err != nil {
		t.Errorf("an admin user: %v", err)
	}
	session := *c
	session.Session = &memstore.Session{ID: "sesn_x"}
	for what, caller := range map[string]*memstore.Caller{
		"a session token": &session,
		"a member":        {WorkspaceID: c.WorkspaceID, Actor: c.Actor, Role: memstore.RoleMember},
		"an auditor":      {WorkspaceID: c.WorkspaceID, Actor: c.Actor, Role: memstore.RoleAuditor},
	} {
		_, err := ws.CreateWebhook(ctx, caller, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
		wantCode(t, err, memstore.EPermission, what+" creates")
		_, err = ws.Webhook(ctx, caller, w.ID)
		wantCode(t, err, memstore.EPermission, what+" reads")
		_, _, err = ws.Webhooks(ctx, caller, memstore.WebhookFilter{})
		wantCode(t, err, memstore.EPermission, what+" lists")
		_, err = ws.RegenerateWebhookSecret(ctx, caller, w.ID)
		wantCode(t, err, memstore.EPermission, what+" regenerates")
		wantCode(t, ws.DeleteWebhook(ctx, caller, w.ID), memstore.EPermission, what+" deletes")
	}
	_, err = ws.CreateWebhook(ctx, nil, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
	wantCode(t, err, memstore.EUnauthenticated, "no caller")
}
