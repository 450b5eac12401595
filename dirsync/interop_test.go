package dirsync_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/lib/environments"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dirsync"
)

// mountRewriter serves sessions with each memory store's mount_path moved
// under a directory of the test: the server derives /mnt/memory/<slug>,
// where the SDK's worker would otherwise write.
type mountRewriter struct {
	mu   sync.Mutex
	root string // the directory mount paths are moved under
}

func (m *mountRewriter) setRoot(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.root = dir
}

func (m *mountRewriter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/sessions/") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var sess map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(body, &sess) == nil {
			m.mu.Lock()
			root := m.root
			m.mu.Unlock()
			resources, _ := sess["resources"].([]any)
			for _, res := range resources {
				if r, ok := res.(map[string]any); ok && r["type"] == "memory_store" {
					if mp, ok := r["mount_path"].(string); ok {
						r["mount_path"] = filepath.Join(root, filepath.Base(mp))
					}
				}
			}
			body, _ = json.Marshal(sess)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// logWriter sends the SDK's log lines to the test's log.
type logWriter struct{ tb testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestSDKSyncAtTheSameTime runs memstore's directory sync and the official
// SDK's own (environments.NewSessionMemoryStores, as its environment
// worker drives it with a session's token) on one store at the same time,
// each editing, creating and deleting on its side, and checks that
// neither loses a change the store acknowledged, that the sync never
// loses its own edits, and that both end with the same files.
func TestSDKSyncAtTheSameTime(t *testing.T) {
	mounts := &mountRewriter{}
	s := newServer(t, serverOptions{wrap: mounts.wrap})
	ctx := t.Context()
	seed := map[string]string{
		"/a.md": "a0\n", "/b.md": "b0\n", "/c.md": "c0\n", "/d.md": "d0\n", "/e.md": "e0\n",
		"/MEMORY.md": "- [A](a.md) — a\n",
	}
	s.putAll(t, seed)
	sess, _, token, err := memstore.NewCore(s.DB).CreateSession(ctx, &memstore.Caller{WorkspaceID: s.ws.ID, Actor: s.by}, memstore.SessionCreate{
		Stores: []memstore.AttachmentCreate{{StoreID: s.store}},
	})
	if err != nil {
		t.Fatal(err)
	}

	// The SDK downloads the store, with the session's token, as its
	// worker does at the start of a session.
	sdk := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(s.URL),
		option.WithAuthToken(token), option.WithHTTPClient(s.srv.Client()))
	mnt := filepath.Join(t.TempDir(), "mnt")
	mounts.setRoot(mnt)
	session, err := sdk.Beta.Sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stores, err := environments.NewSessionMemoryStores(sdk, environments.SessionMemoryStoresOptions{
		Workdir: t.TempDir(), Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := stores.Download(ctx, session); err != nil {
		t.Fatal(err)
	}
	roots := stores.Roots()
	if len(roots) != 1 || !strings.HasPrefix(roots[0], mnt) {
		t.Fatalf("the SDK mounted the store at %v, want under %s", roots, mnt)
	}
	sdkDir := roots[0]
	if got, _ := tree(t, sdkDir); !sameFiles(seed, withoutMarker(got)) {
		t.Fatalf("the SDK's download: %v", got)
	}

	dir := t.TempDir()
	mustSync(t, s.options(dir))

	// Each side edits, creates and deletes; both edit c.md and MEMORY.md.
	write(t, sdkDir, map[string]string{"a.md": "a by the SDK\n", "c.md": "c by the SDK\n", "s-new.md": "from the SDK\n"})
	remove(t, sdkDir, "d.md")
	write(t, dir, map[string]string{"b.md": "b here\n", "c.md": "c here\n", "l-new.md": "from here\n"})
	remove(t, dir, "e.md")

	const rounds = 5
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range rounds {
			appendLine(t, sdkDir, "MEMORY.md", fmt.Sprintf("- [SDK %d](s-%d.md) — sdk", i, i))
			write(t, sdkDir, map[string]string{fmt.Sprintf("s-%d.md", i): fmt.Sprintf("sdk %d\n", i)})
			stores.FlushWrites(ctx) // pushes new and changed files
		}
		stores.Finish(ctx) // the full sync that ends a session
	})
	wg.Go(func() {
		for i := range rounds {
			appendLine(t, dir, "MEMORY.md", fmt.Sprintf("- [Here %d](l-%d.md) — here", i, i))
			write(t, dir, map[string]string{fmt.Sprintf("l-%d.md", i): fmt.Sprintf("here %d\n", i)})
			if _, err := dirsync.Sync(ctx, s.options(dir)); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	for range 2 {
		mustSync(t, s.options(dir))
	}

	store := s.files(t)
	local, copies := tree(t, dir)
	if diff := diffMaps(store, local); diff != "" {
		t.Errorf("the directory and the store differ:\n%s", diff)
	}
	for p, want := range map[string]string{
		"/a.md": "a by the SDK\n", "/b.md": "b here\n", "/s-new.md": "from the SDK\n", "/l-new.md": "from here\n",
	} {
		if store[p] != want {
			t.Errorf("store %s = %q, want %q", p, store[p], want)
		}
	}
	for i := range rounds {
		if p := fmt.Sprintf("/s-%d.md", i); store[p] != fmt.Sprintf("sdk %d\n", i) {
			t.Errorf("store %s = %q", p, store[p])
		}
		if p := fmt.Sprintf("/l-%d.md", i); store[p] != fmt.Sprintf("here %d\n", i) {
			t.Errorf("store %s = %q", p, store[p])
		}
	}
	for _, p := range []string{"/d.md", "/e.md", "/" + environments.MarkerPath} {
		if _, ok := store[p]; ok {
			t.Errorf("%s is in the store", p)
		}
	}

	// No acknowledged change is lost: every content the store ever held
	// for c.md is there still, or kept as a conflict copy; and this side's
	// own edit survives either way.
	acked := s.contents(t)
	kept := func(content string) bool {
		if store["/c.md"] == content {
			return true
		}
		for _, c := range copies {
			if c == content {
				return true
			}
		}
		return false
	}
	for _, c := range []string{"c by the SDK\n", "c here\n"} {
		if slices.Contains(acked, c) && !kept(c) {
			t.Errorf("the acknowledged c.md %q was lost", c)
		}
	}
	if !kept("c here\n") {
		t.Error("this side's own edit of c.md was lost")
	}
	// Every index line the store acknowledged, and every one written
	// here, is in the final index.
	final := store["/MEMORY.md"]
	for _, content := range acked {
		if !strings.HasPrefix(content, "- [") {
			continue
		}
		for line := range strings.Lines(content) {
			if !strings.Contains(final, line) {
				t.Errorf("the acknowledged index line %q was lost", line)
			}
		}
	}
	for i := range rounds {
		if line := fmt.Sprintf("- [Here %d](l-%d.md) — here\n", i, i); !strings.Contains(final, line) {
			t.Errorf("the index line %q written here was lost", line)
		}
	}

	// A new session of the SDK sees exactly what this side sees.
	stores.Dispose()
	mounts.setRoot(filepath.Join(t.TempDir(), "mnt2"))
	session, err = sdk.Beta.Sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := environments.NewSessionMemoryStores(sdk, environments.SessionMemoryStoresOptions{Workdir: t.TempDir(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Download(ctx, session); err != nil {
		t.Fatal(err)
	}
	defer again.Dispose()
	got, _ := tree(t, again.Roots()[0])
	if diff := diffMaps(local, withoutMarker(got)); diff != "" {
		t.Errorf("the SDK's new download differs from the directory:\n%s", diff)
	}
}

func withoutMarker(files map[string]string) map[string]string {
	delete(files, "/"+environments.MarkerPath)
	return files
}
