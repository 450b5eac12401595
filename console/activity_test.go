package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestActivityPage: what an agent's session wrote shows in the activity,
// with the session's title, filtered to the session or not; a filter the
// core refuses is shown with its reason.
func TestActivityPage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	ses, agent := f.agentSession(t)
	if _, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: "/agent/today.md", Content: "wrote this"}); err != nil {
		t.Fatal(err)
	}
	member := f.signIn(t, "member")
	all := mustGet(t, f, member, "/console/activity")
	if !strings.Contains(all, "/agent/today.md") || !strings.Contains(all, "/prefs/style.md") {
		t.Errorf("the activity lacks a change: %s", all)
	}
	admin := f.signIn(t, "admin")
	mine := mustGet(t, f, admin, "/console/activity?actor_type=session_actor&actor="+ses.ID+"&store="+f.storeID)
	if !strings.Contains(mine, "/agent/today.md") || !strings.Contains(mine, "Night agent") || strings.Contains(mine, "/prefs/style.md") {
		t.Errorf("the session's activity: %s", mine)
	}
	if del := mustGet(t, f, admin, "/console/activity?op=deleted"); strings.Contains(del, "/agent/today.md") {
		t.Error("the deleted filter shows a creation")
	}
	resp, body := f.get(t, admin, "/console/activity?op=exploded")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "exploded") {
		t.Errorf("a bad operation: %d %s", resp.StatusCode, body)
	}
}

// TestActorAPIKeyName: a change made with an API key shows the key's
// name beside its ID, escaped, to those who may read keys; a member sees
// the ID only.
func TestActorAPIKeyName(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "content")
	k, secret, err := f.core.CreateAPIKey(ctx, f.op.WorkspaceID, `<b>deploy</b> bot`)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.core.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: "/by-key.md", Content: "from a script"})
	if err != nil {
		t.Fatal(err)
	}
	page := "/console/stores/" + f.storeID + "/memories/" + m.ID
	escaped := `title="api_actor ` + k.ID + `"><span class="badge">key</span> <span class="name">&lt;b&gt;deploy&lt;/b&gt; bot</span>`
	for _, path := range []string{page, "/console/activity", page + "/history"} {
		if body := mustGet(t, f, f.signIn(t, "auditor"), path); !strings.Contains(body, escaped) || strings.Contains(body, "<b>deploy") {
			t.Errorf("%s, as an auditor: the key is not shown as %q:\n%s", path, escaped, body)
		}
	}
	if body := mustGet(t, f, f.signIn(t, "member"), page); !strings.Contains(body, "api_actor "+k.ID) || strings.Contains(body, "deploy") {
		t.Errorf("as a member: the key's name is shown, or not its ID:\n%s", body)
	}
}

var olderRE = regexp.MustCompile(`<a rel="next" href="([^"]+)">Older changes</a>`)

// TestActivityPages: past the first page of changes, the "Older
// changes" link leads to the next, filters kept, until every change has
// been shown once; each half of the actor filter works alone, and one
// that cannot work says why.
func TestActivityPages(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	ses, agent := f.agentSession(t)
	const n = 60 // the agent's changes, over a page of 50
	for i := range n {
		if _, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: fmt.Sprintf("/agent/%02d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	admin := f.signIn(t, "admin")
	// pages follows the links from path and returns the paths shown.
	pages := func(path string) []string {
		t.Helper()
		var shown []string
		for range 10 {
			body := mustGet(t, f, admin, path)
			shown = append(shown, regexp.MustCompile(`>(/(?:agent|prefs)/[^<]+)</a>`).FindAllString(body, -1)...)
			m := olderRE.FindStringSubmatch(body)
			if m == nil {
				return shown
			}
			path = html.UnescapeString(m[1])
		}
		t.Fatalf("%s: the pages do not end", path)
		return nil
	}
	for _, c := range []struct {
		name, query string
		want        int
	}{
		{"everything", "", n + 1},
		{"the session, by ID alone", "?actor=" + ses.ID, n},
		{"sessions, by kind alone", "?actor_type=session_actor", n},
		{"API keys, by kind alone", "?actor_type=api_actor", 1},
		{"the store and the session", "?store=" + f.storeID + "&actor_type=session_actor&actor=" + ses.ID, n},
		{"every filter", "?op=created&store=" + f.storeID + "&actor_type=session_actor&actor=" + ses.ID, n},
		{"an operation alone", "?op=created", n + 1},
		{"an operation none made, with the rest", "?op=deleted&store=" + f.storeID + "&actor=" + ses.ID, 0},
	} {
		shown := pages("/console/activity" + c.query)
		seen := map[string]bool{}
		for _, p := range shown {
			seen[p] = true
		}
		if len(shown) != c.want || len(seen) != c.want {
			t.Errorf("%s: %d changes shown (%d different) over the pages, want %d", c.name, len(shown), len(seen), c.want)
		}
	}
	for query, want := range map[string]string{
		"?actor=robot_1":                        "robot_1",
		"?actor_type=api_actor&actor=" + ses.ID: "not a api_actor",
	} {
		resp, body := f.get(t, admin, "/console/activity"+query)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want 400 saying %q:\n%s", query, resp.StatusCode, want, body)
		}
	}
}

var followRE = regexp.MustCompile(`<a href="([^"]+)" class="follow" title="Only this (store|actor)'s changes">`)

// TestActivityFollow: each row's store and actor are links that set that
// filter, keeping the others and starting the pages again, and lead to
// that store's or actor's changes only.
func TestActivityFollow(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	ses, agent := f.agentSession(t)
	if _, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: "/agent/today.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	other, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.core.CreateMemory(ctx, f.op, other.ID, memstore.MemoryCreate{Path: "/elsewhere.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	admin := f.signIn(t, "admin")
	body := mustGet(t, f, admin, "/console/activity?op=created&page=")
	// follow returns the link of the given kind in the row of path.
	follow := func(body, path, kind string) string {
		t.Helper()
		at := strings.Index(body, ">"+path+"</a>")
		if at < 0 {
			t.Fatalf("no row of %s:\n%s", path, body)
		}
		row := body[strings.LastIndex(body[:at], "<tr>"):]
		row = row[:strings.Index(row, "</tr>")]
		for _, m := range followRE.FindAllStringSubmatch(row, -1) {
			if m[2] == kind {
				return html.UnescapeString(m[1])
			}
		}
		t.Fatalf("the row of %s has no link to follow its %s:\n%s", path, kind, row)
		return ""
	}
	for _, c := range []struct {
		path, kind string
		want       map[string]string
		shown      []string
		hidden     []string
	}{
		{"/agent/today.md", "actor", map[string]string{"op": "created", "actor_type": "session_actor", "actor": ses.ID},
			[]string{"/agent/today.md"}, []string{"/prefs/style.md", "/elsewhere.md"}},
		{"/elsewhere.md", "store", map[string]string{"op": "created", "store": other.ID},
			[]string{"/elsewhere.md"}, []string{"/prefs/style.md", "/agent/today.md"}},
		{"/prefs/style.md", "actor", map[string]string{"op": "created", "actor_type": "api_actor", "actor": f.op.Actor.ID},
			[]string{"/prefs/style.md", "/elsewhere.md"}, []string{"/agent/today.md"}},
	} {
		link := follow(body, c.path, c.kind)
		u, err := url.Parse(link)
		if err != nil || u.Path != "/console/activity" || u.Query().Has("page") || len(u.Query()) != len(c.want) {
			t.Errorf("%s's %s link: %s", c.path, c.kind, link)
		}
		for k, v := range c.want {
			if got := u.Query().Get(k); got != v {
				t.Errorf("%s's %s link sets %s=%q, want %q", c.path, c.kind, k, got, v)
			}
		}
		page := mustGet(t, f, admin, link)
		for _, p := range c.shown {
			if !strings.Contains(page, ">"+p+"</a>") {
				t.Errorf("following %s's %s: %s is not shown", c.path, c.kind, p)
			}
		}
		for _, p := range c.hidden {
			if strings.Contains(page, ">"+p+"</a>") {
				t.Errorf("following %s's %s: %s is shown", c.path, c.kind, p)
			}
		}
		// Following the other kind from there narrows further.
		if c.kind == "store" {
			both := follow(page, c.path, "actor")
			q, _ := url.Parse(both)
			if q.Query().Get("store") != other.ID || q.Query().Get("actor") != f.op.Actor.ID {
				t.Errorf("the store's page's actor link drops a filter: %s", both)
			}
		}
	}
}
