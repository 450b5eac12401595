package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// apiAs sends a request to the server's API with a credential of its own
// (an API key or a session token) and returns the status.
func apiAs(t *testing.T, c *child, secret, method, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, c.url+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("content-type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// consoleAgentFlows drives the console's administration through a
// browser: a session made with a store attached, whose token (read off
// the page) lets an agent write; the agent's write in the activity; an
// API key made and revoked (the API then refuses it); a store's export
// downloaded.
func consoleAgentFlows(t *testing.T, e consoleEnv) {
	storeID := apiPost(t, e.srv, "/v1/memory_stores", `{"name":"Agent memory","description":"What the nightly agent learns"}`)
	apiPost(t, e.srv, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/team/conventions.md","content":"# Conventions\n\nShort commits, small reviews.\n"}`)
	ctx, _ := e.newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 700)); err != nil {
		t.Fatal(err)
	}
	if err := e.signIn(ctx, "ann", e.password, "table"); err != nil {
		t.Fatal(err)
	}

	var token, sessionID string
	t.Run("session", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.base+"sessions"),
			chromedp.Click(chromedp.CSS("#new-session")),
			chromedp.WaitVisible(chromedp.CSS("#title")),
			chromedp.SendKeys(chromedp.CSS("#title"), "Nightly agent"),
			chromedp.SetValue(`//select[@aria-label="Access to Agent memory"]`, "read_write"),
			chromedp.SendKeys(`//input[@aria-label="Instructions for Agent memory"]`, "Record what you learn about the team."),
			chromedp.Click(chromedp.CSS("#create-session")),
			chromedp.WaitVisible(chromedp.CSS("#secret")),
		)
		if err != nil {
			t.Fatal(err)
		}
		token = strings.TrimSpace(e.text(ctx, "#secret"))
		page := e.text(ctx, "main")
		if !strings.HasPrefix(token, "st-memstore-") || !strings.Contains(page, "claude mcp add --transport http memstore "+e.srv.url+"/mcp") {
			t.Fatalf("the token page: token %q\n%s", token, page)
		}
		// The agent writes with the token it was given.
		if code := apiAs(t, e.srv, token, http.MethodPost, "/v1/memory_stores/"+storeID+"/memories", `{"path":"/learned/today.md","content":"The team ships on Thursdays."}`); code != http.StatusOK {
			t.Fatalf("the agent's write with the session token: %d", code)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#to-session")), chromedp.WaitVisible(chromedp.CSS("#session-id"))); err != nil {
			t.Fatal(err)
		}
		sessionID = e.text(ctx, "#session-id")
	})

	t.Run("activity", func(t *testing.T) {
		if sessionID == "" {
			t.Skip("no session")
		}
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.base+"sessions/"+sessionID),
			chromedp.Click(chromedp.CSS("#session-activity")),
			chromedp.WaitVisible(chromedp.CSS("#activity")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if rows := e.text(ctx, "#activity tbody"); !strings.Contains(rows, "/learned/today.md") || !strings.Contains(rows, "Nightly agent") || strings.Contains(rows, "conventions") {
			t.Errorf("the session's activity: %q", rows)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(e.base+"activity"), chromedp.WaitVisible(chromedp.CSS("#activity"))); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("api key", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(e.base+"keys"),
			chromedp.SendKeys(chromedp.CSS("#name"), "ci"),
			chromedp.Click(chromedp.CSS("#create-key")),
			chromedp.WaitVisible(chromedp.CSS("#secret")),
		)
		if err != nil {
			t.Fatal(err)
		}
		key := strings.TrimSpace(e.text(ctx, "#secret"))
		if code := apiAs(t, e.srv, key, http.MethodGet, "/v1/memory_stores", ""); code != http.StatusOK {
			t.Fatalf("the new key: %d", code)
		}
		err = chromedp.Do(ctx,
			chromedp.Click(`//tr[td[1]="ci"]//button[starts-with(@id,"revoke-")]`),
			chromedp.WaitVisible(`//p[contains(@class,"notice") and starts-with(text(),"Revoked")]`),
		)
		if err != nil {
			t.Fatal(err)
		}
		if code := apiAs(t, e.srv, key, http.MethodGet, "/v1/memory_stores", ""); code != http.StatusUnauthorized {
			t.Errorf("the revoked key: %d, want 401", code)
		}
	})

	t.Run("export", func(t *testing.T) {
		dir := t.TempDir()
		err := chromedp.Do(ctx,
			func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := cdp.Call(ctx, tg, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
				return chromedp.Void{}, err
			},
			chromedp.Navigate(e.base+"stores/"+storeID+"/transfer"),
			chromedp.Click(chromedp.CSS("#export-jsonl")),
		)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "agent-memory.jsonl")
		var b []byte
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if b, err = os.ReadFile(file); err == nil && bytes.Count(b, []byte("\n")) == 2 {
				break
			}
		}
		if !bytes.Contains(b, []byte(`"path":"/learned/today.md"`)) || !bytes.Contains(b, []byte(`"path":"/team/conventions.md"`)) {
			t.Errorf("the downloaded export: %q (%v)", b, err)
		}
	})
}
