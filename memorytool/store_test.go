package memorytool_test

// What only the memory-store backend does: memories keep their IDs and
// versions through renames, directories are prefixes, writes are guarded by
// content hashes, and the store's own rules and failures become messages.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/memorytool"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// hooked is a MemoryService that calls a hook before passing a write on;
// a hook's error is returned instead. n counts the calls of each kind,
// from 1.
type hooked struct {
	memstore.MemoryService
	mu                      sync.Mutex
	creates, updates, dels  int
	beforeCreate            func(n int, c memstore.MemoryCreate) error
	beforeUpdate            func(n int, id string, u memstore.MemoryUpdate) error
	beforeDelete            func(n int, id string) error
	beforeList, beforeFetch func() error
}

func (h *hooked) CreateMemory(ctx context.Context, caller *memstore.Caller, store string, c memstore.MemoryCreate) (*memstore.Memory, error) {
	h.mu.Lock()
	h.creates++
	n := h.creates
	h.mu.Unlock()
	if h.beforeCreate != nil {
		if err := h.beforeCreate(n, c); err != nil {
			return nil, err
		}
	}
	return h.MemoryService.CreateMemory(ctx, caller, store, c)
}

func (h *hooked) UpdateMemory(ctx context.Context, caller *memstore.Caller, store, id string, u memstore.MemoryUpdate) (*memstore.Memory, error) {
	h.mu.Lock()
	h.updates++
	n := h.updates
	h.mu.Unlock()
	if h.beforeUpdate != nil {
		if err := h.beforeUpdate(n, id, u); err != nil {
			return nil, err
		}
	}
	return h.MemoryService.UpdateMemory(ctx, caller, store, id, u)
}

func (h *hooked) DeleteMemory(ctx context.Context, caller *memstore.Caller, store, id, ifSHA256 string) error {
	h.mu.Lock()
	h.dels++
	n := h.dels
	h.mu.Unlock()
	if h.beforeDelete != nil {
		if err := h.beforeDelete(n, id); err != nil {
			return err
		}
	}
	return h.MemoryService.DeleteMemory(ctx, caller, store, id, ifSHA256)
}

func (h *hooked) Memories(ctx context.Context, caller *memstore.Caller, store string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	if h.beforeList != nil {
		if err := h.beforeList(); err != nil {
			return memstore.Page[memstore.ListItem]{}, err
		}
	}
	return h.MemoryService.Memories(ctx, caller, store, f)
}

func (h *hooked) Memory(ctx context.Context, caller *memstore.Caller, store, id string) (*memstore.Memory, error) {
	if h.beforeFetch != nil {
		if err := h.beforeFetch(); err != nil {
			return nil, err
		}
	}
	return h.MemoryService.Memory(ctx, caller, store, id)
}

// mustMemory returns the memory at store path p.
func (e *storeEnv) mustMemory(tb testing.TB, p string) *memstore.Memory {
	tb.Helper()
	m, ok := e.memories(tb)[p]
	if !ok {
		tb.Fatalf("no memory at %s", p)
	}
	return m
}

// history returns the operations and paths of a memory's versions,
// oldest first, and checks that each was made by want.
func (e *storeEnv) history(tb testing.TB, memoryID string, want memstore.Actor) []string {
	tb.Helper()
	page, err := e.DB.Versions(context.Background(), e.WS, e.Store, memstore.VersionFilter{MemoryID: memoryID, Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, v := range slices.Backward(page.Items) {
		out = append(out, string(v.Operation)+" "+v.Path)
		if v.CreatedBy != want {
			tb.Errorf("version %s of %s was made by %v, want %v", v.ID, memoryID, v.CreatedBy, want)
		}
	}
	return out
}

// set writes content to the memory at store path p directly, as another
// client would.
func (e *storeEnv) set(tb testing.TB, p, content string) {
	tb.Helper()
	m := e.mustMemory(tb, p)
	other := memstore.Actor{Type: memstore.ActorUser, ID: "user_other"}
	if _, err := sqlitetest.Writer(e.DB).UpdateMemory(context.Background(), e.WS, e.Store, m.ID, memstore.MemoryUpdate{Content: &content}, other); err != nil {
		tb.Fatal(err)
	}
}

func TestStoreRenameKeepsIDAndHistory(t *testing.T) {
	env := newStoreEnv(t)
	tool := env.tool(t, nil, memorytool.Options{})
	seed(t, tool, map[string]string{"/memories/notes.md": "one\n"})
	id := env.mustMemory(t, "/notes.md").ID
	for _, in := range []map[string]any{
		rename("/memories/notes.md", "/memories/archive/2025/notes.md"),
		insertAt("/memories/archive/2025/notes.md", 1, "two"),
		rename("/memories/archive", "/memories/old"),
	} {
		if res := do(t, tool, in); res.IsError {
			t.Fatalf("%v: %s", in, res.Content)
		}
	}
	m := env.mustMemory(t, "/old/2025/notes.md")
	if m.ID != id || m.Content != "one\ntwo\n" {
		t.Errorf("after the renames: memory %s with %q, want %s with %q", m.ID, m.Content, id, "one\ntwo\n")
	}
	want := []string{"created /notes.md", "modified /archive/2025/notes.md", "modified /archive/2025/notes.md", "modified /old/2025/notes.md"}
	if got := env.history(t, id, toolActor); !slices.Equal(got, want) {
		t.Errorf("versions:\n got %q\nwant %q", got, want)
	}
}

func TestStoreDirectories(t *testing.T) {
	env := newStoreEnv(t)
	tool := env.tool(t, nil, memorytool.Options{})
	// Siblings whose paths share the directory's name as a string prefix
	// must not be touched.
	seed(t, tool, map[string]string{
		"/memories/d/a.md": "a", "/memories/d/x/y/z.md": "z",
		"/memories/d-x.md": "dx", "/memories/d.md": "dm", "/memories/dz/q.md": "q",
	})
	sqlitetest.Create(t, env.DB, env.WS, env.Store, "/d/.h", "h", toolActor) // hidden: not through the tool
	before := env.memories(t)
	ids := func(paths ...string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, env.mustMemory(t, p).ID)
		}
		return out
	}
	moved := ids("/d/a.md", "/d/.h", "/d/x/y/z.md")

	if res := do(t, tool, rename("/memories/d", "/memories/e/f")); res.Content != "Successfully renamed /memories/d to /memories/e/f" {
		t.Fatalf("rename: %s", res.Content)
	}
	if got := ids("/e/f/a.md", "/e/f/.h", "/e/f/x/y/z.md"); !slices.Equal(got, moved) {
		t.Errorf("IDs after the rename %q, want %q", got, moved)
	}
	for _, p := range []string{"/d-x.md", "/d.md", "/dz/q.md"} {
		if m := env.mustMemory(t, p); *m != *before[p] {
			t.Errorf("%s changed: %+v", p, m)
		}
	}
	// The old directory is gone with its last memory.
	if res := do(t, tool, view("/memories/d")); res.Content != "Error: The path /memories/d does not exist. Please provide a valid path." {
		t.Errorf("view of the old directory: %q", res.Content)
	}
	for _, id := range moved {
		if h := env.history(t, id, toolActor); len(h) != 2 || !strings.HasPrefix(h[1], "modified /e/f/") {
			t.Errorf("versions of %s: %q", id, h)
		}
	}

	if res := do(t, tool, del("/memories/e")); res.Content != "Successfully deleted /memories/e" {
		t.Fatalf("delete: %s", res.Content)
	}
	after := env.memories(t)
	if got, want := slices.Sorted(maps.Keys(after)), []string{"/d-x.md", "/d.md", "/dz/q.md"}; !slices.Equal(got, want) {
		t.Errorf("after the delete: %q, want %q", got, want)
	}
	for _, id := range moved {
		if h := env.history(t, id, toolActor); len(h) != 3 || !strings.HasPrefix(h[2], "deleted /e/f/") {
			t.Errorf("versions of %s: %q", id, h)
		}
	}
	// A directory emptied by deleting its last file is gone too; /memories
	// always exists.
	for _, in := range []map[string]any{del("/memories/dz/q.md"), del("/memories/d-x.md"), del("/memories/d.md")} {
		if res := do(t, tool, in); res.IsError {
			t.Fatal(res.Content)
		}
	}
	if res := do(t, tool, view("/memories/dz")); !res.IsError {
		t.Errorf("view of an emptied directory: %q", res.Content)
	}
	if res := do(t, tool, view("/memories")); res.IsError {
		t.Errorf("view of an empty store: %q", res.Content)
	}
}

// A directory bigger than a page is listed, moved and deleted whole.
func TestStoreLargeDirectory(t *testing.T) {
	env := newStoreEnv(t)
	tool := env.tool(t, nil, memorytool.Options{})
	const n = 230
	var names []string
	for i := range n {
		p := fmt.Sprintf("/big/f%03d.md", i)
		if i%2 == 1 {
			p = fmt.Sprintf("/big/d%03d/g.md", i)
		}
		sqlitetest.Create(t, env.DB, env.WS, env.Store, p, "x", toolActor)
		names = append(names, p)
	}
	res := do(t, tool, view("/memories/big"))
	// Each file and each directory with its file: 115 + 2*115 lines, and
	// the header and the directory's own line.
	if got := strings.Count(res.Content, "\n"); got != n/2+n+1 {
		t.Errorf("listing has %d lines, want %d:\n%s", got, n/2+n+1, res.Content)
	}
	if !strings.HasSuffix(res.Content, "\n1B\t/memories/big/f228.md") || !strings.Contains(res.Content, "\n4K\t/memories/big/d229/\n1B\t/memories/big/d229/g.md\n") {
		t.Errorf("listing misses the last page:\n%s", res.Content)
	}
	if res := do(t, tool, rename("/memories/big", "/memories/huge")); res.IsError {
		t.Fatal(res.Content)
	}
	got := env.memories(t)
	if len(got) != n {
		t.Errorf("%d memories after the rename, want %d", len(got), n)
	}
	for _, p := range names {
		if _, ok := got["/huge"+strings.TrimPrefix(p, "/big")]; !ok {
			t.Errorf("%s was not moved", p)
		}
	}
	if res := do(t, tool, del("/memories/huge")); res.IsError {
		t.Fatal(res.Content)
	}
	if got := env.memories(t); len(got) != 0 {
		t.Errorf("%d memories left after deleting the directory", len(got))
	}
}

// A change made by someone else between a command's read and its write is
// detected; nothing is overwritten.
func TestStoreConcurrentChange(t *testing.T) {
	const changed = "Error: The file /memories/a.md was changed by someone else while this command ran, so nothing was written. View it again and retry."
	for _, tc := range []struct {
		name string
		in   map[string]any
		race func(tb testing.TB, env *storeEnv) // runs between the read and the write
		want string
		left map[string]string // the store's files afterwards
	}{
		{"str_replace after a change", strReplace("/memories/a.md", "one", "ONE"),
			func(tb testing.TB, env *storeEnv) { env.set(tb, "/a.md", "one two\n") },
			changed, map[string]string{"/memories/a.md": "one two\n"}},
		{"insert after a change", insertAt("/memories/a.md", 0, "top"),
			func(tb testing.TB, env *storeEnv) { env.set(tb, "/a.md", "other\n") },
			changed, map[string]string{"/memories/a.md": "other\n"}},
		{"delete after a change", del("/memories/a.md"),
			func(tb testing.TB, env *storeEnv) { env.set(tb, "/a.md", "keep me\n") },
			changed, map[string]string{"/memories/a.md": "keep me\n"}},
		{"str_replace after a delete", strReplace("/memories/a.md", "one", "ONE"),
			func(tb testing.TB, env *storeEnv) { env.remove(tb, "/a.md") },
			"Error: The file /memories/a.md no longer exists (may have been deleted or renamed concurrently).", map[string]string{}},
		{"delete after a delete", del("/memories/a.md"),
			func(tb testing.TB, env *storeEnv) { env.remove(tb, "/a.md") },
			"Successfully deleted /memories/a.md", map[string]string{}},
		{"rename after a delete", rename("/memories/a.md", "/memories/b.md"),
			func(tb testing.TB, env *storeEnv) { env.remove(tb, "/a.md") },
			"Error: The path /memories/a.md does not exist", map[string]string{}},
		{"rename onto a path taken meanwhile", rename("/memories/a.md", "/memories/b.md"),
			func(tb testing.TB, env *storeEnv) {
				sqlitetest.Create(tb, env.DB, env.WS, env.Store, "/b.md", "b", toolActor)
			},
			"Error: The destination /memories/b.md already exists", map[string]string{"/memories/a.md": "one\n", "/memories/b.md": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newStoreEnv(t)
			svc := &hooked{MemoryService: memstore.NewCore(env.DB)}
			race := func() {
				tc.race(t, env)
			}
			svc.beforeUpdate = func(int, string, memstore.MemoryUpdate) error { race(); return nil }
			svc.beforeDelete = func(int, string) error { race(); return nil }
			tool := env.tool(t, svc, memorytool.Options{})
			seed(t, env.tool(t, nil, memorytool.Options{}), map[string]string{"/memories/a.md": "one\n"})
			if got := do(t, tool, tc.in); got.Content != tc.want {
				t.Errorf("got  %q\nwant %q", got.Content, tc.want)
			}
			if got := env.files(t); !maps.Equal(got, tc.left) {
				t.Errorf("files %q, want %q", got, tc.left)
			}
		})
	}
}

// remove deletes the memory at store path p directly, as another client
// would.
func (e *storeEnv) remove(tb testing.TB, p string) {
	tb.Helper()
	m := e.mustMemory(tb, p)
	if err := sqlitetest.Writer(e.DB).DeleteMemory(context.Background(), e.WS, e.Store, m.ID, "", toolActor); err != nil {
		tb.Fatal(err)
	}
}

// A directory is deleted or moved one memory at a time: a failure part way
// says how far it got, and the memories not reached are left alone.
func TestStorePartialFailure(t *testing.T) {
	readOnly := memstore.Errorf(memstore.EPermission, "memory store is attached read-only; it cannot be changed")
	unreachable := fmt.Errorf("memory stores API at http://10.9.8.7:6366: %w", errors.New("connection refused"))
	files := map[string]string{"/memories/d/a.md": "a", "/memories/d/b.md": "b", "/memories/d/c.md": "c"}
	for _, tc := range []struct {
		name   string
		in     map[string]any
		failAt int // the call of that kind that fails
		err    error
		want   string
		left   []string
	}{
		{"delete, first fails", del("/memories/d"), 1, readOnly,
			"Error: Permission denied for /memories/d/a.md: memory store is attached read-only; it cannot be changed",
			[]string{"/memories/d/a.md", "/memories/d/b.md", "/memories/d/c.md"}},
		{"delete, second fails", del("/memories/d"), 2, readOnly,
			"Error: Only 1 of the 3 files below /memories/d were deleted; the others are still there. Deleting /memories/d/b.md failed: Permission denied for /memories/d/b.md: memory store is attached read-only; it cannot be changed",
			[]string{"/memories/d/b.md", "/memories/d/c.md"}},
		{"delete, third unreachable", del("/memories/d"), 3, unreachable,
			"Error: Only 2 of the 3 files below /memories/d were deleted; the others are still there. Deleting /memories/d/c.md failed: The memory store failed while changing /memories/d/c.md; view it to see whether the change was made.",
			[]string{"/memories/d/c.md"}},
		{"rename, first fails", rename("/memories/d", "/memories/e"), 1, readOnly,
			"Error: Permission denied for /memories/d: memory store is attached read-only; it cannot be changed",
			[]string{"/memories/d/a.md", "/memories/d/b.md", "/memories/d/c.md"}},
		{"rename, second unreachable", rename("/memories/d", "/memories/e"), 2, unreachable,
			"Error: Only 1 of the 3 files below /memories/d were moved to /memories/e; the others are still below /memories/d. Moving /memories/d/b.md failed: The memory store failed while changing /memories/d; view it to see whether the change was made.",
			[]string{"/memories/d/b.md", "/memories/d/c.md", "/memories/e/a.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newStoreEnv(t)
			seed(t, env.tool(t, nil, memorytool.Options{}), files)
			fail := func(n int) error {
				if n == tc.failAt {
					return tc.err
				}
				return nil
			}
			svc := &hooked{MemoryService: memstore.NewCore(env.DB),
				beforeUpdate: func(n int, _ string, _ memstore.MemoryUpdate) error { return fail(n) },
				beforeDelete: func(n int, _ string) error { return fail(n) },
			}
			got := do(t, env.tool(t, svc, memorytool.Options{}), tc.in)
			if got.Content != tc.want {
				t.Errorf("got  %q\nwant %q", got.Content, tc.want)
			}
			if strings.Contains(got.Content, "10.9.8.7") {
				t.Errorf("the result names the server: %q", got.Content)
			}
			if left := slices.Sorted(maps.Keys(env.files(t))); !slices.Equal(left, tc.left) {
				t.Errorf("left %q, want %q", left, tc.left)
			}
		})
	}
	// A memory changed by someone else after the listing stops a directory
	// delete there.
	env := newStoreEnv(t)
	seed(t, env.tool(t, nil, memorytool.Options{}), files)
	svc := &hooked{MemoryService: memstore.NewCore(env.DB), beforeDelete: func(n int, _ string) error {
		if n == 2 {
			env.set(t, "/d/b.md", "changed")
		}
		return nil
	}}
	got := do(t, env.tool(t, svc, memorytool.Options{}), del("/memories/d"))
	if want := "Error: Only 1 of the 3 files below /memories/d were deleted; the others are still there. Deleting /memories/d/b.md failed: The file /memories/d/b.md was changed by someone else while this command ran, so nothing was written. View it again and retry."; got.Content != want {
		t.Errorf("got  %q\nwant %q", got.Content, want)
	}
	if got, want := env.files(t), map[string]string{"/memories/d/b.md": "changed", "/memories/d/c.md": "c"}; !maps.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}

// The store's failures become messages for the model, never with details
// of the host or the network.
func TestStoreFailures(t *testing.T) {
	ctx := context.Background()

	t.Run("archived store", func(t *testing.T) {
		env := newStoreEnv(t)
		tool := env.tool(t, nil, memorytool.Options{})
		seed(t, tool, map[string]string{"/memories/a.md": "a\n"})
		if _, err := sqlitetest.Writer(env.DB).ArchiveStore(ctx, env.WS, env.Store, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}); err != nil {
			t.Fatal(err)
		}
		archived := "cannot modify archived resource: memory store " + env.Store + " is archived; its memories are read-only"
		for _, tc := range []struct {
			in   map[string]any
			want string
		}{
			{view("/memories/a.md"), "Here's the content of /memories/a.md with line numbers:\n     1\ta\n     2\t"},
			{create("/memories/b.md", "b"), "Error: /memories/b.md cannot be changed: " + archived},
			{strReplace("/memories/a.md", "a", "b"), "Error: /memories/a.md cannot be changed: " + archived},
			{rename("/memories/a.md", "/memories/b.md"), "Error: /memories/a.md cannot be changed: " + archived},
			{del("/memories/a.md"), "Error: /memories/a.md cannot be changed: " + archived},
		} {
			if got := do(t, tool, tc.in); got.Content != tc.want {
				t.Errorf("%v\n got %q\nwant %q", tc.in, got.Content, tc.want)
			}
		}
	})

	t.Run("missing store", func(t *testing.T) {
		env := newStoreEnv(t)
		tool, err := memorytool.NewStore(memstore.NewCore(env.DB), env.caller(), "memstore_nope", memorytool.Options{})
		if err != nil {
			t.Fatal(err)
		}
		gone := "Error: The memory store is not available: memory store memstore_nope not found"
		for _, in := range []map[string]any{
			view("/memories"), view("/memories/a.md"), create("/memories/a.md", "a"), strReplace("/memories/a.md", "a", "b"),
			insertAt("/memories/a.md", 0, "x"), del("/memories/a.md"), rename("/memories/a.md", "/memories/b.md"),
		} {
			if got := do(t, tool, in); got.Content != gone {
				t.Errorf("%v\n got %q\nwant %q", in, got.Content, gone)
			}
		}
	})

	t.Run("unreachable server", func(t *testing.T) {
		env := newStoreEnv(t)
		seed(t, env.tool(t, nil, memorytool.Options{}), map[string]string{"/memories/a.md": "a\n"})
		down := errors.New("memory stores API at http://10.9.8.7:6366: dial tcp 10.9.8.7:6366: connection refused")
		for _, tc := range []struct {
			name string
			svc  *hooked
			in   map[string]any
			want string
		}{
			{"list", &hooked{beforeList: func() error { return down }}, view("/memories"),
				"Error: The memory store failed while reading /memories; try again."},
			{"read", &hooked{beforeFetch: func() error { return down }}, view("/memories/a.md"),
				"Error: The memory store failed while reading /memories/a.md; try again."},
			{"create", &hooked{beforeCreate: func(int, memstore.MemoryCreate) error { return down }}, create("/memories/b.md", "b"),
				"Error: The memory store failed while changing /memories/b.md; view it to see whether the change was made."},
			{"update", &hooked{beforeUpdate: func(int, string, memstore.MemoryUpdate) error { return down }}, insertAt("/memories/a.md", 0, "x"),
				"Error: The memory store failed while changing /memories/a.md; view it to see whether the change was made."},
		} {
			tc.svc.MemoryService = memstore.NewCore(env.DB)
			if got := do(t, env.tool(t, tc.svc, memorytool.Options{}), tc.in); got.Content != tc.want {
				t.Errorf("%s\n got %q\nwant %q", tc.name, got.Content, tc.want)
			}
		}
		if got, want := env.files(t), map[string]string{"/memories/a.md": "a\n"}; !maps.Equal(got, want) {
			t.Errorf("files %q, want %q", got, want)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		env := newStoreEnv(t)
		c := env.client(t)
		c.APIKey = "sk-memstore-wrong"
		got := do(t, env.tool(t, c, memorytool.Options{}), view("/memories"))
		if !got.IsError || !strings.HasPrefix(got.Content, "Error: The memory store refused the credential: ") || strings.Contains(got.Content, "sk-memstore-wrong") {
			t.Errorf("got %q", got.Content)
		}
	})
}

// A session token reaches its own stores, and a read-only one changes
// nothing, through a real server.
func TestStoreSession(t *testing.T) {
	ctx := context.Background()
	env := newStoreEnv(t)
	seed(t, env.tool(t, nil, memorytool.Options{}), map[string]string{"/memories/a.md": "a\n", "/memories/d/b.md": "b"})
	other := sqlitetest.Store(t, env.DB, env.WS, memstore.StoreCreate{Name: "scratch"})
	core := memstore.NewCore(env.DB)
	admin := &memstore.Caller{WorkspaceID: env.WS, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	sess, _, token, err := core.CreateSession(ctx, admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
		{StoreID: env.Store, Access: memstore.AccessReadOnly},
		{StoreID: other.ID, Access: memstore.AccessReadWrite},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core}))
	t.Cleanup(srv.Close)
	client := httpapi.NewClient(srv.URL, token)

	ro, err := memorytool.NewStore(client, nil, env.Store, memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := do(t, ro, view("/memories/a.md")); got.IsError {
		t.Errorf("view through a read-only session: %q", got.Content)
	}
	for _, in := range []map[string]any{
		create("/memories/b.md", "b"), strReplace("/memories/a.md", "a", "b"), insertAt("/memories/a.md", 0, "x"),
		del("/memories/a.md"), del("/memories/d"), rename("/memories/a.md", "/memories/c.md"), rename("/memories/d", "/memories/e"),
	} {
		got := do(t, ro, in)
		if !got.IsError || !strings.Contains(got.Content, "Permission denied for /memories/") || !strings.Contains(got.Content, "read-only") {
			t.Errorf("%v through a read-only session: %q", in, got.Content)
		}
	}
	if got, want := env.files(t), map[string]string{"/memories/a.md": "a\n", "/memories/d/b.md": "b"}; !maps.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}

	// The read-write store takes changes, recorded as the session's.
	rw, err := memorytool.NewStore(client, nil, other.ID, memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := do(t, rw, create("/memories/n.md", "n")); got.IsError {
		t.Fatalf("create through a read-write session: %q", got.Content)
	}
	page, err := env.DB.Versions(ctx, env.WS, other.ID, memstore.VersionFilter{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("versions of the session's store: %v, %v", page.Items, err)
	}
	if by := page.Items[0].CreatedBy; by != (memstore.Actor{Type: memstore.ActorSession, ID: sess.ID}) {
		t.Errorf("the version was made by %v, want the session %s", by, sess.ID)
	}
}

// Paths and content that a store cannot hold are refused with the rule
// they break, and nothing changes.
func TestStoreLimits(t *testing.T) {
	env := newStoreEnv(t)
	tool := env.tool(t, nil, memorytool.Options{})
	seed(t, tool, map[string]string{"/memories/full.md": strings.Repeat("x", memstore.MaxContentBytes)})
	deep := "/memories" + strings.Repeat("/a", 20) + "/x.md"
	long := "/memories/" + strings.Repeat("n", memstore.MaxPathBytes)
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{create(long, "x"), "Error: The path " + long + " is too long"},
		{view(long), "Error: The path " + long + " is too long"},
		{create(deep, "x"), `Error: The path ` + deep + ` cannot be kept in a memory store: path must be at most 20 segments deep (path "` + deep[len("/memories"):] + `" has 21 segments; the limit is 20)`},
		{create("/memories/a\tb.md", "x"), `Error: The path /memories/a` + "\t" + `b.md cannot be kept in a memory store: path must not contain control or format characters (path "/a\tb.md" contains the control or format character U+0009)`},
		{rename("/memories/full.md", "/memories/e\u0301.md"), `Error: The path /memories/e` + "\u0301" + `.md cannot be kept in a memory store: path must be NFC-normalized (path "/e` + "\u0301" + `.md" is not in Unicode NFC; send it normalised)`},
		{create("/memories/big.md", strings.Repeat("y", memstore.MaxContentBytes+1)),
			"Error: The file /memories/big.md would be 102401 bytes, over the 102400-byte limit for a memory file. Keep memory files short: split this one or remove what is no longer needed."},
		{insertAt("/memories/full.md", 0, ""),
			"Error: The file /memories/full.md would be 102401 bytes, over the 102400-byte limit for a memory file. Keep memory files short: split this one or remove what is no longer needed."},
	} {
		if got := do(t, tool, tc.in); got.Content != tc.want {
			t.Errorf("%.80v\n got %.300q\nwant %.300q", tc.in, got.Content, tc.want)
		}
	}
	// A directory is not moved where one of its memories could not be.
	seed(t, tool, map[string]string{"/memories/d" + strings.Repeat("/a", 18) + "/x.md": "x"})
	got := do(t, tool, rename("/memories/d", "/memories/e/f"))
	if !strings.HasPrefix(got.Content, "Error: Cannot move /memories/d to /memories/e/f: The path /memories/e/f/a/") || !strings.Contains(got.Content, "has 21 segments") {
		t.Errorf("deep rename: %q", got.Content)
	}
	if got := slices.Sorted(maps.Keys(env.memories(t))); len(got) != 2 || got[0] != "/d"+strings.Repeat("/a", 18)+"/x.md" {
		t.Errorf("memories after the refused rename: %q", got)
	}
	// Text that is not UTF-8 reaches a handler only from Go.
	if _, err := tool.Create(context.Background(), "/memories/bad.md", "\xff"); err == nil || err.Error() != "The text for /memories/bad.md cannot be kept in a memory store: content is not valid UTF-8" || !memorytool.IsModelError(err) {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

// A server that upserts on create (--create-existing upsert) still never
// has an existing memory overwritten by create.
func TestStoreCreateNeverOverwrites(t *testing.T) {
	env := newStoreEnv(t)
	_, secret := sqlitetest.APIKey(t, env.DB, env.WS, "upsert")
	core := memstore.NewCore(env.DB)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, CreateExisting: httpapi.CreateUpsert}))
	t.Cleanup(srv.Close)
	tool := env.tool(t, httpapi.NewClient(srv.URL, secret), memorytool.Options{})
	seed(t, tool, map[string]string{"/memories/a.md": "first"})
	if got := do(t, tool, create("/memories/a.md", "second")); got.Content != "Error: File /memories/a.md already exists" {
		t.Errorf("create over an existing memory: %q", got.Content)
	}
	if got := env.files(t)["/memories/a.md"]; got != "first" {
		t.Errorf("a.md = %q", got)
	}
}

func TestNewStore(t *testing.T) {
	env := newStoreEnv(t)
	core := memstore.NewCore(env.DB)
	for _, tc := range []struct {
		svc   memstore.MemoryService
		store string
		opts  memorytool.Options
		want  string
	}{
		{nil, env.Store, memorytool.Options{}, "no memory service"},
		{core, "", memorytool.Options{}, "no store ID"},
		{core, env.Store, memorytool.Options{ExpireAfter: 1}, "expiry (ExpireAfter) works only on a local directory"},
		{core, env.Store, memorytool.Options{MaxFileBytes: -1}, "must be 0 or more"},
	} {
		if _, err := memorytool.NewStore(tc.svc, env.caller(), tc.store, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewStore(%v, %q, %+v) = %v, want an error with %q", tc.svc != nil, tc.store, tc.opts, err, tc.want)
		}
	}
}
