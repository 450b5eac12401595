package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
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
// a real 'memstore serve': sign-in refused and accepted, browsing a tree,
// a memory whose content tries to run script (none runs, its links are
// neutralised), a cross-site form refused, sign-out, an expired session,
// and an auditor refused an admin page; then the editing flows
// (consoleEditFlows) and the administration's (consoleAgentFlows).
func TestConsoleInBrowser(t *testing.T) {
	bin := browserPath()
	if bin == "" && os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH, and CI must run the console's browser tests: .ci/run installs Debian's chromium")
	}
	if bin == "" {
		t.Skip("no chromium or google-chrome on PATH: the console's browser tests need one (apt-get install chromium)")
	}
	srv, db := startConsoleServer(t)
	const pw = consolePassword
	base := srv.url + "/console/"

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Flag("headless", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	newBrowser := func(t *testing.T) (context.Context, *atomic.Int32) {
		ctx, cancel := chromedp.NewContext(actx)
		t.Cleanup(cancel)
		ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
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
	ctx, dialogs := newBrowser(t)

	t.Run("wrong password", func(t *testing.T) {
		if err := signIn(ctx, "ann", "not the password", "#error"); err != nil {
			t.Fatal(err)
		}
		if msg := text(ctx, "#error"); !strings.Contains(msg, "wrong workspace, user name or password") {
			t.Errorf("the refusal says %q", msg)
		}
	})

	t.Run("browse", func(t *testing.T) {
		if err := signIn(ctx, "ann", pw, "table"); err != nil {
			t.Fatal(err)
		}
		err := chromedp.Do(ctx,
			chromedp.Click(`//a[text()="Team notes"]`),
			chromedp.WaitVisible(`//a[text()="prefs/"]`),
			chromedp.Click(`//a[text()="prefs/"]`),
			chromedp.WaitVisible(`//a[text()="style.md"]`),
			chromedp.Click(`//a[text()="style.md"]`),
			chromedp.WaitVisible(chromedp.CSS("#rendered")),
			chromedp.Sleep(300*time.Millisecond), // time for any onerror to fire
		)
		if err != nil {
			t.Fatal(err)
		}
		h1, rendered, raw, by := text(ctx, "h1"), text(ctx, "#rendered"), text(ctx, "#raw"), text(ctx, "#changed-by")
		pwned, err1 := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.pwned)`))
		unsafe, err2 := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#rendered a[href^="javascript" i], #rendered script, #rendered img').length`))
		safe, err3 := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#rendered a[href="https://example.com/docs"][rel="noopener noreferrer"]').length`))
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		if h1 != "/prefs/style.md" || !strings.Contains(rendered, "Style") || !strings.Contains(raw, "<script>window.pwned = 1</script>") || !strings.HasPrefix(by, "api_actor apikey_") {
			t.Errorf("memory page: h1 %q, rendered %q, raw %q, by %q", h1, rendered, raw, by)
		}
		if pwned != "undefined" || unsafe != 0 || dialogs.Load() != 0 {
			t.Errorf("the memory's content ran or stayed active: window.pwned %s, %d unsafe elements, %d dialogs", pwned, unsafe, dialogs.Load())
		}
		if safe != 1 {
			t.Errorf("the https link is not there with rel=noopener noreferrer (%d)", safe)
		}
		// Clicking the neutralised link goes nowhere and runs nothing.
		chromedp.Do(ctx, chromedp.Click(`//a[text()="the guide"]`), chromedp.Sleep(300*time.Millisecond))
		pwned, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.pwned)`))
		if pwned != "undefined" || dialogs.Load() != 0 {
			t.Errorf("clicking the javascript: link ran it: %s", pwned)
		}
	})

	t.Run("cross-site post", func(t *testing.T) {
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

	t.Run("sign out", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"stores"),
			chromedp.WaitVisible(chromedp.CSS("#signout")),
			chromedp.Click(chromedp.CSS("#signout")),
			chromedp.WaitVisible(chromedp.CSS("#password")),
			chromedp.Navigate(base+"stores"),
			chromedp.WaitVisible(chromedp.CSS("#password")),
		)
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		if err != nil || !strings.Contains(loc, "/console/signin") {
			t.Errorf("after signing out, stores leads to %q (%v)", loc, err)
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

	env := consoleEnv{srv: srv, base: base, password: pw, newBrowser: newBrowser, signIn: signIn, text: text}
	consoleEditFlows(t, env)
	consoleAgentFlows(t, env)
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
