package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// field is the value of the hidden or text input called name in a page.
func field(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no field %s in:\n%s", name, body)
	}
	return html.UnescapeString(m[1])
}

// textarea is the text of the page's content text area.
func textarea(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<textarea id="content"[^>]*>\n(.*?)</textarea>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no content text area in:\n%s", body)
	}
	return html.UnescapeString(m[1])
}

func (f *fixture) content(t *testing.T, id string) *memstore.Memory {
	t.Helper()
	m, err := f.core.Memory(context.Background(), f.op, f.storeID, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// editForm is the form of the edit page as a browser would send it, with
// the person's content.
func editForm(t *testing.T, body, content string) url.Values {
	return url.Values{"csrf": {csrfOf(t, body)}, "path": {field(t, body, "path")}, "orig_path": {field(t, body, "orig_path")},
		"sha": {field(t, body, "sha")}, "content": {content}}
}

// TestEditConflict: a save is conditional on what the person saw. An
// agent's change meanwhile is not overwritten: the page shows the
// difference, keeps the person's text, and a second save (keep mine)
// is conditional on the agent's version.
func TestEditConflict(t *testing.T) {
	f := newFixture(t, "line one\nline two\n")
	c := f.signIn(t, "member")
	memPath := "/console/stores/" + f.storeID + "/memories/" + f.memID
	_, page := f.get(t, c, memPath+"/edit")
	if got := textarea(t, page); got != "line one\nline two\n" {
		t.Fatalf("the edit page's text: %q", got)
	}
	// The agent changes the content and renames the memory meanwhile.
	theirs := "line one\nline two, by the agent\n"
	newPath := "/prefs/renamed.md"
	if _, err := f.core.UpdateMemory(context.Background(), f.op, f.storeID, f.memID, memstore.MemoryUpdate{Content: &theirs, Path: &newPath}); err != nil {
		t.Fatal(err)
	}
	mine := "line one\r\nline two, by the person\r\n" // as a browser sends a text area
	resp, body := f.post(t, c, memPath, f.srv.URL, editForm(t, page, mine))
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("a save over a change: %d\n%s", resp.StatusCode, body)
	}
	if got := f.content(t, f.memID); got.Content != theirs {
		t.Fatalf("the agent's change was overwritten: %q", got.Content)
	}
	for _, want := range []string{`id="conflict"`, "changed while you edited", `<span class="del">-line two, by the agent</span>`,
		`<span class="add">+line two, by the person</span>`, "api_actor apikey_test", "Keep yours"} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the conflict page lacks %q:\n%s", want, body)
		}
	}
	if got := textarea(t, body); got != "line one\nline two, by the person\n" {
		t.Errorf("the person's text is not kept: %q", got)
	}
	if field(t, body, "sha") != memstore.ContentSHA256(theirs) || field(t, body, "path") != newPath {
		t.Errorf("the conflict form is not conditional on the current version, or lost the rename")
	}
	// Keep mine: saved over the version now seen; the rename stays.
	resp, body = f.post(t, c, memPath, f.srv.URL, editForm(t, body, mine))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("keep mine: %d\n%s", resp.StatusCode, body)
	}
	if got := f.content(t, f.memID); got.Content != "line one\nline two, by the person\n" || got.Path != newPath {
		t.Errorf("after keep mine: %q at %s", got.Content, got.Path)
	}
	// The stale form, sent again, saves nothing.
	if resp, _ := f.post(t, c, memPath, f.srv.URL, editForm(t, page, "stale")); resp.StatusCode != http.StatusConflict {
		t.Errorf("a stale form: %d", resp.StatusCode)
	}
	if got := f.content(t, f.memID); got.Content != "line one\nline two, by the person\n" {
		t.Errorf("a stale form changed the memory: %q", got.Content)
	}
}

// TestCreateRenameDelete: a memory made, renamed and deleted with the
// forms; a path taken is a clear error that changes nothing; a deletion
// of a memory changed meanwhile is refused.
func TestCreateRenameDelete(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "member")
	_, body := f.get(t, c, "/console/stores/"+f.storeID+"/new?path=/prefs/")
	form := url.Values{"csrf": {csrfOf(t, body)}, "path": {"/prefs/new.md"}, "content": {"hello\r\nworld"}}
	resp, _ := f.post(t, c, "/console/stores/"+f.storeID+"/memories", f.srv.URL, form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	memPath := resp.Header.Get("Location")
	memPath = memPath[:strings.Index(memPath, "?")]
	id := memPath[strings.LastIndex(memPath, "/")+1:]
	if got := f.content(t, id); got.Content != "hello\nworld" || got.Path != "/prefs/new.md" {
		t.Fatalf("created %q at %s", got.Content, got.Path)
	}
	// Rename onto a taken path: an error on the form, nothing renamed.
	_, page := f.get(t, c, memPath+"/edit")
	form = editForm(t, page, "hello\nworld")
	form.Set("path", "/prefs/style.md")
	resp, body = f.post(t, c, memPath, f.srv.URL, form)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, `id="error"`) || textarea(t, body) != "hello\nworld" {
		t.Fatalf("rename onto a taken path: %d\n%s", resp.StatusCode, body)
	}
	form.Set("path", "/prefs/moved.md")
	if resp, body := f.post(t, c, memPath, f.srv.URL, form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d\n%s", resp.StatusCode, body)
	}
	if got := f.content(t, id); got.Path != "/prefs/moved.md" || got.Content != "hello\nworld" {
		t.Fatalf("renamed: %q at %s", got.Content, got.Path)
	}
	// Delete, with a confirmation page; a change meanwhile stops it.
	_, page = f.get(t, c, memPath+"/delete")
	del := url.Values{"csrf": {csrfOf(t, page)}, "sha": {field(t, page, "sha")}, "path": {field(t, page, "path")}}
	changed := "changed by the agent"
	if _, err := f.core.UpdateMemory(context.Background(), f.op, f.storeID, id, memstore.MemoryUpdate{Content: &changed}); err != nil {
		t.Fatal(err)
	}
	if resp, body := f.post(t, c, memPath+"/delete", f.srv.URL, del); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "not deleted") {
		t.Fatalf("delete after a change: %d\n%s", resp.StatusCode, body)
	}
	f.content(t, id) // still there
	_, page = f.get(t, c, memPath+"/delete")
	del.Set("sha", field(t, page, "sha"))
	resp, _ = f.post(t, c, memPath+"/delete", f.srv.URL, del)
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "path=%2Fprefs%2F") {
		t.Fatalf("delete: %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := f.core.Memory(context.Background(), f.op, f.storeID, id); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("deleted memory: %v", err)
	}
	// An auditor is refused an edit by the core.
	a := f.signIn(t, "auditor")
	_, page = f.get(t, a, "/console/stores/"+f.storeID+"/memories/"+f.memID+"/edit")
	if resp, body := f.post(t, a, "/console/stores/"+f.storeID+"/memories/"+f.memID, f.srv.URL, editForm(t, page, "y")); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot change memories") {
		t.Errorf("an auditor's edit: %d\n%s", resp.StatusCode, body)
	}
}

var versionRE = regexp.MustCompile(`versions/(memver_[A-Za-z0-9_]+)"`)

// TestHistory: the history lists every version with its operation and
// actor; the diff of two versions; restore; redact, refused to a member
// and done for an admin.
func TestHistory(t *testing.T) {
	f := newFixture(t, "first\n")
	ctx := context.Background()
	second := "second\n"
	if _, err := f.core.UpdateMemory(ctx, f.op, f.storeID, f.memID, memstore.MemoryUpdate{Content: &second}); err != nil {
		t.Fatal(err)
	}
	c := f.signIn(t, "admin")
	memPath := "/console/stores/" + f.storeID + "/memories/" + f.memID
	_, page := f.get(t, c, memPath+"/edit")
	if resp, body := f.post(t, c, memPath, f.srv.URL, editForm(t, page, "third\n")); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", resp.StatusCode, body)
	}
	resp, body := f.get(t, c, memPath+"/history")
	ids := versionRE.FindAllStringSubmatch(body, -1)
	if resp.StatusCode != 200 || len(ids) != 3 {
		t.Fatalf("history: %d, %d versions\n%s", resp.StatusCode, len(ids), body)
	}
	for _, want := range []string{"created", "modified", "api_actor apikey_test", "user_actor user_", `<span class="name">admin</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the history lacks %q", want)
		}
	}
	newest, oldest := ids[0][1], ids[2][1]
	resp, body = f.get(t, c, memPath+"/diff?from="+oldest+"&to="+newest)
	if d := html.UnescapeString(body); resp.StatusCode != 200 || !strings.Contains(d, `<span class="del">-first</span>`) || !strings.Contains(d, `<span class="add">+third</span>`) {
		t.Fatalf("diff: %d\n%s", resp.StatusCode, body)
	}
	// Restore the first version: a new version with its content.
	_, page = f.get(t, c, "/console/stores/"+f.storeID+"/versions/"+oldest)
	restore := url.Values{"csrf": {csrfOf(t, page)}, "sha": {field(t, page, "sha")}}
	if resp, body := f.post(t, c, "/console/stores/"+f.storeID+"/versions/"+oldest+"/restore", f.srv.URL, restore); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("restore: %d\n%s", resp.StatusCode, body)
	}
	if got := f.content(t, f.memID); got.Content != "first\n" {
		t.Errorf("restored: %q", got.Content)
	}
	// The same form again is stale now: nothing happens.
	if resp, _ := f.post(t, c, "/console/stores/"+f.storeID+"/versions/"+newest+"/restore", f.srv.URL, restore); resp.StatusCode != http.StatusConflict {
		t.Errorf("a stale restore: %d", resp.StatusCode)
	}
	if got := f.content(t, f.memID); got.Content != "first\n" {
		t.Errorf("a stale restore changed the memory: %q", got.Content)
	}
	// Redact the second version: a member is refused by the core.
	var secondID string
	vs, _ := f.core.Versions(ctx, f.op, f.storeID, memstore.VersionFilter{MemoryID: f.memID})
	for _, v := range vs.Items {
		if v.ContentSHA256 == memstore.ContentSHA256(second) {
			secondID = v.ID
		}
	}
	redactPath := "/console/stores/" + f.storeID + "/versions/" + secondID + "/redact"
	m := f.signIn(t, "member")
	_, page = f.get(t, m, redactPath)
	if !strings.Contains(page, "search index") || !strings.Contains(page, "cannot be undone") {
		t.Errorf("the confirmation does not explain redaction:\n%s", page)
	}
	if resp, body := f.post(t, m, redactPath, f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "member role cannot redact versions") {
		t.Errorf("a member's redaction: %d\n%s", resp.StatusCode, body)
	}
	if v, _ := f.core.Version(ctx, f.op, f.storeID, secondID); v.Redacted() {
		t.Fatal("a refused redaction redacted")
	}
	_, page = f.get(t, c, redactPath)
	if resp, _ := f.post(t, c, redactPath, f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redact: %d", resp.StatusCode)
	}
	if v, _ := f.core.Version(ctx, f.op, f.storeID, secondID); !v.Redacted() || v.Content != "" || v.Path != "" {
		t.Errorf("after redaction: %+v", v)
	}
	_, body = f.get(t, c, "/console/stores/"+f.storeID+"/versions/"+secondID)
	if !strings.Contains(body, `id="redacted"`) || strings.Contains(body, "second") || strings.Contains(body, `id="restore"`) {
		t.Errorf("the redacted version's page:\n%s", body)
	}
}

// TestSearch: results with their snippets, the terms marked, the
// content escaped.
func TestSearch(t *testing.T) {
	f := newFixture(t, "We chose <b>PostgreSQL</b> for the billing service.")
	c := f.signIn(t, "auditor")
	resp, body := f.get(t, c, "/console/stores/"+f.storeID+"/search?q=billing")
	if resp.StatusCode != 200 || !strings.Contains(body, "<mark>billing</mark>") || !strings.Contains(body, "&lt;b&gt;PostgreSQL&lt;/b&gt;") ||
		!strings.Contains(body, "/memories/"+f.memID) {
		t.Fatalf("search: %d\n%s", resp.StatusCode, body)
	}
	if _, body := f.get(t, c, "/console/stores/"+f.storeID+"/search?q=nowhere"); !strings.Contains(body, "Nothing matches") {
		t.Errorf("no result:\n%s", body)
	}
	if resp, body := f.get(t, c, "/console/stores/"+f.storeID+"/search?q="+strings.Repeat("x", memstore.MaxSearchQuery+1)); resp.StatusCode != 400 || !strings.Contains(body, "the limit is") {
		t.Errorf("an overlong query: %d\n%s", resp.StatusCode, body)
	}
	// The mode: words are this server's one; meaning needs an embedding
	// model, which the page says how to configure; the choice stays
	// selected.
	resp, body = f.get(t, c, "/console/stores/"+f.storeID+"/search?q=billing&mode=lexical")
	if resp.StatusCode != 200 || !strings.Contains(body, "<mark>billing</mark>") || !strings.Contains(body, `<option value="lexical" selected>`) {
		t.Errorf("mode=lexical: %d\n%s", resp.StatusCode, body)
	}
	for mode, want := range map[string]string{"semantic": "--embed-url", "fuzzy": "lexical, semantic or hybrid"} {
		if resp, body := f.get(t, c, "/console/stores/"+f.storeID+"/search?q=billing&mode="+mode); resp.StatusCode != 400 || !strings.Contains(body, want) {
			t.Errorf("mode=%s: %d, want 400 saying %q\n%s", mode, resp.StatusCode, want, body)
		}
	}
}

// TestStoreAdmin: create, rename, describe, archive, delete with a typed
// confirmation.
func TestStoreAdmin(t *testing.T) {
	f := newFixture(t, "x")
	ctx := context.Background()
	c := f.signIn(t, "member")
	_, page := f.get(t, c, "/console/stores/new")
	resp, _ := f.post(t, c, "/console/stores", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "name": {"Scratch"}, "description": {"for trying"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	id := loc[len("/console/stores/"):strings.Index(loc, "?")]
	settings := "/console/stores/" + id + "/settings"
	_, page = f.get(t, c, settings)
	token := csrfOf(t, page)
	if resp, body := f.post(t, c, settings, f.srv.URL, url.Values{"csrf": {token}, "name": {"Renamed"}, "description": {"described"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d\n%s", resp.StatusCode, body)
	}
	if st, _ := f.core.Store(ctx, f.op, id); st.Name != "Renamed" || st.Description != "described" {
		t.Errorf("renamed: %+v", st)
	}
	if resp, body := f.post(t, c, settings, f.srv.URL, url.Values{"csrf": {token}, "name": {""}}); resp.StatusCode != 400 || !strings.Contains(body, `id="error"`) {
		t.Errorf("an empty name: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := f.post(t, c, "/console/stores/"+id+"/archive", f.srv.URL, url.Values{"csrf": {token}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("archive: %d", resp.StatusCode)
	}
	if st, _ := f.core.Store(ctx, f.op, id); st.ArchivedAt == nil {
		t.Error("not archived")
	}
	for _, typed := range []string{"", "renamed", "Scratch"} {
		resp, body := f.post(t, c, "/console/stores/"+id+"/delete", f.srv.URL, url.Values{"csrf": {token}, "confirm": {typed}})
		if resp.StatusCode != 400 || !strings.Contains(body, "type its name") {
			t.Errorf("delete confirmed with %q: %d\n%s", typed, resp.StatusCode, body)
		}
	}
	if _, err := f.core.Store(ctx, f.op, id); err != nil {
		t.Fatalf("a wrong confirmation deleted the store: %v", err)
	}
	if resp, _ := f.post(t, c, "/console/stores/"+id+"/delete", f.srv.URL, url.Values{"csrf": {token}, "confirm": {"Renamed"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if _, err := f.core.Store(ctx, f.op, id); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("deleted store: %v", err)
	}
	// An auditor may not make a store.
	a := f.signIn(t, "auditor")
	if resp, body := f.get(t, a, "/console/stores/new"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot manage memory stores") {
		t.Errorf("an auditor's new store: %d\n%s", resp.StatusCode, body)
	}
}

// TestStoreConversation: a store's settings say whether its memories are
// turns of conversations (memstore.ConversationKey), and change it.
func TestStoreConversation(t *testing.T) {
	f := newFixture(t, "x")
	ctx := context.Background()
	c := f.signIn(t, "member")
	settings := "/console/stores/" + f.storeID + "/settings"
	_, page := f.get(t, c, settings)
	if !strings.Contains(page, `id="conversation"`) || strings.Contains(page, `id="conversation" checked`) {
		t.Fatalf("settings of a store of topics: want the conversation box, unchecked\n%s", page)
	}
	post := func(form url.Values) {
		t.Helper()
		form.Set("csrf", csrfOf(t, page))
		if resp, body := f.post(t, c, "/console/stores/"+f.storeID+"/conversation", f.srv.URL, form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("conversation %v: %d\n%s", form, resp.StatusCode, body)
		}
	}
	post(url.Values{"conversation": {"true"}})
	if st, _ := f.core.Store(ctx, f.op, f.storeID); st.Metadata[memstore.ConversationKey] != "true" {
		t.Errorf("checked: metadata %v", st.Metadata)
	}
	if _, page = f.get(t, c, settings); !strings.Contains(page, `id="conversation" checked`) {
		t.Errorf("settings of a store of conversations: the box unchecked\n%s", page)
	}
	post(url.Values{})
	if st, _ := f.core.Store(ctx, f.op, f.storeID); len(st.Metadata) != 0 {
		t.Errorf("unchecked: metadata %v; want none", st.Metadata)
	}
}
