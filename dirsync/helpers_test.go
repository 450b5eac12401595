package dirsync_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dirsync"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// server is a memstore server on a real SQLite file, with one workspace,
// an API key and a store, and a record of the requests it answered.
type server struct {
	URL   string
	DB    *sqlite.DB
	srv   *httptest.Server
	ws    *memstore.Workspace
	key   string
	store string
	// by is who the test's own direct changes are recorded as.
	by memstore.Actor

	mu       sync.Mutex
	requests []string // "METHOD /path"
}

// serverOptions adjust a test server.
type serverOptions struct {
	// wrap wraps the API's handler, to change what a client sees.
	wrap func(http.Handler) http.Handler
	// maxMemories is the store's cap; 2,000 (the server's default) when 0.
	maxMemories int
}

func newServer(tb testing.TB, o serverOptions) *server {
	tb.Helper()
	if o.maxMemories == 0 {
		o.maxMemories = 2000
	}
	db := sqlitetest.Open(tb, sqlite.Options{})
	s := &server{DB: db, by: memstore.Actor{Type: memstore.ActorUser, ID: "user_test"}}
	core := memstore.NewCore(db, memstore.MaxMemoriesPerStore(o.maxMemories))
	var h http.Handler = httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core, Search: core})
	if o.wrap != nil {
		h = o.wrap(h)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close) // before the database closes
	s.ws = sqlitetest.Workspace(tb, db, "team")
	_, s.key = sqlitetest.APIKey(tb, db, s.ws.ID, "sync")
	s.store = sqlitetest.Store(tb, db, s.ws.ID, memstore.StoreCreate{Name: "Notes"}).ID
	return s
}

// client is an API client of the server with its key.
func (s *server) client() *httpapi.Client {
	c := httpapi.NewClient(s.URL, s.key)
	c.HTTPClient = s.srv.Client()
	return c
}

// options are the sync options of dir with the server's store.
func (s *server) options(dir string) dirsync.Options {
	return dirsync.Options{
		Memories: s.client(),
		StoreID:  s.store,
		Dir:      dir,
		Device:   "laptop",
		Now:      func() time.Time { return time.Date(2026, 9, 1, 12, 34, 56, 0, time.UTC) },
	}
}

// takeRequests returns the requests answered since the last call.
func (s *server) takeRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// putAll puts each memory of files, path → content.
func (s *server) putAll(tb testing.TB, files map[string]string) {
	tb.Helper()
	for p, c := range files {
		s.put(tb, p, c)
	}
}

// put sets a memory's content in the store, as another writer would:
// one that may write what the server's content rules refuse (a server
// whose operator turned them off), as a hostile store may hold.
func (s *server) put(tb testing.TB, path, content string) {
	tb.Helper()
	ctx := context.Background()
	m, err := memstore.FindMemory(ctx, memstore.NewCore(s.DB), &memstore.Caller{WorkspaceID: s.ws.ID, Actor: s.by}, s.store, path)
	w := sqlitetest.Writer(s.DB, memstore.WithContentRules(memstore.ContentRules{AllowCredentials: true, AllowOversizedIndex: true}))
	switch memstore.ErrorCode(err) {
	case memstore.ENotFound:
		_, err = w.CreateMemory(ctx, s.ws.ID, s.store, memstore.MemoryCreate{Path: path, Content: content}, s.by)
	case "":
		_, err = w.UpdateMemory(ctx, s.ws.ID, s.store, m.ID, memstore.MemoryUpdate{Content: &content}, s.by)
	}
	if err != nil {
		tb.Fatalf("put %s: %v", path, err)
	}
}

// rm deletes a memory from the store, as another writer would.
func (s *server) rm(tb testing.TB, path string) {
	tb.Helper()
	ctx := context.Background()
	m, err := memstore.FindMemory(ctx, memstore.NewCore(s.DB), &memstore.Caller{WorkspaceID: s.ws.ID, Actor: s.by}, s.store, path)
	if err == nil {
		err = sqlitetest.Writer(s.DB).DeleteMemory(ctx, s.ws.ID, s.store, m.ID, "", s.by)
	}
	if err != nil {
		tb.Fatalf("rm %s: %v", path, err)
	}
}

// files returns the store's memories, path → content.
// inStep checks that the directory (conflict copies aside) and the store
// both hold want, and returns the directory's conflict copies.
func (s *server) inStep(tb testing.TB, dir string, want map[string]string) (copies map[string]string) {
	tb.Helper()
	local, copies := tree(tb, dir)
	if diff := cmp.Diff(want, local); diff != "" {
		tb.Errorf("directory (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.files(tb)); diff != "" {
		tb.Errorf("store (-want +got):\n%s", diff)
	}
	return copies
}

func (s *server) files(tb testing.TB) map[string]string {
	tb.Helper()
	ctx := context.Background()
	out := map[string]string{}
	f := memstore.MemoryFilter{Full: true, Limit: 20}
	for {
		page, err := s.DB.Memories(ctx, s.ws.ID, s.store, f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, it := range page.Items {
			out[it.Memory.Path] = it.Memory.Content
		}
		if page.Next == "" {
			return out
		}
		f.Page = page.Next
	}
}

// contents returns every content ever written in the store (created or
// modified versions), the acknowledged changes.
func (s *server) contents(tb testing.TB) []string {
	tb.Helper()
	ctx := context.Background()
	var out []string
	f := memstore.VersionFilter{Full: true, Limit: 20}
	for {
		page, err := s.DB.Versions(ctx, s.ws.ID, s.store, f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, v := range page.Items {
			if v.HasContent {
				out = append(out, v.Content)
			}
		}
		if page.Next == "" {
			return out
		}
		f.Page = page.Next
	}
}

// sync runs a sync that must succeed.
// pulled is a server whose store holds the given memories (path, content,
// path, content, … in the order they are written) and a fresh directory
// a first sync has filled from it.
func pulled(tb testing.TB, pathContent ...string) (*server, string) {
	tb.Helper()
	s := newServer(tb, serverOptions{})
	for i := 0; i+1 < len(pathContent); i += 2 {
		s.put(tb, pathContent[i], pathContent[i+1])
	}
	dir := tb.TempDir()
	mustSync(tb, s.options(dir))
	return s, dir
}

func mustSync(tb testing.TB, o dirsync.Options) *dirsync.Report {
	tb.Helper()
	rep, err := dirsync.Sync(context.Background(), o)
	if err != nil {
		tb.Fatalf("sync %s: %v", o.Dir, err)
	}
	return rep
}

// write writes files under dir, rel → content, making directories.
func write(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// remove deletes files under dir.
func remove(tb testing.TB, dir string, rels ...string) {
	tb.Helper()
	for _, rel := range rels {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			tb.Fatal(err)
		}
	}
}

// tree returns the files of dir as memory paths → content, leaving out
// the sync's state and lock, and the conflict copies, which it returns
// apart (relative path → content).
func tree(tb testing.TB, dir string) (files, conflicts map[string]string) {
	tb.Helper()
	files, conflicts = map[string]string{}, map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(rel, ".memstore-sync"):
		case strings.Contains(rel, ".conflict-"):
			conflicts[rel] = string(data)
		default:
			files["/"+rel] = string(data)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files, conflicts
}

// changes lists a report's changes as "op path" lines, sorted.
func changes(r *dirsync.Report) []string {
	var out []string
	for _, c := range r.Changes {
		s := c.Op + " " + c.Path
		if c.Note != "" {
			s += " (" + c.Note + ")"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// skips lists a report's skipped paths as "side path", sorted.
func skips(r *dirsync.Report) []string {
	var out []string
	for _, k := range r.Skipped {
		out = append(out, k.Side+" "+k.Path)
	}
	slices.Sort(out)
	return out
}

// sha is the content_sha256 of s.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// appendLine adds a line to a file of dir.
func appendLine(tb testing.TB, dir, rel, line string) {
	tb.Helper()
	p := filepath.Join(dir, rel)
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		tb.Error(err)
		return
	}
	data = append(data, line+"\n"...)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		tb.Error(err)
	}
}

// sameFiles reports whether two maps of files are equal.
func sameFiles(a, b map[string]string) bool { return diffMaps(a, b) == "" }

// diffMaps lists the keys where two maps of files differ.
func diffMaps(a, b map[string]string) string {
	var out bytes.Buffer
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			fmt.Fprintf(&out, "%s: %q (%v) vs %q (%v)\n", k, va, oka, vb, okb)
		}
	}
	return out.String()
}
