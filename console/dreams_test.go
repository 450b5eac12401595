package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

// withDreams serves the dreams pages over the fixture's core.
func withDreams(c *console.Config) {
	core := c.Stores.(*memstore.Core)
	c.Dreams, c.Review = core, core
}

// dreamFixture makes a completed dream of f's store that rewrote
// /prefs/style.md (ready), added /prefs/new.md with markup in it (ready)
// and rewrote /prefs/other.md, which an agent changed in the store
// meanwhile (a conflict).
func dreamFixture(t *testing.T, f *fixture) string {
	t.Helper()
	ctx := t.Context()
	core := memstore.NewCore(f.db, memstore.WithDreams(true))
	other, err := core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: "/prefs/other.md", Content: "other\n"})
	if err != nil {
		t.Fatal(err)
	}
	ses, _, _, err := core.CreateSession(ctx, f.op, memstore.SessionCreate{Title: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := core.CreateDream(ctx, f.op, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: f.storeID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}},
		Model: memstore.DreamModel{ID: "m"},
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := core.ClaimDream(ctx, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dreamer, err := core.BeginDream(ctx, claimed, "w")
	if err != nil {
		t.Fatal(err)
	}
	out := claimed.OutputStoreID
	for path, c := range map[string]string{"/prefs/style.md": "tabs, consolidated\n", "/prefs/other.md": "other, by the dream\n"} {
		m, err := memstore.FindMemory(ctx, core, dreamer, out, path)
		if err == nil {
			_, err = core.UpdateMemory(ctx, dreamer, out, m.ID, memstore.MemoryUpdate{Content: &c})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := core.CreateMemory(ctx, dreamer, out, memstore.MemoryCreate{Path: "/prefs/new.md", Content: "<script>window.pwned=1</script>\n"}); err != nil {
		t.Fatal(err)
	}
	mine := "other, by an agent\n"
	if _, err := core.UpdateMemory(ctx, f.op, f.storeID, other.ID, memstore.MemoryUpdate{Content: &mine}); err != nil {
		t.Fatal(err)
	}
	if err := core.FinishDream(ctx, d.ID, "w", memstore.DreamCompleted, memstore.DreamUsage{InputTokens: 42, OutputTokens: 7}, nil); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// TestDreamPages: the dreams list leads to a dream, whose page shows its
// facts and each proposed change beside the original, escaped, the
// conflict marked and not selectable; an apply needs the page's CSRF
// token and a role that may change stores, applies the chosen ready
// changes and reports the conflict, which it leaves alone.
func TestDreamPages(t *testing.T) {
	f := newFixture(t, "tabs\n", withDreams)
	id := dreamFixture(t, f)
	c := f.signIn(t, "admin")
	input := func(path string) string {
		t.Helper()
		m, err := memstore.FindMemory(t.Context(), f.core, f.op, f.storeID, path)
		if memstore.ErrorCode(err) == memstore.ENotFound {
			return ""
		}
		if err == nil {
			m, err = f.core.Memory(t.Context(), f.op, f.storeID, m.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		return m.Content
	}

	resp, body := f.get(t, c, "/console/dreams")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `href="/console/dreams/`+id+`"`) || !strings.Contains(body, ">Dreams</a>") {
		t.Fatalf("the list: %d\n%s", resp.StatusCode, body)
	}
	resp, body = f.get(t, c, "/console/dreams/"+id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the dream: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{"completed", "42 input tokens", "3 changes: 2 ready, 1 in conflict",
		"Original (input store)", "Proposed (output store)", "tabs, consolidated", "other, by an agent", "other, by the dream",
		`<input type="checkbox" name="path" value="/prefs/new.md">`, `<input type="checkbox" name="path" value="/prefs/style.md">`,
		"&lt;script&gt;window.pwned=1&lt;/script&gt;", `class="change conflict"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the dream's page lacks %q", want)
		}
	}
	if strings.Contains(body, `value="/prefs/other.md"`) || strings.Contains(body, "<script>window") {
		t.Errorf("the page offers the conflict, or shows markup raw:\n%s", body)
	}
	csrf := csrfOf(t, body)
	apply := "/console/dreams/" + id + "/apply"

	resp, _ = f.post(t, c, apply, f.srv.URL, url.Values{"path": {"/prefs/style.md"}})
	if resp.StatusCode != http.StatusForbidden || input("/prefs/style.md") != "tabs\n" {
		t.Errorf("an apply without the CSRF token: %d, style %q", resp.StatusCode, input("/prefs/style.md"))
	}
	resp, body = f.post(t, c, apply, f.srv.URL, url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "No change was chosen") {
		t.Errorf("an apply of nothing: %d", resp.StatusCode)
	}
	auditor := f.signIn(t, "auditor")
	_, page := f.get(t, auditor, "/console/dreams/"+id)
	if !strings.Contains(page, "tabs, consolidated") || strings.Contains(page, `id="apply"`) || strings.Contains(page, `name="path" value="/prefs/style.md">`) {
		t.Errorf("an auditor's page of the dream offers to apply, or lacks the changes")
	}
	resp, _ = f.post(t, auditor, apply, f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "path": {"/prefs/style.md"}})
	if resp.StatusCode != http.StatusForbidden || input("/prefs/style.md") != "tabs\n" {
		t.Errorf("an auditor's apply: %d, style %q", resp.StatusCode, input("/prefs/style.md"))
	}

	resp, body = f.post(t, c, apply, f.srv.URL, url.Values{"csrf": {csrf}, "path": {"/prefs/style.md", "/prefs/new.md", "/prefs/other.md"}})
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("the apply with a conflict: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{"2 of the chosen changes applied", "1 of the chosen changes conflict", "Not applied: the input store&#39;s memory at this path was changed since the dream began", "3 changes: 0 ready, 1 in conflict, 2 already in the input store"} {
		if !strings.Contains(body, want) {
			t.Errorf("after the apply, the page lacks %q", want)
		}
	}
	for path, want := range map[string]string{"/prefs/style.md": "tabs, consolidated\n", "/prefs/new.md": "<script>window.pwned=1</script>\n", "/prefs/other.md": "other, by an agent\n"} {
		if got := input(path); got != want {
			t.Errorf("input %s: %q, want %q", path, got, want)
		}
	}
}

// TestDreamPageBeforeItRuns: a pending dream's page says it proposes
// nothing yet and offers a cancel, which the core does.
func TestDreamPageBeforeItRuns(t *testing.T) {
	f := newFixture(t, "tabs\n", withDreams)
	core := memstore.NewCore(f.db, memstore.WithDreams(true))
	ses, _, _, err := core.CreateSession(t.Context(), f.op, memstore.SessionCreate{Title: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := core.CreateDream(t.Context(), f.op, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: f.storeID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}},
		Model: memstore.DreamModel{ID: "m"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := f.signIn(t, "member")
	resp, body := f.get(t, c, "/console/dreams/"+d.ID)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "has not started") || strings.Contains(body, "apply-form") || !strings.Contains(body, `id="cancel-dream"`) {
		t.Fatalf("a pending dream's page: %d\n%s", resp.StatusCode, body)
	}
	resp, _ = f.post(t, c, "/console/dreams/"+d.ID+"/cancel", f.srv.URL, url.Values{"csrf": {csrfOf(t, body)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	if got, err := core.Dream(t.Context(), f.op, d.ID); err != nil || got.Status != memstore.DreamCanceled {
		t.Errorf("after the cancel: %+v %v", got, err)
	}
	_, body = f.get(t, c, resp.Header.Get("Location"))
	if !strings.Contains(body, "Canceled: the dream stops") || !strings.Contains(body, `id="archive-dream"`) {
		t.Errorf("the page after the cancel lacks its notice or the archive")
	}
}

// TestDreamPageStoreDeleted: a dream whose output store was deleted
// still shows its facts, and says why its changes cannot be shown.
func TestDreamPageStoreDeleted(t *testing.T) {
	f := newFixture(t, "tabs\n", withDreams)
	id := dreamFixture(t, f)
	d, err := f.core.Dream(t.Context(), f.op, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.core.DeleteStore(t.Context(), f.op, d.OutputStoreID); err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, f.signIn(t, "admin"), "/console/dreams/"+id)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="changes-gone"`) || !strings.Contains(body, "42 input tokens") {
		t.Errorf("the page of a dream whose output store was deleted: %d\n%s", resp.StatusCode, body)
	}
}
