package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/npmtest"
	"github.com/memstore/memstore/internal/webdriver"
)

// walkConsole signs in to the console of srv (as startConsoleServer makes
// it) as ann, an administrator, in p, and goes through every page of the
// console, calling visit with each page's name once the page is shown:
// the sign-in pages first, signed out, then every page reached by a link
// or a form, the pages shown once after a form (a session's token, a
// webhook's signing secret, a sign-in link) and an error page. db is the
// server's database file, where a dream to review is made (seedDream).
func walkConsole(t *testing.T, srv *child, db string, p consolePage, visit func(name string)) {
	t.Helper()
	base := srv.url + "/console/"
	storeID := apiPost(t, srv, "/v1/memory_stores", `{"name":"Plans","description":"What the team plans, and why"}`)
	memID := apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/notes/plan.md","content":"# Plan\n\n1. step one\n2. step two\n"}`)
	apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, `{"content":"# Plan\n\n1. step one\n2. step two, done\n3. step three\n"}`)
	apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/notes/decisions.md","content":"Use SQLite until a second server is needed.\n"}`)
	apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/people/ann.md","content":"Prefers short reviews.\n"}`)
	store, mem := base+"stores/"+storeID, base+"stores/"+storeID+"/memories/"+memID

	// step goes to a page and waits for it; each is a page to visit.
	step := func(name string, do ...error) {
		t.Helper()
		if err := errors.Join(append(do, p.Wait("main"))...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		visit(name)
	}
	// href is the address of the first element sel matches.
	href := func(sel string) string {
		t.Helper()
		var h string
		if err := p.Eval(fmt.Sprintf(`const e = document.querySelector(%q); return e ? e.href : ""`, sel), &h); err != nil || h == "" {
			t.Fatalf("no link %s on the page (%v)", sel, err)
		}
		return h
	}
	nav := func(url string) error { return p.Navigate(url) }

	step("signin", nav(base+"signin"), p.Wait("#password"))
	step("link", nav(base+"link?t=memstore-link-example"))
	if err := errors.Join(nav(base+"signin"), p.Type("#name", "ann"), p.Type("#password", consolePassword+webdriver.Enter), p.Wait("table")); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	step("home", nav(base), p.Wait("#changes-30d"))
	step("stores", nav(base+"stores"))
	step("store-new", nav(base+"stores/new"))
	step("tree", nav(store))
	step("tree-folder", nav(store+"?path=/notes/"))
	step("memory", nav(mem), p.Wait("#rendered"))
	step("memory-edit", nav(mem+"/edit"))
	step("memory-delete", nav(mem+"/delete"))
	step("memory-new", nav(store+"/new"))
	step("history", nav(mem+"/history"), p.Wait("#versions"))
	version := href("#versions tbody tr:first-child a")
	step("diff", p.Click("#compare"), p.Wait("#diff"))
	step("version", nav(version))
	step("redact", nav(version+"/redact"))
	step("search", nav(store+"/search?q=step"), p.Wait("#results"))
	step("store-settings", nav(store+"/settings"))
	step("transfer", nav(store+"/transfer"))
	step("activity", nav(base+"activity"), p.Wait("#activity"))
	step("session-new", nav(base+"sessions/new"), p.Wait("#title"))
	err := errors.Join(p.Type("#title", "Nightly agent"),
		p.Eval(`document.querySelector('select[aria-label="Access to Plans"]').value = "read_write"; return true`, nil))
	step("token", err, p.Click("#create-session"), p.Wait("#secret"))
	step("session", p.Click("#to-session"), p.Wait("#session-id"))
	step("sessions", nav(base+"sessions"))
	seedDream(t, db, storeID)
	step("dreams", nav(base+"dreams"), p.Wait("#dreams"))
	step("dream", p.Click("#dreams tbody a"), p.Wait("#apply-form"))
	step("keys", nav(base+"keys"))
	step("webhooks", nav(base+"webhooks"))
	step("webhook-new", nav(base+"webhooks/new"), p.Wait("#url"))
	err = errors.Join(p.Type("#name", "Chat notifier"), p.Type("#url", "https://hooks.example.com/memstore"))
	step("webhook-secret", err, p.Click("#create"), p.Wait("#secret"))
	// A change for the endpoint's log: its host resolves nowhere here.
	apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/notes/later.md","content":"x"}`)
	step("webhook", p.Click("#to-webhook"), p.Wait("#deliveries"))
	step("webhook-delete", p.Click("#delete-webhook"), p.Wait("#delete"))
	step("users", nav(base+"users"), p.Wait("#users"))
	remove := href(`a[id^="remove-"]`)
	step("user-link", p.Click(`button[id^="link-"]`), p.Wait("#link"))
	step("user-new", nav(base+"users/new"))
	step("user-remove", nav(remove), p.Wait("#remove"))
	step("password", nav(base+"password"))
	step("error", nav(base+"no/such/page"), p.Wait("#error"))
}

// axeDir holds the package.json and lock of axe-core, which npm installs
// there (npmtest) for the accessibility check.
var axeDir = filepath.Join("testdata", "axe")

var axe struct {
	once sync.Once
	js   string
	err  error
}

// axeScript is axe-core's script, installed on first use.
func axeScript(t *testing.T) string {
	t.Helper()
	npmtest.Need(t, axeDir, "axe-core")
	axe.once.Do(func() {
		b, err := os.ReadFile(filepath.Join(axeDir, "node_modules", "axe-core", "axe.min.js"))
		axe.js, axe.err = string(b), err
	})
	if axe.err != nil {
		t.Fatal(axe.err)
	}
	return axe.js
}

// violation is one rule of axe-core that a page breaks.
type violation struct {
	ID, Impact, Help string
	Nodes            []string
}

// checkAccessible fails t with every serious or critical violation of
// the page p shows (axeViolations).
func checkAccessible(t *testing.T, p consolePage, name string) {
	t.Helper()
	for _, v := range axeViolations(t, p, name) {
		t.Errorf("%s: %s violation %s (%s):\n\t%s", name, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n\t"))
	}
}

// axeViolations runs axe-core in the page p shows, injected as a
// WebDriver script (which the console's Content-Security-Policy, that
// allows no script, does not govern), and returns the serious and
// critical violations it finds.
func axeViolations(t *testing.T, p consolePage, name string) []violation {
	t.Helper()
	err := p.Eval(axeScript(t)+`
		window.memstoreAxe = null;
		axe.run(document, {resultTypes: ["violations"]}).then(
			r => { window.memstoreAxe = {violations: r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
				({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + ": " + n.html.slice(0, 200))}))}; },
			e => { window.memstoreAxe = {error: String(e)}; });
		return true`, nil)
	if err != nil {
		t.Fatalf("%s: injecting axe-core: %v", name, err)
	}
	var res struct {
		Error      string
		Violations []violation
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var raw json.RawMessage
		if err := p.Eval(`return window.memstoreAxe`, &raw); err != nil {
			t.Fatalf("%s: reading axe-core's results: %v", name, err)
		}
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatalf("%s: axe-core's results %s: %v", name, raw, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: axe-core has not finished after a minute", name)
		}
	}
	if res.Error != "" {
		t.Fatalf("%s: axe-core failed: %s", name, res.Error)
	}
	return res.Violations
}

// consolePagesIn checks every page of the console (walkConsole) with
// axe-core, in a browser that open starts, against a new server; then
// runs the administration's flows there (consoleAdminFlows).
func consolePagesIn(t *testing.T, open openPage) {
	axeScript(t) // skip before starting anything when it cannot be installed
	srv, db := startConsoleServer(t)
	p, err := open(t, webdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	// First a page that breaks the rules, under the console's policy:
	// the check must see it.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		fmt.Fprint(w, `<!doctype html><html lang="en"><title>bad</title><main><img src="x.png"><input id="q"></main></html>`)
	}))
	defer bad.Close()
	if err := errors.Join(p.Navigate(bad.URL), p.Wait("main")); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, v := range axeViolations(t, p, "a page that breaks the rules") {
		found[v.ID] = true
	}
	if !found["image-alt"] || !found["label"] {
		t.Fatalf("axe-core does not see an image without alt text and a field without a label: %v", found)
	}
	pages := 0
	walkConsole(t, srv, db, p, func(name string) {
		pages++
		checkAccessible(t, p, name)
	})
	t.Logf("%d pages checked", pages)
	consoleAdminFlows(t, srv, db, p)
}

// consoleAdminFlows drives, as ann, signed in to the console of srv in p,
// an endpoint's life (made, its secret shown once, renamed, disabled and
// enabled, its secret regenerated, deleted), a user's (a new role, a sign-in link
// that works, a removal confirmed first) and an actor followed in the
// activity with one click.
func consoleAdminFlows(t *testing.T, srv *child, db string, p consolePage) {
	base := srv.url + "/console/"
	t.Run("webhook", func(t *testing.T) {
		err := errors.Join(p.Navigate(base+"webhooks"), p.Click("#new-webhook"), p.Wait("#url"),
			p.Type("#name", "Deploy hook"), p.Type("#url", "https://deploy.example.com/in"),
			p.Click(`input[value="memstore.memory.deleted"]`), // unchecked
			p.Click("#create"), p.Wait("#secret"))
		if err != nil {
			t.Fatal(err)
		}
		first := strings.TrimSpace(p.Text("#secret"))
		if !strings.HasPrefix(first, "whsec_") {
			t.Fatalf("the secret shown: %q", first)
		}
		if err := errors.Join(p.Click("#to-webhook"), p.Wait("#deliveries")); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.Text("main"), first) {
			t.Error("the endpoint's page shows its secret again")
		}
		u, err := p.URL()
		if err != nil {
			t.Fatal(err)
		}
		id := u[strings.LastIndex(u, "/")+1:]
		endpoint := func() (e struct {
			Name, State   string
			EnabledEvents []string `json:"enabled_events"`
		}) {
			if code := apiGet(t, srv, "/v1/organizations/webhooks/"+id, &e); code != http.StatusOK {
				t.Fatalf("GET the endpoint %s: %d", id, code)
			}
			return e
		}
		if e := endpoint(); e.Name != "Deploy hook" || len(e.EnabledEvents) != len(memstore.WebhookEventTypes)-1 || strings.Contains(strings.Join(e.EnabledEvents, " "), "memory.deleted") {
			t.Errorf("the endpoint made: %+v", e)
		}
		err = errors.Join(p.Type("#name", "Release hook"), p.Click("#save"), p.Wait(".notice"))
		if e := endpoint(); err != nil || e.Name != "Release hook" || p.Text("h1") != "Release hook" {
			t.Errorf("renamed: %+v, h1 %q (%v)", e, p.Text("h1"), err)
		}
		for _, c := range []struct{ button, then, state string }{{"#disable", "#enable", "disabled"}, {"#enable", "#disable", "enabled"}} {
			err := errors.Join(p.Click(c.button), p.Wait(c.then))
			if e := endpoint(); err != nil || e.State != c.state || p.Text("#state") != c.state {
				t.Errorf("%s: %+v, the page says %q (%v)", c.button, e, p.Text("#state"), err)
			}
		}
		if err := errors.Join(p.Click("#regenerate"), p.Wait("#secret")); err != nil {
			t.Fatal(err)
		}
		if next := strings.TrimSpace(p.Text("#secret")); !strings.HasPrefix(next, "whsec_") || next == first {
			t.Errorf("the regenerated secret: %q (the first %q)", next, first)
		}
		err = errors.Join(p.Click("#to-webhook"), p.Click("#delete-webhook"), p.Click("#delete"), p.Wait(".notice"))
		if code := apiGet(t, srv, "/v1/organizations/webhooks/"+id, &struct{}{}); err != nil || code != http.StatusNotFound {
			t.Errorf("deleted: GET the endpoint %d (%v)", code, err)
		}
	})

	// userID is the ID of the user named name, off the users page.
	userID := func(t *testing.T, name string) string {
		var id string
		err := errors.Join(p.Navigate(base+"users"), p.Wait("#users"),
			p.Eval(fmt.Sprintf(`const e = document.querySelector('select[aria-label="Role of %s"]'); return e ? e.id.replace("role-", "") : ""`, name), &id))
		if err != nil || id == "" {
			t.Fatalf("no role to change for %s (%v)", name, err)
		}
		return id
	}
	role := func(t *testing.T, name string) string {
		_, out, _ := run(t, "", "users", "ls", "--db", db)
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[1] == name {
				return f[2]
			}
		}
		t.Fatalf("no %s in\n%s", name, out)
		return ""
	}
	t.Run("role", func(t *testing.T) {
		id := userID(t, "meg")
		err := errors.Join(p.Eval(`document.querySelector('#role-`+id+`').value = "auditor"; return true`, nil),
			p.Click("#set-role-"+id), p.Wait(".notice"))
		if got := role(t, "meg"); err != nil || got != "auditor" {
			t.Errorf("meg's role: %s (%v)", got, err)
		}
	})
	t.Run("sign-in link", func(t *testing.T) {
		id := userID(t, "audra")
		if err := errors.Join(p.Click("#link-"+id), p.Wait("#link")); err != nil {
			t.Fatal(err)
		}
		link, err := url.Parse(strings.TrimSpace(p.Text("#link")))
		if err != nil || link.Path != "/console/link" {
			t.Fatalf("the link shown: %q (%v)", p.Text("#link"), err)
		}
		// Redeemed by audra's browser, not this one.
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/console/link", strings.NewReader(url.Values{"t": {link.Query().Get("t")}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.url)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
			t.Errorf("redeeming the link: %d, cookies %v", resp.StatusCode, resp.Cookies())
		}
	})
	t.Run("remove", func(t *testing.T) {
		id := userID(t, "meg")
		err := errors.Join(p.Click("#remove-"+id), p.Wait("#remove"))
		if err != nil {
			t.Fatal(err)
		}
		if role(t, "meg") == "" {
			t.Fatal("the confirmation page removed meg")
		}
		if err := errors.Join(p.Click("#remove"), p.Wait(".notice")); err != nil {
			t.Fatal(err)
		}
		if _, out, _ := run(t, "", "users", "ls", "--db", db); strings.Contains(out, " meg ") || strings.Contains(p.Text("#users"), "meg") {
			t.Errorf("meg is still there:\n%s", out)
		}
	})
	t.Run("follow an actor", func(t *testing.T) {
		err := errors.Join(p.Navigate(base+"activity"), p.Wait("#activity"),
			p.Click(`#activity a.follow[title="Only this actor's changes"]`), p.Wait("#clear-filters"))
		if err != nil {
			t.Fatal(err)
		}
		u, _ := p.URL()
		var actors []string
		err = p.Eval(`return [...document.querySelectorAll('#activity a.follow[title="Only this actor\'s changes"]')].map(a => a.textContent)`, &actors)
		if err != nil || !strings.Contains(u, "actor=") || len(actors) == 0 {
			t.Fatalf("followed to %s: %q (%v)", u, actors, err)
		}
		for _, a := range actors {
			if a != actors[0] {
				t.Errorf("following %s shows %s's changes too", actors[0], a)
			}
		}
	})
}

// TestConsolePagesInChromium: no page of the console has a serious or
// critical accessibility violation that axe-core finds, in Chromium, and
// the administration's pages work there (consolePagesIn).
func TestConsolePagesInChromium(t *testing.T) {
	newTab := chromiumTabs(t, 10*time.Minute)
	consolePagesIn(t, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		ctx, dialogs := newTab(t)
		return chromedpPage{ctx, dialogs}, nil
	})
}

// TestConsolePagesInFirefox is TestConsolePagesInChromium in Firefox.
func TestConsolePagesInFirefox(t *testing.T) {
	if webdriver.FirefoxPath() == "" {
		skipOrFailInCI(t, "no firefox-esr or firefox on PATH: the console's Firefox test needs one (apt-get install firefox-esr)")
	}
	consolePagesIn(t, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		return webdriver.Firefox(t.TempDir(), o)
	})
}

// TestConsolePagesInWebKit is TestConsolePagesInChromium in WebKit.
func TestConsolePagesInWebKit(t *testing.T) {
	if webdriver.WebKitDriverPath() == "" || webdriver.MiniBrowserPath() == "" || webdriver.XvfbPath() == "" {
		skipOrFailInCI(t, "no WebKitWebDriver, MiniBrowser or Xvfb: the console's WebKit test needs them (apt-get install webkit2gtk-driver xvfb)")
	}
	consolePagesIn(t, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		return webdriver.WebKit(o)
	})
}

// chromiumTabs starts a headless Chromium for t, or skips t without one
// (fails it under CI), and returns what opens a tab of it: its context,
// which ends after limit, and the count of JavaScript dialogs it opened.
func chromiumTabs(t *testing.T, limit time.Duration) func(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	bin := browserPath()
	if bin == "" && os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH, and CI must run the console's browser tests: .ci/run installs Debian's chromium")
	}
	if bin == "" {
		t.Skip("no chromium or google-chrome on PATH: the console's browser tests need one (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Flag("headless", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	return func(t *testing.T) (context.Context, *atomic.Int32) {
		ctx, cancel := chromedp.NewContext(actx)
		t.Cleanup(cancel)
		ctx, cancelT := context.WithTimeout(ctx, limit)
		t.Cleanup(cancelT)
		var dialogs atomic.Int32
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		err := chromedp.Listen(ctx, func(ev any) {
			if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
				dialogs.Add(1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return ctx, &dialogs
	}
}

// The widths of the console's screenshots, in CSS pixels: a laptop's
// window, and a phone's.
const (
	shotWide  = 1280
	shotPhone = 390
)

// TestConsoleScreenshots saves a screenshot of every page of the console
// (walkConsole), at shotWide and shotPhone CSS pixels, in the directory
// that MEMSTORE_SCREENSHOTS names: console-NAME.png and
// console-NAME-phone.png. Without it, it is skipped: scripts/screenshots
// runs it to renew docs/images.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("MEMSTORE_SCREENSHOTS")
	if dir == "" {
		t.Skip("MEMSTORE_SCREENSHOTS names no directory to save the console's screenshots in (scripts/screenshots sets it)")
	}
	ctx, _ := chromiumTabs(t, 10*time.Minute)(t)
	srv, db := startConsoleServer(t)
	walkConsole(t, srv, db, chromedpPage{ctx, new(atomic.Int32)}, func(name string) {
		for _, s := range []struct {
			width int64
			file  string
		}{{shotWide, "console-" + name + ".png"}, {shotPhone, "console-" + name + "-phone.png"}} {
			var png []byte
			err := chromedp.Do(ctx, chromedp.EmulateViewport(s.width, 800))
			if err == nil {
				png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, s.file), png, 0o644)
			}
			if err != nil {
				t.Fatalf("screenshot of %s at %d pixels: %v", name, s.width, err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(shotWide, 800)); err != nil {
			t.Fatal(err)
		}
	})
}
