package console_test

import (
	"archive/zip"
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// upload posts a file to a store's import form.
func (f *fixture) upload(t *testing.T, c *http.Client, storeID, name string, content []byte) (*http.Response, string) {
	t.Helper()
	page := mustGet(t, f, c, "/console/stores/"+storeID+"/transfer")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf", csrfOf(t, page))
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/console/stores/"+storeID+"/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", f.srv.URL)
	return do(t, c, req)
}

// TestExportImport: a store exported as JSON lines and as a zip imports
// into another store with the same memories; an entry whose path is
// taken, or that is not a memory, is reported and changes nothing; an
// auditor exports and cannot import.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "# Style\nshort lines\n")
	if _, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: "/b.md", Content: "bee"}); err != nil {
		t.Fatal(err)
	}
	member := f.signIn(t, "member")
	resp, jsonl := f.get(t, member, "/console/stores/"+f.storeID+"/export?format=jsonl")
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename="notes.jsonl"`) {
		t.Fatalf("export jsonl: %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Count(jsonl, "\n") != 2 || !strings.Contains(jsonl, `"path":"/prefs/style.md"`) || !strings.Contains(jsonl, memstore.ContentSHA256("bee")) {
		t.Errorf("export jsonl: %s", jsonl)
	}
	resp, zipped := f.get(t, member, "/console/stores/"+f.storeID+"/export?format=zip")
	zr, err := zip.NewReader(strings.NewReader(zipped), int64(len(zipped)))
	if resp.StatusCode != http.StatusOK || err != nil || len(zr.File) != 2 {
		t.Fatalf("export zip: %d %v", resp.StatusCode, err)
	}
	if resp, _ := f.get(t, member, "/console/stores/"+f.storeID+"/export?format=tar"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown format: %d", resp.StatusCode)
	}

	// Into a new store, which already holds /b.md: it is reported, kept.
	st, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "Copy"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.core.CreateMemory(ctx, f.op, st.ID, memstore.MemoryCreate{Path: "/b.md", Content: "mine"}); err != nil {
		t.Fatal(err)
	}
	resp, body := f.upload(t, member, st.ID, "notes.jsonl", []byte(jsonl+"{\"path\":\"/x.md\"}\n"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "1 created, 2 not") {
		t.Fatalf("import jsonl: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{"/b.md", "line 3", "path and content are required"} {
		if !strings.Contains(body, want) {
			t.Errorf("the import's report lacks %q", want)
		}
	}
	all, err := f.core.Memories(ctx, f.op, st.ID, memstore.MemoryFilter{Full: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range all.Items {
		got[it.Memory.Path] = it.Memory.Content
	}
	if len(got) != 2 || got["/b.md"] != "mine" || got["/prefs/style.md"] != "# Style\nshort lines\n" {
		t.Errorf("after the import the store holds %v", got)
	}

	// A zip into a third store.
	st3, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "Zip"})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = f.upload(t, member, st3.ID, "notes.zip", []byte(zipped))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "2 created, 0 not") {
		t.Fatalf("import zip: %d %s", resp.StatusCode, body)
	}
	if resp, body := f.upload(t, member, st3.ID, "bad.zip", []byte("not a zip")); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not a zip") {
		t.Errorf("a bad zip: %d %s", resp.StatusCode, body)
	}

	auditor := f.signIn(t, "auditor")
	if resp, _ := f.get(t, auditor, "/console/stores/"+f.storeID+"/export?format=jsonl"); resp.StatusCode != http.StatusOK {
		t.Errorf("auditor's export: %d", resp.StatusCode)
	}
	if resp, _ := f.upload(t, auditor, st3.ID, "notes.jsonl", []byte(`{"path":"/new.md","content":"x"}`)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("auditor's import: %d, want 403", resp.StatusCode)
	}
}

// TestZipExportSafeNames: memories whose paths an extractor would read
// as a way out of its folder (a backslash, a drive, a share) export as
// entries that hold neither, and import back at the same paths but the
// hidden ones (a first name beginning with "."), which a zip import
// skips however they are written, as the import page says; a zip whose
// entries climb out, or name a drive, is refused entry by entry.
func TestZipExportSafeNames(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	paths := []string{`/..\..\x.md`, `/C:\x.md`, `/\\host\share\x.md`, `/CON`, `/.env`}
	for _, p := range paths {
		if _, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: p, Content: p}); err != nil {
			t.Fatal(err)
		}
	}
	member := f.signIn(t, "member")
	_, zipped := f.get(t, member, "/console/stores/"+f.storeID+"/export?format=zip")
	zr, err := zip.NewReader(strings.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range zr.File {
		if strings.ContainsAny(e.Name, `\:`) || strings.HasPrefix(e.Name, "/") || strings.HasPrefix(e.Name, ".") || e.Name == "CON" {
			t.Errorf("the export has an entry named %q", e.Name)
		}
	}
	st, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "Copy"})
	if err != nil {
		t.Fatal(err)
	}
	if _, page := f.get(t, member, "/console/stores/"+st.ID+"/transfer"); !strings.Contains(page, "hidden name") {
		t.Errorf("the import page does not say that hidden names are skipped:\n%s", page)
	}
	hiddenPaths := map[string]bool{`/..\..\x.md`: true, `/.env`: true}
	resp, body := f.upload(t, member, st.ID, "notes.zip", []byte(zipped))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "4 created, 2 not") || strings.Count(body, "skipped: hidden") != 2 {
		t.Fatalf("import the export: %d %s", resp.StatusCode, body)
	}
	all, err := f.core.Memories(ctx, f.op, st.ID, memstore.MemoryFilter{Full: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, it := range all.Items {
		got[it.Memory.Path] = it.Memory.Content == it.Memory.Path || it.Memory.Path == "/prefs/style.md"
	}
	for _, p := range append(paths, "/prefs/style.md") {
		if _, ok := got[p]; hiddenPaths[p] == ok || !hiddenPaths[p] && !got[p] {
			t.Errorf("%s after the round trip (hidden %v): %v", p, hiddenPaths[p], got)
		}
	}

	var hostile bytes.Buffer
	zw := zip.NewWriter(&hostile)
	for _, name := range []string{`../../x.md`, `..\..\x.md`, `C:\x.md`, `\\host\share\x.md`, `/etc/x.md`, "fine.md"} {
		w, _ := zw.Create(name)
		w.Write([]byte("x"))
	}
	zw.Close()
	st2, err := f.core.CreateStore(ctx, f.op, memstore.StoreCreate{Name: "Hostile"})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = f.upload(t, member, st2.ID, "hostile.zip", hostile.Bytes())
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "1 created, 5 not") || strings.Count(body, "unsafe name") != 5 {
		t.Errorf("import a hostile zip: %d %s", resp.StatusCode, body)
	}
	if all, _ := f.core.Memories(ctx, f.op, st2.ID, memstore.MemoryFilter{Limit: 10}); len(all.Items) != 1 {
		t.Errorf("the hostile zip made %d memories, want /fine.md alone", len(all.Items))
	}
}
