package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// consoleEnv is what the console's browser tests share: the server, the
// console's address, and the browser's helpers.
type consoleEnv struct {
	srv        *child
	base       string
	password   string
	newBrowser func(t *testing.T) (context.Context, *atomic.Int32)
	signIn     func(ctx context.Context, name, password, waitFor string) error
	text       func(ctx context.Context, sel string) string
}

// apiGet gets path from the server's API with its key and decodes the
// answer into out, returning the status.
func apiGet(t *testing.T, c *child, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url+path, nil)
	req.Header.Set("x-api-key", c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// consoleEditFlows drives the console's changes through a browser, past
// those every browser makes (consoleFlowsIn): rename, restore, redaction
// refused to a member and done by an admin, and delete.
func consoleEditFlows(t *testing.T, e consoleEnv) {
	storeID := apiPost(t, e.srv, "/v1/memory_stores", `{"name":"Plans"}`)
	memID := apiPost(t, e.srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/notes/plan.md","content":"step one\nstep two\n"}`)
	memURL := e.base + "stores/" + storeID + "/memories/" + memID
	content := func(t *testing.T) (string, string) {
		var m struct{ Content, Path string }
		if code := apiGet(t, e.srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, &m); code != http.StatusOK {
			t.Fatalf("GET the memory: %d", code)
		}
		return m.Content, m.Path
	}
	// The history to rename, restore and redact: edits by API keys (the
	// shared flow, consoleFlowsIn, edits through the browser).
	for _, c := range []string{"step one\nstep two, edited\n", "step one\nstep two, by the agent\n", "step one\nstep two, by ann\n"} {
		apiPost(t, e.srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, fmt.Sprintf(`{"content":%q}`, c))
	}
	ctx, _ := e.newBrowser(t)
	if err := e.signIn(ctx, "ann", e.password, "table"); err != nil {
		t.Fatal(err)
	}
	// edit opens the memory's edit page and puts text in its text area.
	edit := func(text string) error {
		return chromedp.Do(ctx,
			chromedp.Navigate(memURL),
			chromedp.Click(chromedp.CSS("#edit")),
			chromedp.WaitVisible(chromedp.CSS("#content")),
			chromedp.SetValue(chromedp.CSS("#content"), text),
		)
	}

	// save sends the edit page's form and waits for the memory's page.
	save := func() error {
		return chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#save")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	}

	t.Run("rename", func(t *testing.T) {
		err := errors.Join(edit("step one\nstep two, by ann\n"),
			chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#path"), "/notes/renamed.md")), save())
		if _, path := content(t); err != nil || path != "/notes/renamed.md" || e.text(ctx, "h1") != "/notes/renamed.md" {
			t.Errorf("renamed to %q, page %q (%v)", path, e.text(ctx, "h1"), err)
		}
	})

	var versions struct {
		Data []struct {
			ID        string
			Operation string
			Content   *string
		}
	}
	if code := apiGet(t, e.srv, "/v1/memory_stores/"+storeID+"/memory_versions?view=full&memory_id="+memID, &versions); code != http.StatusOK || len(versions.Data) != 5 {
		t.Fatalf("versions: %d, %d", code, len(versions.Data))
	}
	first, agents := versions.Data[4], versions.Data[2] // oldest first: created, edited, the agent's, ann's, renamed
	if agents.Content == nil || !strings.Contains(*agents.Content, "by the agent") {
		t.Fatalf("the agent's version is not where it should be: %+v", agents)
	}

	t.Run("restore", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.base+"stores/"+storeID+"/versions/"+first.ID),
			chromedp.Click(chromedp.CSS("#restore")),
			chromedp.WaitVisible(chromedp.CSS(".notice")),
		)
		if got, path := content(t); err != nil || got != "step one\nstep two\n" || path != "/notes/renamed.md" {
			t.Errorf("restored %q at %s (%v)", got, path, err)
		}
	})

	redactURL := e.base + "stores/" + storeID + "/versions/" + agents.ID + "/redact"
	t.Run("member redacts", func(t *testing.T) {
		mctx, _ := e.newBrowser(t)
		err := errors.Join(e.signIn(mctx, "meg", e.password, "table"), chromedp.Do(mctx,
			chromedp.Navigate(redactURL),
			chromedp.Click(chromedp.CSS("#confirm-redact")),
			chromedp.WaitVisible(chromedp.CSS("#error")),
		))
		if msg := e.text(mctx, "#error"); err != nil || !strings.Contains(msg, "member role cannot redact versions") {
			t.Errorf("a member's redaction: %q (%v)", msg, err)
		}
	})

	t.Run("redact", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(redactURL), chromedp.WaitVisible(chromedp.CSS("#explain"))); err != nil {
			t.Fatal(err)
		}
		if explain := e.text(ctx, "#explain"); !strings.Contains(explain, "search index") || !strings.Contains(explain, "cannot be undone") {
			t.Errorf("the confirmation says %q", explain)
		}
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm-redact")), chromedp.WaitVisible(chromedp.CSS("#redacted")))
		var v struct {
			Content    *string
			RedactedAt *string `json:"redacted_at"`
		}
		apiGet(t, e.srv, "/v1/memory_stores/"+storeID+"/memory_versions/"+agents.ID, &v)
		if err != nil || v.RedactedAt == nil || v.Content != nil {
			t.Errorf("after redaction: %+v (%v)", v, err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(memURL),
			chromedp.Click(chromedp.CSS("a#delete")),
			chromedp.Click(chromedp.CSS("button#delete")),
			chromedp.WaitVisible(chromedp.CSS(".notice")),
		)
		if code := apiGet(t, e.srv, "/v1/memory_stores/"+storeID+"/memories/"+memID, new(any)); err != nil || code != http.StatusNotFound {
			t.Errorf("after delete: %d (%v)", code, err)
		}
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, fmt.Sprintf("stores/%s?", storeID)) {
			t.Errorf("after delete the browser is at %s", loc)
		}
	})
}
