package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/memstore/memstore/internal/webdriver"
)

// browserPath is a Chromium or Chrome on PATH, "" when there is none.
func browserPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestConsoleInBrowser drives a headless Chromium through the console of
// a real 'memstore serve': sign-in refused, a cross-site form refused, an
// expired session, and an auditor refused an admin page; then the flows
// every browser runs (consoleFlowsIn), the editing flows
// (consoleEditFlows) and the administration's (consoleAgentFlows).
func TestConsoleInBrowser(t *testing.T) {
	newBrowser := chromiumTabs(t, 90*time.Second)
	srv, db := startConsoleServer(t)
	const pw = consolePassword
	base := srv.url + "/console/"

	signIn := func(ctx context.Context, name, password, waitFor string) error {
		return chromedp.Do(ctx,
			chromedp.Navigate(base+"signin"),
			chromedp.WaitVisible(chromedp.CSS("#name")),
			chromedp.SendKeys(chromedp.CSS("#name"), name),
			chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS("#signin")),
			chromedp.WaitVisible(chromedp.CSS(waitFor)),
		)
	}
	// text is the text of the element sel selects, "" when there is none.
	text := func(ctx context.Context, sel string) string {
		s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		return s
	}
	ctx, _ := newBrowser(t)

	t.Run("wrong password", func(t *testing.T) {
		if err := signIn(ctx, "ann", "not the password", "#error"); err != nil {
			t.Fatal(err)
		}
		if msg := text(ctx, "#error"); !strings.Contains(msg, "wrong workspace, user name or password") {
			t.Errorf("the refusal says %q", msg)
		}
	})

	t.Run("cross-site post", func(t *testing.T) {
		if err := signIn(ctx, "ann", pw, "table"); err != nil {
			t.Fatal(err)
		}
		// A page of another origin whose form posts to the console, as a
		// signed-in user's browser would send it, cookie and all, without
		// the token.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%susers"><input name="name" value="mallory"><input name="role" value="admin"><input name="password" value="%s"><button id="go">go</button></form>`, base, pw)
		}))
		defer evil.Close()
		err := chromedp.Do(ctx,
			chromedp.Navigate(evil.URL),
			chromedp.WaitVisible(chromedp.CSS("#go")),
			chromedp.Click(chromedp.CSS("#go")),
			chromedp.WaitVisible(chromedp.CSS("#error")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if body := text(ctx, "#error"); !strings.Contains(body, "another site") {
			t.Errorf("the cross-site form got %q", body)
		}
		if _, out, _ := run(t, "", "users", "ls", "--db", db); strings.Contains(out, "mallory") {
			t.Errorf("the cross-site form made a user:\n%s", out)
		}
	})

	t.Run("expired session", func(t *testing.T) {
		if err := signIn(ctx, "ann", pw, "table"); err != nil {
			t.Fatal(err)
		}
		// Every session of the database ends now, as its lifetime would
		// end it.
		raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE user_sign_ins SET expires_at = 0`); err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.Navigate(base+"stores"),
			chromedp.WaitVisible(chromedp.CSS(".notice")),
		)
		if notice := text(ctx, ".notice"); err != nil || !strings.Contains(notice, "session has ended") {
			t.Errorf("an expired session: notice %q (%v)", notice, err)
		}
	})

	t.Run("auditor", func(t *testing.T) {
		actx, _ := newBrowser(t)
		if err := signIn(actx, "audra", pw, "table"); err != nil {
			t.Fatal(err)
		}
		err := chromedp.Do(actx,
			chromedp.Navigate(base+"users/new"),
			chromedp.WaitVisible(chromedp.CSS("#error")),
		)
		if msg := text(actx, "#error"); err != nil || !strings.Contains(msg, "auditor role cannot manage users") {
			t.Errorf("an auditor at users/new: %q (%v)", msg, err)
		}
	})

	consoleFlowsIn(t, srv, func(t *testing.T, o webdriver.Options) (consolePage, error) {
		ctx, dialogs := newBrowser(t)
		p := chromedpPage{ctx, dialogs}
		if o.Dark {
			return p, p.preferDark()
		}
		return p, nil
	})
	env := consoleEnv{srv: srv, base: base, password: pw, newBrowser: newBrowser, signIn: signIn, text: text}
	consoleEditFlows(t, env)
	consoleAgentFlows(t, env)
	consoleDreamFlows(t, env, db)

	t.Run("password page", func(t *testing.T) {
		if code, out, errOut := run(t, pw+"\n", "users", "create", "--db", db, "--name", "pat", "--role", "member"); code != 0 {
			t.Fatalf("users create pat: %d %s %s", code, out, errOut)
		}
		const next = "pat's next passphrase"
		pctx, _ := newBrowser(t)
		if err := signIn(pctx, "pat", pw, "table"); err != nil {
			t.Fatal(err)
		}
		err := chromedp.Do(pctx,
			chromedp.Click(chromedp.CSS("#password-page")),
			chromedp.WaitVisible(chromedp.CSS("#current")),
			chromedp.SendKeys(chromedp.CSS("#current"), pw),
			chromedp.SendKeys(chromedp.CSS("#new"), next),
			chromedp.SendKeys(chromedp.CSS("#again"), next),
			chromedp.Click(chromedp.CSS("#set-password")),
			chromedp.WaitVisible(chromedp.CSS(".notice")),
		)
		if notice := text(pctx, ".notice"); err != nil || !strings.Contains(notice, "Your password is set") {
			t.Fatalf("after the change: notice %q (%v)", notice, err)
		}
		// Still signed in; then signed out, the new password signs in.
		err = chromedp.Do(pctx,
			chromedp.Navigate(base+"stores"),
			chromedp.WaitVisible(chromedp.CSS("#signout")),
			chromedp.Click(chromedp.CSS("#signout")),
			chromedp.WaitVisible(chromedp.CSS("#signin")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if err := signIn(pctx, "pat", next, "table"); err != nil {
			t.Errorf("sign in with the new password: %v", err)
		}
	})
}

// consolePassword is the password of each user startConsoleServer makes.
const consolePassword = "correct horse battery"

// startConsoleServer starts memstore serve on a new database with three
// users (ann an admin, audra an auditor, meg a member) and a store, Team
// notes, whose memory /prefs/style.md tries to run script: an inline
// script, an image's onerror and a javascript: link (each sets
// window.pwned), beside a safe https link.
func startConsoleServer(t *testing.T) (srv *child, db string) {
	clearEnv(t)
	db = filepath.Join(t.TempDir(), "m.db")
	for _, u := range [][2]string{{"ann", "admin"}, {"audra", "auditor"}, {"meg", "member"}} {
		if code, out, errOut := run(t, consolePassword+"\n", "users", "create", "--db", db, "--name", u[0], "--role", u[1]); code != 0 {
			t.Fatalf("users create %s: %d %s %s", u[0], code, out, errOut)
		}
	}
	srv = startChild(t, db)
	content := "# Style\n\n<script>window.pwned = 1</script>\n<img src=x onerror=\"window.pwned = 2\">\n\n" +
		"Use [the guide](javascript:window.pwned=3) and [docs](https://example.com/docs).\n"
	storeID := apiPost(t, srv, "/v1/memory_stores", `{"name":"Team notes"}`)
	apiPost(t, srv, "/v1/memory_stores/"+storeID+"/memories", fmt.Sprintf(`{"path":"/prefs/style.md","content":%q}`, content))
	return srv, db
}

// apiPost posts body to the server's API with its key and returns the
// created object's ID.
func apiPost(t *testing.T, c *child, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url+path, bytes.NewBufferString(body))
	req.Header.Set("x-api-key", c.key)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var obj struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
	}
	return obj.ID
}

// chromedpPage is Chromium as the shared console flow drives it
// (consolePage), each step bounded by webdriver.Timeout. As WebDriver
// does, it fails the script that follows a JavaScript dialog.
type chromedpPage struct {
	ctx     context.Context
	dialogs *atomic.Int32 // how many dialogs the page has opened
}

// chromiumKeys turns WebDriver's keys, and newlines, into chromedp's.
var chromiumKeys = strings.NewReplacer(webdriver.Tab, kb.Tab, webdriver.Enter, kb.Enter, "\n", kb.Enter)

func (p chromedpPage) do(steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, webdriver.Timeout)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

func (p chromedpPage) Navigate(url string) error { return p.do(chromedp.Navigate(url)) }
func (p chromedpPage) Wait(sel string) error     { return p.do(chromedp.WaitReady(chromedp.CSS(sel))) }
func (p chromedpPage) Click(sel string) error    { return p.do(chromedp.Click(chromedp.CSS(sel))) }
func (p chromedpPage) Keys(keys string) error {
	return p.do(chromedp.KeyEvent(chromiumKeys.Replace(keys)))
}
func (p chromedpPage) Close() {}

func (p chromedpPage) URL() (string, error) { return chromedp.Run(p.ctx, chromedp.Location()) }

func (p chromedpPage) ClickLink(text string) error {
	return p.do(chromedp.Click(fmt.Sprintf(`//a[text()=%q]`, text)))
}

func (p chromedpPage) Type(sel, text string) error {
	return p.do(chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), chromiumKeys.Replace(text)))
}

func (p chromedpPage) Text(sel string) string {
	var s string
	p.Eval(fmt.Sprintf(`const e = document.querySelector(%q); return e ? e.innerText : ""`, sel), &s)
	return s
}

func (p chromedpPage) Eval(script string, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, webdriver.Timeout)
	defer cancel()
	js, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify((() => {`+script+`})())`))
	if n := p.dialogs.Load(); err == nil && n > 0 {
		err = fmt.Errorf("the page opened %d JavaScript dialogs", n)
	}
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal([]byte(js), out)
}

func (p chromedpPage) ResizeWindow(width, height int) error {
	return p.do(chromedp.EmulateViewport(int64(width), int64(height)))
}

// preferDark makes the page's media queries see a dark colour scheme.
func (p chromedpPage) preferDark() error {
	return p.do(func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return chromedp.Void{}, err
	})
}
