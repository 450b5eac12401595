package memorytool_test

// The backends that the shared tests run on: a local directory, a memory
// store in a SQLite file, and the same store through a real memstore server
// and httpapi.Client.

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/memorytool"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// memRoot is a fresh, empty /memories of one backend, with a direct view
// of what it holds for checking effects.
type memRoot struct {
	h memorytool.Handler
	// files returns every file below /memories: model path → content.
	files func(tb testing.TB) map[string]string
	// dirSize is the size column of the directory at model path p in a
	// listing.
	dirSize func(tb testing.TB, p string) string
	// hostPaths are strings that no result may contain.
	hostPaths []string
	// plant puts a file at model path p behind the tool's back, as a
	// person or another program would: the tool refuses some paths
	// (hidden ones) that it must still handle when it meets them.
	plant func(tb testing.TB, p, content string)
}

// backend opens memory roots of one kind.
type backend struct {
	name string
	open func(tb testing.TB, opts memorytool.Options) *memRoot
}

var backends = []backend{
	{"local", openLocalRoot},
	{"store", func(tb testing.TB, opts memorytool.Options) *memRoot { return newStoreEnv(tb).root(tb, nil, opts) }},
	{"http", func(tb testing.TB, opts memorytool.Options) *memRoot {
		env := newStoreEnv(tb)
		return env.root(tb, env.client(tb), opts)
	}},
}

// onEachBackend runs test once per backend, as a subtest named after it.
func onEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

func openLocalRoot(tb testing.TB, opts memorytool.Options) *memRoot {
	tb.Helper()
	tool, dir := mustOpen(tb, opts)
	return &memRoot{
		h:     tool,
		files: func(tb testing.TB) map[string]string { return localFiles(tb, dir) },
		dirSize: func(tb testing.TB, p string) string {
			tb.Helper()
			fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p[len(memorytool.Root):])))
			if err != nil {
				tb.Fatal(err)
			}
			return memorytool.FormatSize(fi.Size())
		},
		hostPaths: []string{dir, filepath.Dir(dir)},
		plant: func(tb testing.TB, p, content string) {
			tb.Helper()
			name := filepath.Join(dir, filepath.FromSlash(p[len(memorytool.Root):]))
			if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
				tb.Fatal(err)
			}
		},
	}
}

// toolActor is who the store tests' changes are recorded as.
var toolActor = memstore.Actor{Type: memstore.ActorUser, ID: "user_tooltest"}

// storeEnv is an empty memory store in a fresh SQLite database.
type storeEnv struct {
	DB        *sqlite.DB
	WS, Store string
}

func newStoreEnv(tb testing.TB) *storeEnv {
	tb.Helper()
	db := sqlitetest.Open(tb, sqlite.Options{})
	ws := sqlitetest.Workspace(tb, db, "tool")
	st := sqlitetest.Store(tb, db, ws.ID, memstore.StoreCreate{Name: "memories"})
	return &storeEnv{DB: db, WS: ws.ID, Store: st.ID}
}

// client starts a memstore server on the database, stopped at the end of
// the test, and returns a client of it with a key of the workspace.
func (e *storeEnv) client(tb testing.TB) *httpapi.Client {
	tb.Helper()
	_, secret := sqlitetest.APIKey(tb, e.DB, e.WS, "memory tool test")
	core := memstore.NewCore(e.DB)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core}))
	tb.Cleanup(srv.Close) // before the database closes
	c := httpapi.NewClient(srv.URL, secret)
	c.HTTPClient = srv.Client()
	return c
}

// caller is the tool's caller over the database.
func (e *storeEnv) caller() *memstore.Caller {
	return &memstore.Caller{WorkspaceID: e.WS, Actor: toolActor}
}

// tool returns the Store handler over the store through svc: the core
// over the database when svc is nil. A client calls as its key.
func (e *storeEnv) tool(tb testing.TB, svc memstore.MemoryService, opts memorytool.Options) *memorytool.Store {
	tb.Helper()
	caller := e.caller()
	if _, ok := svc.(*httpapi.Client); ok {
		caller = nil
	}
	if svc == nil {
		svc = memstore.NewCore(e.DB)
	}
	s, err := memorytool.NewStore(svc, caller, e.Store, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func (e *storeEnv) root(tb testing.TB, svc memstore.MemoryService, opts memorytool.Options) *memRoot {
	tb.Helper()
	return &memRoot{
		h:       e.tool(tb, svc, opts),
		files:   e.files,
		dirSize: func(testing.TB, string) string { return "4K" },
		plant: func(tb testing.TB, p, content string) {
			tb.Helper()
			sqlitetest.Create(tb, e.DB, e.WS, e.Store, p[len(memorytool.Root):], content, toolActor)
		},
	}
}

// memories returns every memory of the store, with content, by path.
func (e *storeEnv) memories(tb testing.TB) map[string]*memstore.Memory {
	tb.Helper()
	out := make(map[string]*memstore.Memory)
	f := memstore.MemoryFilter{Full: true, Limit: 20}
	for {
		page, err := e.DB.Memories(context.Background(), e.WS, e.Store, f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, it := range page.Items {
			out[it.Memory.Path] = it.Memory
		}
		if page.Next == "" {
			return out
		}
		f.Page = page.Next
	}
}

// files returns every memory's content by model path.
func (e *storeEnv) files(tb testing.TB) map[string]string {
	tb.Helper()
	out := make(map[string]string)
	for p, m := range e.memories(tb) {
		out[memorytool.Root+p] = m.Content
	}
	return out
}

// seed creates files through the tool, failing the test on an error.
func seed(tb testing.TB, h memorytool.Handler, files map[string]string) {
	tb.Helper()
	for p, content := range files {
		if res := do(tb, h, create(p, content)); res.IsError {
			tb.Fatalf("seed %s: %s", p, res.Content)
		}
	}
}
