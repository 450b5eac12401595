package memstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memstore/memstore"
)

// TestWebhooksPages: a page before an endpoint holds the first endpoints
// before it in list order, as the hosted API defines before_id (not those
// just before it), and a filter that gives both cursors is refused by the
// core, not only by the HTTP API.
func TestWebhooksPages(t *testing.T) {
	ctx := context.Background()
	db, ws := openWorkspace(t, "default")
	c := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	hooks := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
	var ids []string // oldest first
	for i := range 5 {
		w, err := hooks.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: fmt.Sprintf("http://127.0.0.1:9/%d", i), EnabledEvents: []string{memstore.WebhookStoreCreated}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	page := func(f memstore.WebhookFilter) ([]string, bool) {
		t.Helper()
		items, more, err := hooks.Webhooks(ctx, c, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range items {
			got = append(got, w.ID)
		}
		return got, more
	}
	// Newest first: before the oldest, the first two in list order.
	if got, more := page(memstore.WebhookFilter{BeforeID: ids[0], Limit: 2}); !slices.Equal(got, []string{ids[4], ids[3]}) || !more {
		t.Errorf("the page before the oldest: %v (more %v), want %v", got, more, []string{ids[4], ids[3]})
	}
	// Oldest first: before the newest, the first two in list order.
	if got, more := page(memstore.WebhookFilter{BeforeID: ids[4], Limit: 2, Asc: true}); !slices.Equal(got, []string{ids[0], ids[1]}) || !more {
		t.Errorf("the page before the newest, oldest first: %v (more %v), want %v", got, more, []string{ids[0], ids[1]})
	}
	if got, more := page(memstore.WebhookFilter{AfterID: ids[4], Limit: 2}); !slices.Equal(got, []string{ids[3], ids[2]}) || !more {
		t.Errorf("the page after the newest: %v (more %v)", got, more)
	}
	if _, _, err := hooks.Webhooks(ctx, c, memstore.WebhookFilter{AfterID: ids[1], BeforeID: ids[3]}); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Errorf("both cursors: %v, want EInvalid", err)
	}
}
