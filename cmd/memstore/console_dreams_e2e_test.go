package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
)

// seededDream is a dream made in a served database by seedDream.
type seededDream struct {
	ID, Input, Output string
}

// seedDream makes, in the database file db that a memstore serve serves,
// a completed create_new dream of store storeID that proposes three
// changes: /notes/plan.md rewritten and /notes/summary.md added (both
// ready) and /notes/decisions.md rewritten while a person changed it in
// the input meanwhile (a conflict). It works as the worker does, through
// a core over the same file (the server runs no worker without a model).
func seedDream(t *testing.T, db, storeID string) seededDream {
	t.Helper()
	ctx := context.Background()
	sdb, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	core := memstore.NewCore(sdb, memstore.WithDreams(true))
	ws, err := core.Workspace(ctx, memstore.DefaultWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	key := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_seed"}}
	ses, _, _, err := core.CreateSession(ctx, key, memstore.SessionCreate{Title: "Planning chat"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := core.CreateDream(ctx, key, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{
			{Type: memstore.DreamInputMemoryStore, MemoryStoreID: storeID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}},
		},
		Model:        memstore.DreamModel{ID: "claude-sonnet-4-6"},
		Instructions: ptrTo("Merge the notes; keep the decisions."),
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := core.ClaimDream(ctx, "seed", time.Minute)
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	dreamer, err := core.BeginDream(ctx, claimed, "seed")
	if err != nil {
		t.Fatal(err)
	}
	out := claimed.OutputStoreID
	rewrite := func(c *memstore.Caller, store, path, content string) {
		t.Helper()
		m, err := memstore.FindMemory(ctx, core, c, store, path)
		if err == nil {
			_, err = core.UpdateMemory(ctx, c, store, m.ID, memstore.MemoryUpdate{Content: &content})
		}
		if err != nil {
			t.Fatalf("rewrite %s: %v", path, err)
		}
	}
	rewrite(dreamer, out, "/notes/plan.md", "# Plan\n\n1. step one\n2. step two, done\n3. step three, next\n")
	rewrite(dreamer, out, "/notes/decisions.md", "Use SQLite until a second server is needed; then PostgreSQL.\n")
	if _, err := core.CreateMemory(ctx, dreamer, out, memstore.MemoryCreate{Path: "/notes/summary.md", Content: "The plan is on step three.\n"}); err != nil {
		t.Fatal(err)
	}
	rewrite(key, storeID, "/notes/decisions.md", "Use SQLite for now.\n")
	err = core.FinishDream(ctx, d.ID, "seed", memstore.DreamCompleted,
		memstore.DreamUsage{InputTokens: 5120, OutputTokens: 830, CacheReadInputTokens: 2048}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return seededDream{ID: d.ID, Input: storeID, Output: out}
}

func ptrTo[T any](v T) *T { return &v }

// consoleDreamFlows reviews a dream in the browser as ann: the list leads
// to it, its page shows each proposed change beside the original, with
// the conflict marked and not selectable; applying the two ready ones
// writes them to the input store, and the conflict stays as the person
// left it. An auditor, who may not change stores, reads the changes and is
// offered no apply.
func consoleDreamFlows(t *testing.T, e consoleEnv, db string) {
	storeID := apiPost(t, e.srv, "/v1/memory_stores", `{"name":"Plans"}`)
	for _, m := range []struct{ path, content string }{
		{"/notes/plan.md", "# Plan\n\n1. step one\n2. step two\n"},
		{"/notes/decisions.md", "Use SQLite until a second server is needed.\n"},
	} {
		apiPost(t, e.srv, "/v1/memory_stores/"+storeID+"/memories", fmt.Sprintf(`{"path":%q,"content":%q}`, m.path, m.content))
	}
	d := seedDream(t, db, storeID)
	ctx, dialogs := e.newBrowser(t)
	if err := e.signIn(ctx, "ann", e.password, "table"); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.base+"dreams"),
		chromedp.WaitVisible(chromedp.CSS("#dreams")),
		chromedp.Click(chromedp.CSS(`#dreams a[href$="/dreams/`+d.ID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#apply-form")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.text(ctx, "#dream-status"); !strings.Contains(got, "completed") {
		t.Errorf("status %q", got)
	}
	if got := e.text(ctx, "#change-counts"); !strings.Contains(got, "3 changes: 2 ready, 1 in conflict") {
		t.Errorf("counts %q", got)
	}
	main := e.text(ctx, "main")
	for _, want := range []string{"5120 input tokens", "830 output tokens", "Original (input store)", "Proposed (output store)",
		"3. step three, next", "Use SQLite for now.", "The plan is on step three."} {
		if !strings.Contains(main, want) {
			t.Errorf("the dream's page lacks %q", want)
		}
	}
	// The conflict has no checkbox: it cannot be chosen.
	boxes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#apply-form input[name=path]')].map(b => b.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(boxes, " ") != "/notes/plan.md /notes/summary.md" {
		t.Errorf("the changes that can be chosen: %q", boxes)
	}

	t.Run("auditor reads only", func(t *testing.T) {
		mctx, _ := e.newBrowser(t)
		err := e.signIn(mctx, "audra", e.password, "#signout")
		if err == nil {
			err = chromedp.Do(mctx, chromedp.Navigate(e.base+"dreams/"+d.ID), chromedp.WaitVisible(chromedp.CSS("#apply-form")))
		}
		if err != nil {
			t.Fatal(err)
		}
		// The auditor reads the changes, but is offered no apply.
		n, err := chromedp.Run(mctx, chromedp.Evaluate[int](`document.querySelectorAll('#apply, #apply-form input[name=path]:not([disabled])').length`))
		if err != nil || n != 0 {
			t.Errorf("the auditor is offered %d controls to apply (%v)", n, err)
		}
		if got := memoryAt(t, e.srv, storeID, "/notes/plan.md"); got != "# Plan\n\n1. step one\n2. step two\n" {
			t.Errorf("an auditor's apply changed the store: %q", got)
		}
	})

	t.Run("apply", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`input[value="/notes/plan.md"]`)),
			chromedp.Click(chromedp.CSS(`input[value="/notes/summary.md"]`)),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitVisible(chromedp.CSS(".notice")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.text(ctx, ".notice"); !strings.Contains(got, "2 of the chosen changes applied") {
			t.Errorf("notice %q", got)
		}
		for path, want := range map[string]string{
			"/notes/plan.md":      "# Plan\n\n1. step one\n2. step two, done\n3. step three, next\n",
			"/notes/summary.md":   "The plan is on step three.\n",
			"/notes/decisions.md": "Use SQLite for now.\n",
		} {
			if got := memoryAt(t, e.srv, storeID, path); got != want {
				t.Errorf("input %s: %q, want %q", path, got, want)
			}
		}
		if got := e.text(ctx, "#change-counts"); !strings.Contains(got, "0 ready, 1 in conflict, 2 already in the input store") {
			t.Errorf("counts after the apply %q", got)
		}
	})
	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d dialogs opened", n)
	}
}

// memoryAt is the content of the memory at path in a store of srv, ""
// when there is none.
func memoryAt(t *testing.T, srv *child, storeID, path string) string {
	t.Helper()
	var list struct {
		Data []struct{ ID, Path string }
	}
	if code := apiGet(t, srv, "/v1/memory_stores/"+storeID+"/memories?depth=0&limit=100", &list); code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	for _, m := range list.Data {
		if m.Path == path {
			var full struct{ Content string }
			if code := apiGet(t, srv, "/v1/memory_stores/"+storeID+"/memories/"+m.ID, &full); code != http.StatusOK {
				t.Fatalf("get %s: %d", path, code)
			}
			return full.Content
		}
	}
	return ""
}
