package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// A DatabaseBackend is a whole database: every kind of record a
// memstore database keeps, as a database made by an earlier memstore
// holds them and must serve them once its schema is brought up to date.
type DatabaseBackend interface {
	memstore.Backend
	memstore.UserStorage
	memstore.WebhookStorage
	memstore.WebhookDeliveryStorage
}

// Filled is what FillDatabase wrote, for CheckDatabase.
type Filled struct {
	WorkspaceID, Key, Token   string // a workspace, its API key and a session token
	UserName, UserPassword    string // a console user of the workspace, an admin
	Store, ArchivedStore      string
	Memory                    string // a live memory of Store, with the word "pangolin"
	Webhook                   string // an endpoint asking for every event type
	LastEvent                 int64  // Store's last event
	versions, archivedVersion int    // of Store and ArchivedStore
}

// fillWorkspace is FillDatabase's workspace.
const fillWorkspace = "filled"

// FillDatabase writes, through the core and the services over db, records
// of every kind: a workspace with an API key, a webhook endpoint asking
// for every event, two stores (one archived), memories created, changed,
// renamed and deleted, a redacted version, and so their feeds, a session
// with a token, and a console user signed in.
func FillDatabase(t *testing.T, db DatabaseBackend) *Filled {
	t.Helper()
	ctx := context.Background()
	f := &Filled{UserName: "ann", UserPassword: "correct horse battery"}
	co := memstore.NewCore(db)
	w, err := co.CreateWorkspace(ctx, fillWorkspace)
	noError(t, err)
	f.WorkspaceID = w.ID
	_, f.Key, err = co.CreateAPIKey(ctx, w.ID, "laptop")
	noError(t, err)
	c, err := co.Authenticate(ctx, f.Key)
	noError(t, err)
	hook, err := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)).CreateWebhook(ctx, c,
		memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: memstore.WebhookEventTypes})
	noError(t, err)
	f.Webhook = hook.ID

	s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "notes", Description: "what we agreed", Metadata: map[string]string{"team": "core"}})
	noError(t, err)
	f.Store = s.ID
	m, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/zoo/pangolin.md", Content: "scales and a long tongue"})
	noError(t, err)
	f.Memory = m.ID
	_, err = co.UpdateMemory(ctx, c, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("scales, a long tongue, and pangolin facts")})
	noError(t, err)
	_, err = co.UpdateMemory(ctx, c, s.ID, m.ID, memstore.MemoryUpdate{Path: ptr("/animals/pangolin.md")})
	noError(t, err)
	_, err = co.RedactVersion(ctx, c, s.ID, m.VersionID)
	noError(t, err)
	gone, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/todo.md", Content: "buy milk"})
	noError(t, err)
	noError(t, co.DeleteMemory(ctx, c, s.ID, gone.ID, ""))
	f.versions = 5
	old, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "old"})
	noError(t, err)
	f.ArchivedStore = old.ID
	_, err = co.CreateMemory(ctx, c, old.ID, memstore.MemoryCreate{Path: "/old.md", Content: "from before"})
	noError(t, err)
	_, err = co.ArchiveStore(ctx, c, old.ID)
	noError(t, err)
	f.archivedVersion = 1

	_, _, f.Token, err = co.CreateSession(ctx, c, memstore.SessionCreate{
		Title:  "nightly run",
		Stores: []memstore.AttachmentCreate{{StoreID: s.ID, Instructions: "keep the notes tidy"}},
		Fields: map[string]json.RawMessage{"agent": json.RawMessage(`{"name":"helper"}`)},
	})
	noError(t, err)
	us := memstore.NewUsers(db)
	_, err = us.CreateUser(ctx, c, memstore.UserCreate{Name: f.UserName, Role: memstore.RoleAdmin, Password: f.UserPassword})
	noError(t, err)
	_, _, err = us.SignIn(ctx, fillWorkspace, f.UserName, f.UserPassword)
	noError(t, err)
	p, err := co.Events(ctx, c, s.ID, memstore.EventFilter{Limit: memstore.MaxPageSize})
	noError(t, err)
	f.LastEvent = p.Events[len(p.Events)-1].Seq
	return f
}

// CheckDatabase checks that db, opened again over what FillDatabase
// wrote (once its schema was brought up to date, say), serves it: the
// API key, the session token and the console user's password work;
// search finds the memories; a write succeeds, is found, and goes on
// the feed after the events before it; and the webhook endpoint is
// delivered the stores' creations and every change of the feed, the
// write's among them.
func CheckDatabase(t *testing.T, db DatabaseBackend, f *Filled) {
	t.Helper()
	ctx := context.Background()
	co := memstore.NewCore(db)
	c, err := co.Authenticate(ctx, f.Key)
	noError(t, err)
	agent, err := co.AuthenticateSession(ctx, f.Token)
	noError(t, err)
	if _, _, err := memstore.NewUsers(db).SignIn(ctx, fillWorkspace, f.UserName, f.UserPassword); err != nil {
		t.Errorf("the console user cannot sign in: %v", err)
	}

	for _, q := range []string{"pangolin", "tongue", "angol"} {
		p, err := co.SearchMemories(ctx, agent, []string{f.Store}, memstore.SearchQuery{Text: q})
		if err != nil || len(p.Items) != 1 || p.Items[0].Memory.ID != f.Memory {
			t.Errorf("search %q: %v %+v, want the memory %s", q, err, p.Items, f.Memory)
		}
	}
	for _, id := range []string{f.Store, f.ArchivedStore} {
		vs, err := co.Versions(ctx, c, id, memstore.VersionFilter{Limit: 100})
		want := map[string]int{f.Store: f.versions, f.ArchivedStore: f.archivedVersion}[id]
		if err != nil || len(vs.Items) != want {
			t.Errorf("versions of %s: %v, %d, want %d", id, err, len(vs.Items), want)
		}
	}
	st, err := co.Store(ctx, c, f.Store)
	noError(t, err)
	if st.MemoryCount != 1 || st.ContentSize != int64(len("scales, a long tongue, and pangolin facts")) {
		t.Errorf("store %s counts %d memories of %d bytes, want its one memory", f.Store, st.MemoryCount, st.ContentSize)
	}

	m, err := co.CreateMemory(ctx, agent, f.Store, memstore.MemoryCreate{Path: "/zoo/okapi.md", Content: "striped legs, pangolin's neighbour"})
	noError(t, err)
	p, err := co.SearchMemories(ctx, agent, []string{f.Store}, memstore.SearchQuery{Text: "pangolin"})
	if err != nil || len(p.Items) != 2 {
		t.Errorf("search after a write: %v %+v, want both memories", err, p.Items)
	}
	feed, err := co.Events(ctx, c, f.Store, memstore.EventFilter{Limit: memstore.MaxPageSize})
	noError(t, err)
	if n := len(feed.Events); n == 0 || feed.Events[n-1].Seq != f.LastEvent+1 || feed.Events[n-1].VersionID != m.VersionID ||
		feed.Events[n-1].Type != memstore.EventMemoryCreated {
		t.Errorf("the feed after a write ends %+v, want event %d for version %s", feed.Events[max(n-1, 0):], f.LastEvent+1, m.VersionID)
	}

	now := time.Now()
	ds, err := db.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 100, PerEndpoint: 100, AllFeeds: true})
	noError(t, err)
	var got []string
	for _, d := range ds {
		if d.EndpointID == f.Webhook {
			got = append(got, d.Event.Type+" "+d.Event.VersionID)
		}
	}
	for _, want := range []string{memstore.WebhookStoreCreated + " ", memstore.WebhookMemoryCreated + " " + m.VersionID} {
		if !slices.Contains(got, want) {
			t.Errorf("the webhook is delivered %q, want %q among them", got, want)
		}
	}
	if n := len(got); n != 2+int(f.LastEvent)+1+2 { // two stores made, the store's feed and the write, the other's archive and its memory
		t.Errorf("the webhook is delivered %d events, want %d: %q", n, 2+int(f.LastEvent)+1+2, got)
	}
}

// noError ends the test at an unexpected error.
func noError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
