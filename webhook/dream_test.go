package webhook_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/storetest"
	"github.com/memstore/memstore/webhook"
)

// TestDreamEventsDelivered runs two dreams to their end, one completed
// and one failed, and a third canceled: the deliverer posts
// memstore.dream.completed and memstore.dream.failed, signed as every
// event (the SDK's Unwrap verifies them), naming the dream and its
// output store, and nothing for the canceled one.
func TestDreamEventsDelivered(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t)
	co := memstore.NewCore(e.db, memstore.WithDreams(true))
	r := newReceiver(t, always(200))
	w := e.hook(t, r.URL+"/hooks", memstore.WebhookDreamCompleted, memstore.WebhookDreamFailed)
	s := e.store(t, "notes")
	ses, _, _, err := co.CreateSession(ctx, e.c, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(status memstore.DreamStatus, why *memstore.DreamError) *memstore.Dream {
		t.Helper()
		d := storetest.BeganDream(ctx, t, co, e.c, s.ID, ses.ID, "worker")
		if status == memstore.DreamCanceled {
			if _, err := co.CancelDream(ctx, e.c, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := co.FinishDream(ctx, d.ID, "worker", status, memstore.DreamUsage{InputTokens: 1}, why); err != nil {
			t.Fatal(err)
		}
		return d
	}
	completed := run(memstore.DreamCompleted, nil)
	failed := run(memstore.DreamFailed, &memstore.DreamError{Type: memstore.EInvalid, Message: "the model refused"})
	run(memstore.DreamCanceled, nil)
	e.run(t, webhook.Options{AllowPrivate: true})
	waitFor(t, "two deliveries", func() bool { return len(r.deliveries()) >= 2 })

	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("unused"), option.WithWebhookKey(w.Secret))
	type got struct{ typ, id, store string }
	var events []got
	for _, d := range r.deliveries() {
		ev, err := client.Beta.Webhooks.Unwrap(d.body, d.header)
		if err != nil {
			t.Fatalf("Unwrap: %v\n%s", err, d.body)
		}
		var body struct {
			Data struct {
				Type          string `json:"type"`
				ID            string `json:"id"`
				WorkspaceID   string `json:"workspace_id"`
				MemoryStoreID string `json:"memory_store_id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(d.body, &body); err != nil {
			t.Fatal(err)
		}
		if ev.ID != d.header.Get("webhook-id") || body.Data.WorkspaceID != e.c.WorkspaceID {
			t.Errorf("envelope %s", d.body)
		}
		events = append(events, got{body.Data.Type, body.Data.ID, body.Data.MemoryStoreID})
	}
	slices.SortFunc(events, func(a, b got) int { return strings.Compare(a.typ, b.typ) })
	want := []got{{memstore.WebhookDreamCompleted, completed.ID, completed.OutputStoreID}, {memstore.WebhookDreamFailed, failed.ID, failed.OutputStoreID}}
	if !slices.Equal(events, want) {
		t.Errorf("delivered %+v, want %+v", events, want)
	}
	// The canceled dream made no delivery: the endpoint's log holds the
	// two alone.
	if l := e.log(t, w.ID); len(l) != 2 {
		t.Errorf("the endpoint's log holds %d deliveries, want 2: %+v", len(l), l)
	}
}
