package console_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
	"github.com/memstore/memstore/internal/transfer"
)

// TestTreeLongPrefix: a folder path no memory could be under is refused
// with a clear message, not listed with a breadcrumb whose size grows
// with the square of its length.
func TestTreeLongPrefix(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "auditor")
	long := strings.Repeat("/a", 2000) + "/"
	resp, body := f.get(t, c, "/console/stores/"+f.storeID+"?path="+url.QueryEscape(long))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "the limit is 1024") || len(body) > 64<<10 {
		t.Errorf("a tree at a %d-byte prefix: %d, %d bytes", len(long), resp.StatusCode, len(body))
	}
}

// TestFormOverServerLimit: a form over the server's limit on a request's
// body (as 'memstore serve' sets it) is refused as too large, saying so,
// rather than as a form without its security token; nothing is imported.
func TestFormOverServerLimit(t *testing.T) {
	f := newFixture(t, "x")
	const limit = 64 << 10
	capped := httptest.NewServer(http.MaxBytesHandler(f.h, limit))
	t.Cleanup(capped.Close)
	f.srv = capped
	c := f.signIn(t, "member")
	line := `{"path":"/big/%d.md","content":"` + strings.Repeat("z", 1000) + `"}` + "\n"
	var file strings.Builder
	for i := 0; file.Len() <= limit; i++ {
		fmt.Fprintf(&file, line, i)
	}
	resp, body := f.upload(t, c, f.storeID, "big.jsonl", []byte(file.String()))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than this server accepts") || strings.Contains(body, "security token") {
		t.Errorf("an import over the server's limit: %d\n%s", resp.StatusCode, body)
	}
	p, err := f.core.Memories(context.Background(), f.op, f.storeID, memstore.MemoryFilter{PathPrefix: "/big/", Limit: 1})
	if err != nil || len(p.Items) != 0 {
		t.Errorf("after a refused import: %v, %d memories", err, len(p.Items))
	}
	_, page := f.get(t, c, "/console/stores/"+f.storeID+"/new")
	resp, body = f.post(t, c, "/console/stores/"+f.storeID+"/memories", f.srv.URL, url.Values{
		"csrf": {csrfOf(t, page)}, "path": {"/big.md"}, "content": {strings.Repeat("z", limit)}})
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than this server accepts") {
		t.Errorf("a memory over the server's limit: %d\n%s", resp.StatusCode, body)
	}
}

// TestImportTooManyLines: a JSON-lines file of more entries than an
// import reads is refused whole, as a zip of too many files is, rather
// than creating memories and reporting on each line without bound.
func TestImportTooManyLines(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "member")
	file := `{"path":"/first.md","content":"x"}` + "\n" + strings.Repeat("x\n", transfer.MaxEntries)
	resp, body := f.upload(t, c, f.storeID, "many.jsonl", []byte(file))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "nothing was imported") || len(body) > 64<<10 {
		t.Errorf("an import of %d lines: %d, %d bytes", transfer.MaxEntries+1, resp.StatusCode, len(body))
	}
	p, err := f.core.Memories(context.Background(), f.op, f.storeID, memstore.MemoryFilter{PathPrefix: "/first.md", Limit: 1})
	if err != nil || len(p.Items) != 0 {
		t.Errorf("after a refused import: %v, %d memories at /first.md", err, len(p.Items))
	}
}

// TestAutolinksNoopener: every link of a memory's rendering, autolinks
// (<https://...>, bare www. and https:// addresses) too, has
// rel="noopener noreferrer".
func TestAutolinksNoopener(t *testing.T) {
	f := newFixture(t, "<https://example.com/a> www.example.org https://x.example/b [r](https://y.example/)\n")
	c := f.signIn(t, "auditor")
	_, body := f.get(t, c, "/console/stores/"+f.storeID+"/memories/"+f.memID)
	rendered := body[strings.Index(body, `id="rendered"`):strings.Index(body, `id="raw"`)]
	links := regexp.MustCompile(`<a [^>]*>`).FindAllString(rendered, -1)
	if len(links) != 4 {
		t.Fatalf("%d links rendered, want 4:\n%s", len(links), rendered)
	}
	for _, a := range links {
		if !strings.Contains(a, `rel="noopener noreferrer"`) {
			t.Errorf("a link without rel=noopener: %s", a)
		}
	}
}

// failingPages is the core's memories, with every list after the first
// page failing, as a database that fails part way through an export.
type failingPages struct{ memstore.MemoryService }

func (fp failingPages) Memories(ctx context.Context, c *memstore.Caller, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	if f.Page != "" {
		return memstore.Page[memstore.ListItem]{}, errors.New("disk I/O error")
	}
	return fp.MemoryService.Memories(ctx, c, storeID, f)
}

// TestExportCutShort: an export that fails part way ends in an error the
// browser sees (the download fails), not in a file that looks complete
// but lacks memories.
func TestExportCutShort(t *testing.T) {
	f := newFixture(t, "x", func(cfg *console.Config) { cfg.Memories = failingPages{cfg.Memories} })
	for i := range 30 {
		if _, err := f.core.CreateMemory(context.Background(), f.op, f.storeID, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	c := f.signIn(t, "member")
	for _, format := range []string{"jsonl", "zip"} {
		resp, err := c.Get(f.srv.URL + "/console/stores/" + f.storeID + "/export?format=" + format)
		if err != nil {
			continue // failed before the headers: nothing was sent
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("an export of %s cut short read as complete: %d, %d bytes", format, resp.StatusCode, len(b))
		}
	}
}

// TestSignInLink: opening a sign-in link uses nothing (a chat's preview
// may fetch it); confirming signs in, with a session of its own, once;
// signing out ends that session on the server, not only in the browser.
func TestSignInLink(t *testing.T) {
	f := newFixture(t, "x")
	users := memstore.NewUsers(f.db)
	admin := &memstore.Caller{WorkspaceID: f.op.WorkspaceID, Actor: f.op.Actor}
	secret, _, err := users.CreateSignInLink(context.Background(), admin, "member")
	if err != nil {
		t.Fatal(err)
	}
	c := f.client(t)
	for range 2 {
		if resp, body := f.get(t, c, "/console/link?t="+url.QueryEscape(secret)); resp.StatusCode != http.StatusOK || !strings.Contains(body, `value="`+secret+`"`) {
			t.Fatalf("the link's page: %d\n%s", resp.StatusCode, body)
		}
	}
	resp, _ := f.post(t, c, "/console/link", f.srv.URL, url.Values{"t": {secret}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redeeming the link: %d", resp.StatusCode)
	}
	var session string
	for _, ck := range resp.Cookies() {
		session = ck.Value
	}
	if !strings.HasPrefix(session, memstore.SignInSecretPrefix) || strings.Contains(session, secret) {
		t.Errorf("the link signed in with cookie %q", session)
	}
	if resp, _ := f.post(t, f.client(t), "/console/link", f.srv.URL, url.Values{"t": {secret}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the link used twice: %d", resp.StatusCode)
	}
	_, page := f.get(t, c, "/console/stores")
	if resp, _ := f.post(t, c, "/console/signout", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if _, _, err := users.Authenticate(context.Background(), session); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("the session works after signing out: %v", err)
	}
}

// TestAuditorChangesNothing: every form of the console, sent by an
// auditor with a good token, is refused by the core, and the workspace
// is as it was.
func TestAuditorChangesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	ses, tok, _, err := f.core.CreateSession(ctx, f.op, memstore.SessionCreate{Title: "agent", Stores: []memstore.AttachmentCreate{{StoreID: f.storeID, Access: memstore.AccessReadWrite}}})
	if err != nil {
		t.Fatal(err)
	}
	keys := memstore.NewKeys(f.core)
	key, _, err := keys.CreateAPIKey(ctx, f.op, "ci")
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.core.Memory(ctx, f.op, f.storeID, f.memID)
	if err != nil {
		t.Fatal(err)
	}
	activity := func() int {
		p, err := f.core.Versions(ctx, f.op, f.storeID, memstore.VersionFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Items)
	}
	before := activity()
	c := f.signIn(t, "auditor")
	_, page := f.get(t, c, "/console/stores")
	csrf := csrfOf(t, page)
	st, mem := "/console/stores/"+f.storeID, "/console/stores/"+f.storeID+"/memories/"+f.memID
	for path, form := range map[string]url.Values{
		"/console/stores":    {"name": {"New"}},
		st + "/settings":     {"name": {"Renamed"}, "description": {"d"}},
		st + "/archive":      {},
		st + "/conversation": {"conversation": {"true"}},
		st + "/delete":       {"confirm": {"Notes"}},
		st + "/memories":     {"path": {"/new.md"}, "content": {"x"}},
		mem:                  {"path": {m.Path}, "orig_path": {m.Path}, "sha": {m.ContentSHA256}, "content": {"changed"}},
		mem + "/delete":      {"sha": {m.ContentSHA256}, "path": {m.Path}},
		st + "/versions/" + m.VersionID + "/restore":                    {"sha": {m.ContentSHA256}},
		st + "/versions/" + m.VersionID + "/redact":                     {},
		"/console/sessions":                                             {"title": {"t"}, "store": {f.storeID}, "access." + f.storeID: {"read_only"}},
		"/console/sessions/" + ses.ID + "/tokens":                       {},
		"/console/sessions/" + ses.ID + "/tokens/" + tok.ID + "/revoke": {},
		"/console/sessions/" + ses.ID + "/archive":                      {},
		"/console/keys":                       {"name": {"other"}},
		"/console/keys/" + key.ID + "/revoke": {},
		"/console/users":                      {"name": {"eve"}, "role": {"admin"}, "password": {password}},
	} {
		form.Set("csrf", csrf)
		if resp, body := f.post(t, c, path, f.srv.URL, form); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot") {
			t.Errorf("auditor POST %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := f.upload(t, c, f.storeID, "a.jsonl", []byte(`{"path":"/imported.md","content":"x"}`)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("auditor import: %d", resp.StatusCode)
	}
	if n := activity(); n != before {
		t.Errorf("the store has %d versions after the auditor's forms, %d before", n, before)
	}
	if s, err := f.core.Store(ctx, f.op, f.storeID); err != nil || s.Name != "Notes" || s.ArchivedAt != nil {
		t.Errorf("the store after the auditor's forms: %+v %v", s, err)
	}
	if ks, err := keys.APIKeys(ctx, f.op, "", 0); err != nil || len(ks.Items) != 1 || ks.Items[0].RevokedAt != nil {
		t.Errorf("the keys after the auditor's forms: %+v %v", ks, err)
	}
	if s, err := f.core.Session(ctx, f.op, ses.ID); err != nil || s.ArchivedAt != nil {
		t.Errorf("the session after the auditor's forms: %+v %v", s, err)
	}
}
