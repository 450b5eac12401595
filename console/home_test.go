package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

// TestHomePage: the home page shows the workspace at a glance, charts of
// its changes (SVG with a title, a description and a table of the
// numbers), the most active actors and the latest changes, names
// escaped; the security headers are the console's; a member sees no
// count of sessions, and nobody signed out sees the page.
func TestHomePage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	hooks := memstore.NewWebhooks(f.db)
	h := console.New(console.Config{Stores: f.core, Memories: f.core, Versions: f.core, Search: f.core, Sessions: f.core, Activity: f.core,
		Keys: memstore.NewKeys(f.core), Users: memstore.NewUsers(f.db), Webhooks: hooks})
	f.srv.Config.Handler = h
	st, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "<b>evil</b>"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := f.core.CreateMemory(ctx, f.op, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/<i>%d</i>.md", i), Content: "y"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := f.core.CreateSession(ctx, f.op, memstore.SessionCreate{Title: "helper", Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}}); err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, f.signIn(t, "admin"), "/console/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /console/: %d\n%s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Security-Policy"); got != wantCSP(t) {
		t.Errorf("the home page's policy is %q", got)
	}
	for _, want := range []string{
		`<dt>Stores</dt><dd>2</dd>`, `<dt>Memories</dt><dd>4</dd>`, `<dt>Live sessions</dt><dd>1</dd>`,
		`<dd id="changes-24h">4</dd>`, `<dd id="changes-30d">4</dd>`,
		`<svg viewBox="0 0 600 160" role="img" aria-labelledby="chart-kind-title chart-kind-desc"`,
		`<title id="chart-kind-title">Changes by kind of actor</title>`, `<desc id="chart-kind-desc">Changes of each of the last 30 days`,
		`<svg viewBox="0 0 600 160" role="img" aria-labelledby="chart-store-title chart-store-desc"`,
		`API keys: 4</li>`, `&lt;b&gt;evil&lt;/b&gt;: 3</li>`, `Notes: 1</li>`,
		`<summary>The numbers</summary>`,
		`<span class="badge">key</span>`, `/&lt;i&gt;2&lt;/i&gt;.md</a>`,
		`href="/console/activity?actor_type=api_actor&amp;actor=apikey_test"`,
		`<p id="failing">No endpoint is failing.</p>`,
		`<a href="/console/" accesskey="h" aria-current="page">Home</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the home page lacks %s", want)
		}
	}
	for _, bad := range []string{"<b>evil", "<i>2", "<script>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the home page holds %s", bad)
		}
	}
	// A bar a day with a change: today's, of 4 changes, the highest.
	if n := len(regexp.MustCompile(`<rect [^>]*class="c0"><title>[^<]*API keys: 4</title>`).FindAllString(body, -1)); n != 1 {
		t.Errorf("%d bars of today's 4 changes by API keys, want 1", n)
	}
	_, body = f.get(t, f.signIn(t, "member"), "/console/")
	if strings.Contains(body, "Live sessions") || strings.Contains(body, "Webhooks failing") || !strings.Contains(body, `<dd id="changes-30d">4</dd>`) {
		t.Errorf("a member's home page shows sessions or webhooks, or not the changes:\n%s", body)
	}
	resp, _ = f.get(t, f.client(t), "/console/")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/console/signin") {
		t.Errorf("signed out: %d to %q, want the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestMemoryTree: a memory's page shows the tree of its store, the
// directories down to it open, its own entry marked, even past the first
// entries of a long directory, with breadcrumbs from the stores.
func TestMemoryTree(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	for _, p := range []string{"/a/b/c.md", "/a/x.md", "/z.md"} {
		if _, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: p, Content: "y"}); err != nil {
			t.Fatal(err)
		}
	}
	c := f.signIn(t, "member")
	m, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: "/a/b/<em>.md", Content: "y"})
	if err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, c, "/console/stores/"+f.storeID+"/memories/"+m.ID)
	for _, want := range []string{
		`<details open><summary>/</summary>`, `<details open><summary>a/</summary>`, `<details open><summary>b/</summary>`,
		`class="file" aria-current="page">&lt;em&gt;.md</a>`, `>c.md</a>`, `>x.md</a>`, `>z.md</a>`,
		`class="dir">prefs/</a>`,
		`<li><a href="/console/stores">Stores</a></li><li><a href="/console/stores/` + f.storeID + `">Notes</a></li>`,
		`<li aria-current="page">&lt;em&gt;.md</li>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the memory's page lacks %s\n", want)
		}
	}
	// Past the first entries of a directory.
	var far *memstore.Memory
	for i := range 55 {
		if far, err = f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: fmt.Sprintf("/many/m%02d.md", i), Content: "y"}); err != nil {
			t.Fatal(err)
		}
	}
	_, body = f.get(t, c, "/console/stores/"+f.storeID+"/memories/"+far.ID)
	for _, want := range []string{`aria-current="page">m54.md</a>`, `>m00.md</a>`, `class="more">more in many/…</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page of /many/m54.md lacks %s", want)
		}
	}
	if strings.Contains(body, ">m53.md<") {
		t.Error("the tree lists more than the first entries of /many/")
	}
}

// TestShortIDsTimesActors: tables show IDs short, whole on hover, times
// relative with the exact time on hover, actors by kind and name.
func TestShortIDsTimesActors(t *testing.T) {
	f := newFixture(t, "x")
	_, body := f.get(t, f.signIn(t, "admin"), "/console/stores")
	id := regexp.QuoteMeta(f.storeID)
	short := regexp.QuoteMeta("memstore_…" + f.storeID[len(f.storeID)-6:])
	for _, re := range []string{
		`<code class="id" title="` + id + `"><span class="full">` + id + `</span><span class="short" aria-hidden="true">` + short + `</span></code>`,
		`<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">just now</time>`,
		`<span class="actor" title="api_actor apikey_test"><span class="badge">key</span> <code class="id"`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("the stores page lacks %s\n%s", re, body)
		}
	}
}
