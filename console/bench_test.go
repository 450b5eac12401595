package console_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

var benchMemories = flag.Int("console.memories", 100_000, "memories in the store of BenchmarkPages")

// benchWords make the memories' text, so that a search has something to
// rank.
var benchWords = strings.Fields("alpha billing cache deploy engine fixture gateway harbor invoice journal kernel ledger " +
	"migration network outage pipeline quota replica schema tenant upgrade vector webhook")

// BenchmarkPages renders each page of the console, as the handler serves
// it (server time, no network), for one store of -console.memories
// memories (100 directories), on SQLite. The store is built once per run,
// through the core, by 8 writers.
func BenchmarkPages(b *testing.B) {
	ctx := context.Background()
	db, core, users, op := openCore(b, "apikey_bench")
	if _, err := users.CreateUser(ctx, op, memstore.UserCreate{Name: "admin", Role: memstore.RoleAdmin, Password: password}); err != nil {
		b.Fatal(err)
	}
	st, err := core.CreateStore(ctx, op, memstore.StoreCreate{Name: "Big"})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	n := *benchMemories
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += len(errs) {
				var text strings.Builder
				for j := range 30 {
					text.WriteString(benchWords[(i*7+j*j)%len(benchWords)])
					text.WriteByte(' ')
				}
				fmt.Fprintf(&text, "note %d", i)
				_, errs[w] = core.CreateMemory(ctx, op, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/d%02d/m%06d.md", i%100, i), Content: text.String()})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d memories in %s", n, time.Since(start).Round(time.Second))
	// One memory with a long history.
	m, err := core.CreateMemory(ctx, op, st.ID, memstore.MemoryCreate{Path: "/history.md", Content: "v0"})
	if err != nil {
		b.Fatal(err)
	}
	var versions []string
	for i := 1; i <= 200; i++ {
		c := fmt.Sprintf("line one\nversion %d\nline three\n", i)
		if _, err := core.UpdateMemory(ctx, op, st.ID, m.ID, memstore.MemoryUpdate{Content: &c}); err != nil {
			b.Fatal(err)
		}
	}
	vs, err := core.Versions(ctx, op, st.ID, memstore.VersionFilter{MemoryID: m.ID, Limit: 2})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vs.Items {
		versions = append(versions, v.ID)
	}
	secret, _, err := users.SignIn(ctx, "default", "admin", password)
	if err != nil {
		b.Fatal(err)
	}
	ses, _, _, err := core.CreateSession(ctx, op, memstore.SessionCreate{Title: "agent", Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := core.CreateAPIKey(ctx, op.WorkspaceID, "ci"); err != nil {
		b.Fatal(err)
	}
	hooks := memstore.NewWebhooks(db)
	hook, err := hooks.CreateWebhook(ctx, op, memstore.WebhookCreate{URL: "https://hooks.example.com/in", EnabledEvents: memstore.WebhookEventTypes})
	if err != nil {
		b.Fatal(err)
	}
	// As many enabled endpoints as a workspace may have: the home page
	// reads the latest deliveries of each.
	for i := 1; i < memstore.MaxWebhookEndpoints; i++ {
		if _, err := hooks.CreateWebhook(ctx, op, memstore.WebhookCreate{URL: fmt.Sprintf("https://hooks.example.com/in%d", i), EnabledEvents: memstore.WebhookEventTypes}); err != nil {
			b.Fatal(err)
		}
	}
	deep, err := core.CreateMemory(ctx, op, st.ID, memstore.MemoryCreate{Path: "/d42/deeper/still/m.md", Content: "deep"})
	if err != nil {
		b.Fatal(err)
	}
	h := console.New(console.Config{Stores: core, Memories: core, Versions: core, Search: core, Sessions: core, Activity: core,
		Keys: memstore.NewKeys(core), Users: users, Webhooks: hooks})
	sid := "/console/stores/" + st.ID
	for _, p := range []struct{ name, path string }{
		{"home", "/console/"},
		{"stores", "/console/stores"},
		{"tree root", sid},
		{"tree dir", sid + "?path=/d42/"},
		{"memory", sid + "/memories/" + m.ID},
		{"memory with tree", sid + "/memories/" + deep.ID},
		{"edit", sid + "/memories/" + m.ID + "/edit"},
		{"history", sid + "/memories/" + m.ID + "/history"},
		{"diff", sid + "/memories/" + m.ID + "/diff?from=" + versions[1] + "&to=" + versions[0]},
		{"version", sid + "/versions/" + versions[0]},
		{"search", sid + "/search?q=" + url.QueryEscape("billing ledger")},
		{"search rare", sid + "/search?q=" + url.QueryEscape("note 4242")},
		{"settings", sid + "/settings"},
		{"activity", "/console/activity"},
		{"activity deleted", "/console/activity?op=deleted"},
		{"activity by key", "/console/activity?actor_type=api_actor&actor=apikey_bench&store=" + st.ID},
		{"sessions", "/console/sessions"},
		{"session", "/console/sessions/" + ses.ID},
		{"keys", "/console/keys"},
		{"transfer", sid + "/transfer"},
		{"webhooks", "/console/webhooks"},
		{"webhook", "/console/webhooks/" + hook.ID},
		{"users", "/console/users"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, p.path, nil)
				req.AddCookie(&http.Cookie{Name: "memstore_console", Value: secret})
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", p.path, rec.Code, rec.Body)
				}
			}
		})
	}
}
