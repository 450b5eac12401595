package httpapi_test

import (
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// TestSDKWebhooks calls every method of the Go SDK's
// Beta.Organization.Webhooks and asserts each outcome: the secret is
// shown by create and regenerate only, updates change what they name,
// the list pages as the SDK pages it, a session token is refused, and
// bad input is a 400 that changes nothing.
func TestSDKWebhooks(t *testing.T) { onEachSDKEnv(t, testSDKWebhooks) }

func testSDKWebhooks(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	hooks := &e.sdk.Beta.Organization.Webhooks

	created, err := hooks.New(ctx, anthropic.BetaOrganizationWebhookNewParams{
		URL: "http://127.0.0.1:9/hooks", EnabledEvents: []string{memstore.WebhookStoreCreated, memstore.WebhookMemoryCreated},
		Name: anthropic.String("ops"), Description: anthropic.String("notes"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.SigningSecret, "whsec_") || created.State != "enabled" || created.Name != "ops" || created.Description != "notes" ||
		created.URL != "http://127.0.0.1:9/hooks" || len(created.EnabledEvents) != 2 || created.CreatedAt.IsZero() || created.DisabledReason != "" {
		t.Errorf("New: %s", created.RawJSON())
	}
	got, err := hooks.Get(ctx, created.ID, anthropic.BetaOrganizationWebhookGetParams{})
	if err != nil || got.ID != created.ID || strings.Contains(got.RawJSON(), "signing_secret") || !got.CreatedAt.Equal(created.CreatedAt) {
		t.Errorf("Get: %v %v", got, err)
	}
	up, err := hooks.Update(ctx, created.ID, anthropic.BetaOrganizationWebhookUpdateParams{
		Name: anthropic.String("renamed"), State: anthropic.BetaOrganizationWebhookUpdateParamsStateDisabled,
		EnabledEvents: []string{memstore.WebhookStoreDeleted},
	})
	if err != nil || up.Name != "renamed" || up.State != "disabled" || up.Description != "notes" || strings.Join(up.EnabledEvents, ",") != memstore.WebhookStoreDeleted ||
		strings.Contains(up.RawJSON(), "signing_secret") {
		t.Errorf("Update: %v %v", up, err)
	}
	regen, err := hooks.RegenerateSigningSecret(ctx, created.ID, anthropic.BetaOrganizationWebhookRegenerateSigningSecretParams{})
	if err != nil || !strings.HasPrefix(regen.SigningSecret, "whsec_") || regen.SigningSecret == created.SigningSecret {
		t.Errorf("RegenerateSigningSecret: %v %v", regen, err)
	}

	// Bad input changes nothing.
	_, err = hooks.New(ctx, anthropic.BetaOrganizationWebhookNewParams{URL: "http://127.0.0.1:9/x", EnabledEvents: []string{"nope"}})
	sdkError(t, err, 400, "invalid_request_error", "New with an unknown event type")
	_, err = hooks.Update(ctx, created.ID, anthropic.BetaOrganizationWebhookUpdateParams{URL: anthropic.String("ftp://x/")})
	sdkError(t, err, 400, "invalid_request_error", "Update to an ftp URL")
	_, err = hooks.Get(ctx, "webhook_nope", anthropic.BetaOrganizationWebhookGetParams{})
	sdkError(t, err, 404, "not_found_error", "Get of an unknown endpoint")

	// Three more, then pages of two, newest first, by the SDK's auto-paging.
	ids := []string{created.ID}
	for range 3 {
		w, err := hooks.New(ctx, anthropic.BetaOrganizationWebhookNewParams{URL: "http://127.0.0.1:9/x", EnabledEvents: []string{memstore.WebhookStoreCreated}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	var listed []string
	iter := hooks.ListAutoPaging(ctx, anthropic.BetaOrganizationWebhookListParams{Limit: anthropic.Int(2)})
	for iter.Next() {
		listed = append(listed, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{ids[3], ids[2], ids[1], ids[0]}; strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("listed %v, want %v", listed, want)
	}
	asc, err := hooks.List(ctx, anthropic.BetaOrganizationWebhookListParams{Order: anthropic.BetaOrganizationWebhookListParamsOrderAsc, AfterID: anthropic.String(ids[0])})
	if err != nil || len(asc.Data) != 3 || asc.Data[0].ID != ids[1] || asc.HasMore || asc.FirstID != ids[1] || asc.LastID != ids[3] {
		t.Errorf("List asc after the first: %v %v", asc, err)
	}

	// A session token manages no webhooks, by any method, and changes
	// nothing.
	sess, err := e.sdk.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{
		Agent: anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")}, EnvironmentID: "env_01"})
	if err != nil {
		t.Fatal(err)
	}
	token := sessionToken(t, sess)
	agent := e.client("", option.WithAuthToken(token), option.WithAPIKey(""))
	theirs := &agent.Beta.Organization.Webhooks
	_, err = theirs.List(ctx, anthropic.BetaOrganizationWebhookListParams{})
	sdkError(t, err, 403, "permission_error", "List with a session token")
	_, err = theirs.New(ctx, anthropic.BetaOrganizationWebhookNewParams{URL: "http://127.0.0.1:9/agent", EnabledEvents: []string{memstore.WebhookStoreCreated}})
	sdkError(t, err, 403, "permission_error", "New with a session token")
	_, err = theirs.Get(ctx, created.ID, anthropic.BetaOrganizationWebhookGetParams{})
	sdkError(t, err, 403, "permission_error", "Get with a session token")
	_, err = theirs.Update(ctx, created.ID, anthropic.BetaOrganizationWebhookUpdateParams{URL: anthropic.String("http://127.0.0.1:9/agent")})
	sdkError(t, err, 403, "permission_error", "Update with a session token")
	_, err = theirs.RegenerateSigningSecret(ctx, created.ID, anthropic.BetaOrganizationWebhookRegenerateSigningSecretParams{})
	sdkError(t, err, 403, "permission_error", "RegenerateSigningSecret with a session token")
	_, err = theirs.Delete(ctx, created.ID, anthropic.BetaOrganizationWebhookDeleteParams{})
	sdkError(t, err, 403, "permission_error", "Delete with a session token")
	var log struct{ Data []httpapi.WebhookDeliveryJSON }
	err = agent.Get(ctx, "v1/organizations/webhooks/"+created.ID+"/deliveries", nil, &log)
	sdkError(t, err, 403, "permission_error", "the delivery log with a session token")
	if all, err := hooks.List(ctx, anthropic.BetaOrganizationWebhookListParams{}); err != nil || len(all.Data) != len(ids) {
		t.Errorf("after the session token's attempts: %v %v", all, err)
	}
	if w, err := hooks.Get(ctx, created.ID, anthropic.BetaOrganizationWebhookGetParams{}); err != nil || w.URL != up.URL {
		t.Errorf("after the session token's attempts: %v %v", w, err)
	}

	del, err := hooks.Delete(ctx, created.ID, anthropic.BetaOrganizationWebhookDeleteParams{})
	if err != nil || del.ID != created.ID || del.Type != "webhook_endpoint_deleted" {
		t.Errorf("Delete: %v %v", del, err)
	}
	_, err = hooks.Delete(ctx, created.ID, anthropic.BetaOrganizationWebhookDeleteParams{})
	sdkError(t, err, 404, "not_found_error", "Delete again")
}

// TestWebhookDeliveriesRoute checks memstore's own delivery log of an
// endpoint, GET /v1/organizations/webhooks/{id}/deliveries: a store
// created after the endpoint is pending there at once, and another
// workspace cannot read it.
func TestWebhookDeliveriesRoute(t *testing.T) {
	e := newSDKEnv(t, onSQLite)
	ctx := t.Context()
	w, err := e.sdk.Beta.Organization.Webhooks.New(ctx, anthropic.BetaOrganizationWebhookNewParams{
		URL: "http://127.0.0.1:9/hooks", EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	s := e.newStore(t, "Notes")
	var log struct {
		Data []httpapi.WebhookDeliveryJSON `json:"data"`
	}
	if err := e.sdk.Get(ctx, "v1/organizations/webhooks/"+w.ID+"/deliveries", nil, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Data) != 1 {
		t.Fatalf("deliveries %+v", log.Data)
	}
	d := log.Data[0]
	if d.EventType != memstore.WebhookStoreCreated || d.MemoryStoreID != s.ID || d.State != "pending" || d.Attempts != 0 ||
		d.NextAttemptAt == nil || d.LastAttemptAt != nil || !strings.HasPrefix(d.EventID, "wevt_") {
		t.Errorf("delivery %+v", d)
	}
	_, otherKey := e.h.newAPIKey(t, mustWorkspaceID(t, e.h, "other"), "other")
	other := e.client(otherKey)
	err = other.Get(ctx, "v1/organizations/webhooks/"+w.ID+"/deliveries", nil, &log)
	sdkError(t, err, 404, "not_found_error", "another workspace's log")
	err = e.sdk.Get(ctx, "v1/organizations/webhooks/"+w.ID+"/deliveries?limit=0", nil, &log)
	sdkError(t, err, 400, "invalid_request_error", "limit 0")
}

func mustWorkspaceID(t *testing.T, h *apiHarness, name string) string {
	t.Helper()
	ws, err := h.DB.CreateWorkspace(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID
}
