package memstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// allActivity pages through the activity, a few versions a page, and
// returns the IDs it shows.
func allActivity(t *testing.T, core *memstore.Core, c *memstore.Caller, f memstore.ActivityFilter, between func()) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the activity does not end")
		}
		p, err := core.Activity(context.Background(), c, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Items {
			ids = append(ids, v.ID)
		}
		if p.Next == "" {
			return ids
		}
		if between != nil {
			between()
		}
		f.Page = p.Next
	}
}

// TestActivity: the activity merges the stores' versions newest first,
// page after page, with none lost or shown twice, also while writes go
// on; and its filters keep a store's, an actor's or an operation's.
func TestActivity(t *testing.T) {
	ctx := context.Background()
	db, ws := openWorkspace(t, "default")
	core := memstore.NewCore(db)
	key := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_a"}}
	agent := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "sesn_a"}}
	ann := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_ann"}, Role: memstore.RoleMember}
	var stores []string
	for i := range 3 {
		st, err := core.CreateStore(ctx, key, memstore.StoreCreate{Name: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st.ID)
	}
	var want, byKey, byAgent, byAnn, deleted, inFirst []string
	for i := range 21 {
		by := []*memstore.Caller{key, agent, ann}[i%3]
		st := stores[(i/2)%3]
		m, err := core.CreateMemory(ctx, by, st, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", i), Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		vs, _ := core.Versions(ctx, key, st, memstore.VersionFilter{MemoryID: m.ID, Limit: 1})
		ids := []string{vs.Items[0].ID}
		if i%5 == 0 {
			if err := core.DeleteMemory(ctx, by, st, m.ID, ""); err != nil {
				t.Fatal(err)
			}
			vs, _ := core.Versions(ctx, key, st, memstore.VersionFilter{MemoryID: m.ID, Limit: 1})
			deleted = append(deleted, vs.Items[0].ID)
			ids = append(ids, vs.Items[0].ID)
		}
		want = append(want, ids...)
		switch by {
		case key:
			byKey = append(byKey, ids...)
		case agent:
			byAgent = append(byAgent, ids...)
		case ann:
			byAnn = append(byAnn, ids...)
		}
		if st == stores[0] {
			inFirst = append(inFirst, ids...)
		}
	}
	desc := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); slices.Reverse(s); return s }
	for _, tc := range []struct {
		name string
		f    memstore.ActivityFilter
		want []string
	}{
		{"all", memstore.ActivityFilter{Limit: 4}, want},
		{"store", memstore.ActivityFilter{Limit: 4, StoreID: stores[0]}, inFirst},
		{"session", memstore.ActivityFilter{Limit: 4, Actor: agent.Actor}, byAgent},
		{"user", memstore.ActivityFilter{Limit: 4, Actor: ann.Actor}, byAnn},
		{"deleted", memstore.ActivityFilter{Limit: 4, Operation: memstore.OpDeleted}, deleted},
		// Each half of the actor filter works alone: an ID names its kind
		// by its prefix, and a kind alone keeps every actor of that kind.
		{"session ID alone", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{ID: agent.Actor.ID}}, byAgent},
		{"user ID alone", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{ID: ann.Actor.ID}}, byAnn},
		{"API key ID alone", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{ID: key.Actor.ID}}, byKey},
		{"sessions", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{Type: memstore.ActorSession}}, byAgent},
		{"users", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{Type: memstore.ActorUser}}, byAnn},
		{"API keys", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{Type: memstore.ActorAPIKey}}, byKey},
		{"service accounts", memstore.ActivityFilter{Limit: 4, Actor: memstore.Actor{Type: memstore.ActorServiceAccount}}, nil},
	} {
		if got := allActivity(t, core, ann, tc.f, nil); !slices.Equal(got, desc(tc.want)) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, desc(tc.want))
		}
	}
	// Writes between pages neither repeat nor hide the older versions.
	n := 0
	got := allActivity(t, core, ann, memstore.ActivityFilter{Limit: 3}, func() {
		for range 4 {
			n++
			if _, err := core.CreateMemory(ctx, key, stores[n%3], memstore.MemoryCreate{Path: fmt.Sprintf("/late%d.md", n), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !slices.Equal(got[:len(want)], desc(want)) || len(got) != len(want) {
		t.Errorf("with writes between pages:\n got %v\nwant %v", got, desc(want))
	}

	// A session sees its attached stores only; a bad filter or cursor is
	// refused.
	ses := &memstore.Caller{WorkspaceID: ws.ID, Actor: agent.Actor, Session: &memstore.Session{ID: "sesn_a",
		Attachments: []memstore.Attachment{{StoreID: stores[0], Access: memstore.AccessReadOnly}}}}
	p, err := core.Activity(ctx, ses, memstore.ActivityFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Items {
		if v.StoreID != stores[0] {
			t.Fatalf("a session sees store %s's activity", v.StoreID)
		}
	}
	if _, err := core.Activity(ctx, ses, memstore.ActivityFilter{Limit: 10, StoreID: stores[1]}); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session reads an unattached store's activity: %v", err)
	}
	for _, f := range []memstore.ActivityFilter{
		{Limit: 10, Page: "bogus"},
		{Limit: 10, Operation: "renamed"},
		{Limit: 10, Actor: memstore.Actor{Type: "robot", ID: "x"}},
		{Limit: 10, Actor: memstore.Actor{ID: "robot_x"}},
		{Limit: 10, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "apikey_a"}},
		{Limit: 1000},
	} {
		_, err := core.Activity(ctx, ann, f)
		if memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("%+v: %v, want EInvalid", f, err)
		}
		if f.Actor.ID != "" && f.Actor.Type != "robot" && !strings.Contains(memstore.ErrorMessage(err), f.Actor.ID) {
			t.Errorf("%+v: %q does not name the actor", f, memstore.ErrorMessage(err))
		}
	}
	if _, err := core.Activity(ctx, nil, memstore.ActivityFilter{Limit: 10}); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("no caller: %v", err)
	}
}

// TestActivityManyStores: beyond MaxActivityStores stores, the activity
// says it shows only some.
func TestActivityManyStores(t *testing.T) {
	ctx := context.Background()
	db, ws := openWorkspace(t, "default")
	core := memstore.NewCore(db)
	key := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_a"}}
	for i := range memstore.MaxActivityStores + 1 {
		if _, err := core.CreateStore(ctx, key, memstore.StoreCreate{Name: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := core.Activity(ctx, key, memstore.ActivityFilter{Limit: 10})
	if err != nil || !p.Partial {
		t.Errorf("Partial = %v, %v; want true", p.Partial, err)
	}
}
