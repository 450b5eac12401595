package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// runExport checks the export of a store (ExportService): the store and
// every live memory, in path order, with or without content, as of one
// moment whatever is written meanwhile, with no more held at a time than
// a memory, and to whoever may list the store's memories alone. open
// returns fresh, empty services for each subtest; testExportFlat runs
// on the storage alone.
func runExport(t *testing.T, open func(t *testing.T) Services) {
	t.Run("Views", func(t *testing.T) { testExportViews(t, open(t)) })
	t.Run("LargestMemory", func(t *testing.T) { testExportLargest(t, open(t)) })
	t.Run("Snapshot", func(t *testing.T) { testExportSnapshot(t, open(t)) })
	t.Run("Access", func(t *testing.T) { testExportAccess(t, newIsolationEnv(t, open)) })
}

// exportTaken keeps what an export hands it; after, when set, runs after
// each memory, with how many were taken.
type exportTaken struct {
	stores []*memstore.Store
	mems   []*memstore.Memory
	after  func(n int) error
}

func (x *exportTaken) Store(s *memstore.Store) error {
	x.stores = append(x.stores, s)
	return nil
}

func (x *exportTaken) Memory(m *memstore.Memory) error {
	if len(x.stores) != 1 {
		return fmt.Errorf("memory %s handed over before the store", m.ID)
	}
	x.mems = append(x.mems, m)
	if x.after != nil {
		return x.after(len(x.mems))
	}
	return nil
}

// export exports store storeID as c, failing the test on an error.
func export(t *testing.T, b Services, c *memstore.Caller, storeID string, content bool) *exportTaken {
	t.Helper()
	x := &exportTaken{}
	if err := b.ExportMemories(t.Context(), c, storeID, content, x); err != nil {
		t.Fatalf("ExportMemories(%s, content %v): %v", storeID, content, err)
	}
	return x
}

// wantExport checks that x is the store storeID and exactly want, in
// path order, with content when content is set.
func wantExport(t *testing.T, x *exportTaken, storeID string, want []*memstore.Memory, content bool, what string) {
	t.Helper()
	if len(x.stores) != 1 || x.stores[0].ID != storeID {
		t.Errorf("%s: stores %+v, want store %s once", what, x.stores, storeID)
	}
	if len(x.mems) != len(want) {
		t.Fatalf("%s: %d memories, want %d", what, len(x.mems), len(want))
	}
	for i, m := range x.mems {
		w := want[i]
		wantContent := ""
		if content {
			wantContent = w.Content
		}
		if m.ID != w.ID || m.Path != w.Path || m.ContentSHA256 != w.ContentSHA256 || m.ContentSize != w.ContentSize || m.Content != wantContent {
			t.Errorf("%s: memory %d is (%s, %s, %s, %d bytes, %d of content), want (%s, %s, %s, %d bytes, %d of content)", what, i,
				m.ID, m.Path, m.ContentSHA256, m.ContentSize, len(m.Content), w.ID, w.Path, w.ContentSHA256, w.ContentSize, len(wantContent))
		}
		if content && !m.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("%s: memory %s updated at %v, want %v", what, m.ID, m.UpdatedAt, w.UpdatedAt)
		}
	}
}

// testExportViews: both views hand over the store, then every live
// memory in path order, deleted ones left out; an empty store and an
// archived one export too.
func testExportViews(t *testing.T, b Services) {
	ctx := t.Context()
	admin := keyCaller(wsA, actorKey)
	st, err := b.CreateStore(ctx, admin, memstore.StoreCreate{Name: "exported"})
	if err != nil {
		t.Fatal(err)
	}
	x := export(t, b, admin, st.ID, true)
	wantExport(t, x, st.ID, nil, true, "empty store")
	if x.stores[0].Name != "exported" {
		t.Errorf("the store is named %q, want %q", x.stores[0].Name, "exported")
	}

	var live []*memstore.Memory
	for _, mc := range []memstore.MemoryCreate{
		{Path: "/z.md", Content: "last"},
		{Path: "/notes/b.md", Content: "quotes \" and \\ and\nnewlines\tand ünïcödé"},
		{Path: "/notes/a.md", Content: ""},
		{Path: "/A.md", Content: "upper case sorts first"},
		{Path: "/gone.md", Content: "deleted before the export"},
	} {
		m, err := b.CreateMemory(ctx, admin, st.ID, mc)
		if err != nil {
			t.Fatal(err)
		}
		if mc.Path == "/gone.md" {
			if err := b.DeleteMemory(ctx, admin, st.ID, m.ID, ""); err != nil {
				t.Fatal(err)
			}
			continue
		}
		live = append(live, m)
	}
	byPath := func(paths ...string) []*memstore.Memory {
		var out []*memstore.Memory
		for _, p := range paths {
			for _, m := range live {
				if m.Path == p {
					out = append(out, m)
				}
			}
		}
		return out
	}
	want := byPath("/A.md", "/notes/a.md", "/notes/b.md", "/z.md")
	wantExport(t, export(t, b, admin, st.ID, true), st.ID, want, true, "full view")
	wantExport(t, export(t, b, admin, st.ID, false), st.ID, want, false, "basic view")

	if _, err := b.ArchiveStore(ctx, admin, st.ID); err != nil {
		t.Fatal(err)
	}
	x = export(t, b, admin, st.ID, true)
	wantExport(t, x, st.ID, want, true, "archived store")
	if x.stores[0].ArchivedAt == nil {
		t.Errorf("the archived store's export does not say it is archived")
	}
}

// testExportLargest: a memory of the largest content, with every kind
// of byte JSON escapes, comes whole.
func testExportLargest(t *testing.T, b Services) {
	ctx := t.Context()
	admin := keyCaller(wsA, actorKey)
	st, err := b.CreateStore(ctx, admin, memstore.StoreCreate{Name: "large"})
	if err != nil {
		t.Fatal(err)
	}
	unit := "line \"quoted\" \\ <tag> & é 日本\n"
	content := strings.Repeat(unit, memstore.MaxContentBytes/len(unit))
	content += strings.Repeat("x", memstore.MaxContentBytes-len(content))
	big, err := b.CreateMemory(ctx, admin, st.ID, memstore.MemoryCreate{Path: "/big.md", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	small, err := b.CreateMemory(ctx, admin, st.ID, memstore.MemoryCreate{Path: "/small.md", Content: "after the big one"})
	if err != nil {
		t.Fatal(err)
	}
	x := export(t, b, admin, st.ID, true)
	wantExport(t, x, st.ID, []*memstore.Memory{big, small}, true, "a memory of 100 KiB")
	if len(x.mems) == 2 && (x.mems[0].Content != content || x.mems[0].ContentSize != memstore.MaxContentBytes) {
		t.Errorf("the 100 KiB memory came as %d bytes (size %d), want its %d bytes exactly", len(x.mems[0].Content), x.mems[0].ContentSize, len(content))
	}
	x = export(t, b, admin, st.ID, false)
	wantExport(t, x, st.ID, []*memstore.Memory{big, small}, false, "a memory of 100 KiB, basic view")
}

// testExportSnapshot: what is written while an export goes on (a
// memory created, one changed, one renamed, one deleted, all after the
// first memory the export handed over) is not in it: the export is the
// store as it was when it began.
func testExportSnapshot(t *testing.T, b Services) {
	ctx := t.Context()
	admin := keyCaller(wsA, actorKey)
	st, err := b.CreateStore(ctx, admin, memstore.StoreCreate{Name: "snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	// Enough that a server streaming it cannot have sent it all before
	// its client takes the first memory.
	const n = 600
	filler := strings.Repeat("s", 8<<10)
	before := make([]*memstore.Memory, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				m, err := b.CreateMemory(ctx, admin, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%04d.md", i), Content: fmt.Sprintf("%d %s", i, filler)})
				if err != nil {
					errs <- err
					return
				}
				before[i] = m
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	changed, moved := "changed during the export", "/m/9999-moved.md"
	x := &exportTaken{after: func(taken int) error {
		if taken != 1 {
			return nil
		}
		// The writes succeed while the export holds its snapshot.
		if _, err := b.CreateMemory(ctx, admin, st.ID, memstore.MemoryCreate{Path: "/m/9999-new.md", Content: "new"}); err != nil {
			return err
		}
		if _, err := b.UpdateMemory(ctx, admin, st.ID, before[n-1].ID, memstore.MemoryUpdate{Content: &changed}); err != nil {
			return err
		}
		if _, err := b.UpdateMemory(ctx, admin, st.ID, before[n-2].ID, memstore.MemoryUpdate{Path: &moved}); err != nil {
			return err
		}
		return b.DeleteMemory(ctx, admin, st.ID, before[n-3].ID, "")
	}}
	if err := b.ExportMemories(ctx, admin, st.ID, true, x); err != nil {
		t.Fatalf("ExportMemories with writes meanwhile: %v", err)
	}
	wantExport(t, x, st.ID, before, true, "export with writes meanwhile")

	// The writes happened: the next export has them.
	after := export(t, b, admin, st.ID, true)
	got := map[string]string{}
	for _, m := range after.mems {
		got[m.Path] = m.Content
	}
	_, gone := got[before[n-3].Path]
	if len(after.mems) != n || got["/m/9999-new.md"] != "new" || got[before[n-1].Path] != changed || got[moved] != before[n-2].Content || gone {
		t.Errorf("the next export (%d memories) has not the writes made during the first", len(after.mems))
	}
}

// testExportAccess: an export is open to whoever may list the store's
// memories: an API key of its workspace, a session token of a store
// attached read-write or read-only; a store of another workspace is not
// found, one not attached to the session is refused, and neither hands
// anything over.
func testExportAccess(t *testing.T, e *isolationEnv) {
	for _, tc := range []struct {
		name    string
		c       *memstore.Caller
		storeID string
		code    string
	}{
		{"API key", e.admin, e.rw, ""},
		{"session token, read-write", e.session, e.rw, ""},
		{"session token, read-only", e.session, e.ro, ""},
		{"API key of another workspace", e.adminB, e.rw, memstore.ENotFound},
		{"API key, unknown store", e.admin, "memstore_unknownunknownunknown00", memstore.ENotFound},
		{"session token, unattached store", e.session, e.other, memstore.EPermission},
		{"session token, store of another workspace", e.session, e.elsewhere, memstore.EPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &exportTaken{}
			err := e.b.ExportMemories(t.Context(), tc.c, tc.storeID, true, x)
			if tc.code != "" {
				wantCode(t, err, tc.code, tc.name)
				if len(x.stores)+len(x.mems) != 0 {
					t.Errorf("%s: refused, yet %d stores and %d memories handed over", tc.name, len(x.stores), len(x.mems))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			wantExport(t, x, tc.storeID, []*memstore.Memory{e.notes[tc.storeID]}, true, tc.name)
		})
	}
}

// testExportFlat: the export of a store of 20,000 memories holds a
// little at a time (ExportHeapGrowth), in path order, each memory whole.
func testExportFlat(t *testing.T, db memstore.Database) {
	_, storeID := FillLargeStore(t, db)
	ExportHeapGrowth(t, memstore.NewCore(db), keyCaller(wsA, actorKey), storeID)
}

// The store of FillLargeStore.
const (
	LargeStoreMemories = 20_000
	largeStoreContent  = 1500 // bytes each: 30 MB in all
	// largeStoreGrowth bounds how much the heap may grow during its
	// export: a fifth of the store's content.
	largeStoreGrowth = LargeStoreMemories * largeStoreContent / 5
)

// FillLargeStore fills db, which must be empty, with a store of
// workspace A holding LargeStoreMemories memories of 1,500 bytes each,
// restored in one transaction (memstore.Restorer: creating them one by
// one takes minutes) without their versions, which an export does not
// read, and returns the IDs of its workspace and of the store.
func FillLargeStore(t *testing.T, db memstore.Restorer) (workspaceID, storeID string) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	storeID = "memstore_exportlarge"
	err := db.Restore(t.Context(), func(sink memstore.RecordSink) error {
		if err := sink.Begin(memstore.KindWorkspaces, 1); err != nil {
			return err
		}
		if err := sink.Workspace(&memstore.Workspace{ID: wsA, Name: "export", CreatedAt: now}); err != nil {
			return err
		}
		if err := sink.Begin(memstore.KindStores, 1); err != nil {
			return err
		}
		st := &memstore.Store{ID: storeID, WorkspaceID: wsA, Name: "large store", Metadata: map[string]string{}, CreatedAt: now, UpdatedAt: now}
		if err := sink.Store(st); err != nil {
			return err
		}
		if err := sink.Begin(memstore.KindMemories, LargeStoreMemories); err != nil {
			return err
		}
		for i := range LargeStoreMemories {
			head := fmt.Sprintf("memory %d ", i)
			content := head + strings.Repeat("f", largeStoreContent-len(head))
			m := &memstore.Memory{
				ID: fmt.Sprintf("mem_large%06d", i), StoreID: storeID, Path: fmt.Sprintf("/fill/%06d.md", i),
				Content: content, ContentSHA256: sha(content), ContentSize: int64(len(content)),
				VersionID: fmt.Sprintf("memver_large%06d", i), CreatedAt: now, UpdatedAt: now,
			}
			if err := sink.Memory(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("restore a store of %d memories: %v", LargeStoreMemories, err)
	}
	return wsA, storeID
}

// ExportHeapGrowth exports the store of FillLargeStore as c and checks
// that it holds a little at a time: the live heap, measured after a
// collection every thousand memories, never grows by more than a fifth
// of the store's content, which an export holding the whole store would
// pass. It checks too that the memories come in path order, each with
// the content of its hash.
func ExportHeapGrowth(t *testing.T, es memstore.ExportService, c *memstore.Caller, storeID string) {
	t.Helper()
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := heap()
	var peak int64
	n, last := 0, ""
	sink := memstore.ExportFunc(func(m *memstore.Memory) error {
		n++
		sum := sha256.Sum256([]byte(m.Content))
		if hex.EncodeToString(sum[:]) != m.ContentSHA256 || len(m.Content) != largeStoreContent {
			return fmt.Errorf("memory %s came with %d bytes of content not of its hash", m.Path, len(m.Content))
		}
		if m.Path <= last {
			return fmt.Errorf("memory %s came after %s", m.Path, last)
		}
		last = m.Path
		if n%1000 == 0 {
			peak = max(peak, heap()-base)
		}
		return nil
	})
	if err := es.ExportMemories(t.Context(), c, storeID, true, sink); err != nil {
		t.Fatal(err)
	}
	if n != LargeStoreMemories {
		t.Fatalf("the export handed over %d memories, want %d", n, LargeStoreMemories)
	}
	t.Logf("the heap grew by at most %d KiB during the export of %d KiB", peak>>10, LargeStoreMemories*largeStoreContent>>10)
	if peak > largeStoreGrowth {
		t.Errorf("the heap grew by %d bytes during the export, more than %d: the export holds more than a memory at a time", peak, largeStoreGrowth)
	}
}
