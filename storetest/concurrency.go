package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/memstore/memstore"
)

func testConcurrency(t *testing.T, open func(*testing.T) backend) {
	t.Run("CreatesAndGuardedUpdates", func(t *testing.T) {
		b, sid := newStore(t, open)
		shared := mustCreateMemory(t, b, wsA, sid, "/shared.md", "initial")
		const n = 8
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			problems  []string
			successes []string // contents written by successful updates
		)
		report := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		for i := range n {
			wg.Go(func() {
				p := fmt.Sprintf("/concurrent/%d.md", i)
				if _, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: p, Content: p}, actorKey); err != nil {
					report("create %s: %v (code %s)", p, err, memstore.ErrorCode(err))
				}
			})
			wg.Go(func() {
				cur, err := b.Memory(t.Context(), wsA, sid, shared.ID)
				if err != nil {
					report("read before update %d: %v", i, err)
					return
				}
				content := fmt.Sprintf("writer %d", i)
				_, err = b.UpdateMemory(t.Context(), wsA, sid, shared.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: cur.ContentSHA256}, actorKey)
				switch memstore.ErrorCode(err) {
				case "":
					mu.Lock()
					successes = append(successes, content)
					mu.Unlock()
				case memstore.EPreconditionFailed:
				default:
					report("update %d: %v (code %s), want success or %s", i, err, memstore.ErrorCode(err), memstore.EPreconditionFailed)
				}
			})
		}
		wg.Wait()
		for _, p := range problems {
			t.Error(p)
		}
		if len(successes) == 0 {
			t.Fatal("no guarded update succeeded")
		}

		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{PathPrefix: "/concurrent/"})
		if len(items) != n {
			t.Errorf("%d memories under /concurrent/, want %d", len(items), n)
		}

		// Each successful update wrote exactly one version, and the memory
		// holds the newest one.
		final := mustMemory(t, b, wsA, sid, shared.ID)
		vs, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{MemoryID: shared.ID, Full: true, Limit: 20})
		if len(vs) != len(successes)+1 {
			t.Errorf("%d versions, want 1 + %d successful updates", len(vs), len(successes))
		}
		if vs[0].ID != final.VersionID || vs[0].Content != final.Content {
			t.Errorf("memory holds version %s (%q); newest version is %s (%q)", final.VersionID, final.Content, vs[0].ID, vs[0].Content)
		}
		if !slices.Contains(successes, final.Content) {
			t.Errorf("final content %q was not written by a successful update (%q)", final.Content, successes)
		}
		var written []string
		for _, v := range vs[:len(vs)-1] {
			written = append(written, v.Content)
		}
		slices.Sort(written)
		slices.Sort(successes)
		if !slices.Equal(written, successes) {
			t.Errorf("versions hold %q, successful updates wrote %q", written, successes)
		}
	})
}

func testMemoryLimit(t *testing.T, openWithLimit func(*testing.T, int) backend) {
	b := openWithLimit(t, 3)
	s := mustCreateStore(t, b, wsA, "limited")
	var ms []*memstore.Memory
	for i := range 3 {
		ms = append(ms, mustCreateMemory(t, b, wsA, s.ID, fmt.Sprintf("/m%d.md", i), "x"))
	}
	_, err := b.CreateMemory(t.Context(), wsA, s.ID, memstore.MemoryCreate{Path: "/m3.md", Content: "x"}, actorKey)
	wantRefusal(t, err, memstore.ErrMemoryLimit(s.ID, 3), "--max-memories-per-store", "4th memory")
	// A path conflict is reported before the cap.
	_, err = b.CreateMemory(t.Context(), wsA, s.ID, memstore.MemoryCreate{Path: "/m0.md", Content: "y"}, actorKey)
	wantPathConflict(t, err, ms[0].ID, "/m0.md", "taken path at the cap")
	// An upsert of an existing path adds no memory; updates and renames are fine.
	if _, err := b.CreateMemory(t.Context(), wsA, s.ID, memstore.MemoryCreate{Path: "/m0.md", Content: "z", Upsert: true}, actorKey); err != nil {
		t.Errorf("upsert of an existing path at the cap: %v", err)
	}
	mustUpdateMemory(t, b, wsA, s.ID, ms[1].ID, memstore.MemoryUpdate{Path: ptr("/renamed.md"), Content: ptr("r")}, actorKey)
	// The cap is per store.
	other := mustCreateStore(t, b, wsA, "other")
	for i := range 3 {
		mustCreateMemory(t, b, wsA, other.ID, fmt.Sprintf("/o%d.md", i), "x")
	}
	// A deletion frees a place.
	mustDeleteMemory(t, b, wsA, s.ID, ms[2].ID, actorKey)
	mustCreateMemory(t, b, wsA, s.ID, "/m3.md", "x")
	_, err = b.CreateMemory(t.Context(), wsA, s.ID, memstore.MemoryCreate{Path: "/m4.md", Content: "x"}, actorKey)
	wantRefusal(t, err, memstore.ErrMemoryLimit(s.ID, 3), "--max-memories-per-store", "4th memory after delete and create")
	items, _ := allItems(t, b, wsA, s.ID, memstore.MemoryFilter{})
	if len(items) != 3 {
		t.Errorf("%d memories in the limited store, want 3", len(items))
	}
}

// testMemoryCount holds the count of a store's memories that the limit
// reads, and the store's count and content size that it reports, to
// exact through every kind of write, failed ones and concurrent ones
// included: at each step, the store takes exactly as many new memories
// as the limit leaves room for.
func testMemoryCount(t *testing.T, openWithLimit func(*testing.T, int) backend) {
	const limit = 6
	b := openWithLimit(t, limit)
	ctx := t.Context()
	s := mustCreateStore(t, b, wsA, "counted")
	if s.MemoryCount != 0 || s.ContentSize != 0 {
		t.Errorf("a new store reports %d memories of %d bytes, want none", s.MemoryCount, s.ContentSize)
	}
	wantRoom(t, b, s.ID, limit, 0, "empty store")
	wantTotals(t, b, s.ID, 0, 0, "empty store")

	a := mustCreateMemory(t, b, wsA, s.ID, "/a.md", "a")
	bc := mustCreateMemory(t, b, wsA, s.ID, "/b/c.md", "c")
	d := mustCreateMemory(t, b, wsA, s.ID, "/d.md", "d")
	if _, err := b.CreateMemory(ctx, wsA, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "a2", Upsert: true}, actorKey); err != nil {
		t.Fatalf("upsert of a taken path: %v", err)
	}
	e, err := b.CreateMemory(ctx, wsA, s.ID, memstore.MemoryCreate{Path: "/e.md", Content: "e", Upsert: true}, actorKey)
	if err != nil {
		t.Fatalf("upsert of a free path: %v", err)
	}
	wantRoom(t, b, s.ID, limit, 4, "after 3 creates and 2 upserts, one of a free path")
	wantTotals(t, b, s.ID, 4, len("a2c")+len("d")+len("e"), "after 3 creates and 2 upserts, one of a free path")

	// Creates that fail add nothing.
	for _, mc := range []memstore.MemoryCreate{
		{Path: "/a.md", Content: "x"},
		{Path: "/b", Content: "x"},
		{Path: "/b/c.md/x.md", Content: "x"},
		{Path: "/e.md", Content: "x", IfNotExists: true},
		{Path: "/e.md", Content: "x", IfNotExists: true, Upsert: true},
		{Path: "no-slash.md", Content: "x"},
	} {
		if _, err := b.CreateMemory(ctx, wsA, s.ID, mc, actorKey); err == nil {
			t.Fatalf("create %+v succeeded, want an error", mc)
		}
	}
	// Renames and edits neither add nor remove one, failed or not; an
	// edit moves the size by the change of the memory's, a rename not at
	// all.
	mustUpdateMemory(t, b, wsA, s.ID, d.ID, memstore.MemoryUpdate{Path: ptr("/f.md")}, actorKey)
	mustUpdateMemory(t, b, wsA, s.ID, a.ID, memstore.MemoryUpdate{Content: ptr("a3")}, actorKey)
	mustUpdateMemory(t, b, wsA, s.ID, bc.ID, memstore.MemoryUpdate{Content: ptr("a longer c")}, actorKey)
	mustUpdateMemory(t, b, wsA, s.ID, e.ID, memstore.MemoryUpdate{Path: ptr("/g.md"), Content: ptr("")}, actorKey)
	mustUpdateMemory(t, b, wsA, s.ID, e.ID, memstore.MemoryUpdate{Path: ptr("/e.md"), Content: ptr("eee")}, actorKey)
	_, err = b.UpdateMemory(ctx, wsA, s.ID, d.ID, memstore.MemoryUpdate{Path: ptr("/e.md"), Content: ptr("a much longer d")}, actorKey)
	wantCode(t, err, memstore.EPathConflict, "rename onto a taken path")
	mustUpdateMemory(t, b, wsA, s.ID, d.ID, memstore.MemoryUpdate{Path: ptr("/e.md"), RenameIfFree: true}, actorKey)
	wantRoom(t, b, s.ID, limit, 4, "after failed creates, renames and edits")
	wantTotals(t, b, s.ID, 4, len("a3")+len("a longer c")+len("d")+len("eee"), "after failed creates, renames and edits")

	// A deletion frees one place; deletes that fail free none.
	mustDeleteMemory(t, b, wsA, s.ID, bc.ID, actorKey)
	wantCode(t, b.DeleteMemory(ctx, wsA, s.ID, bc.ID, "", actorKey), memstore.ENotFound, "second delete")
	wantCode(t, b.DeleteMemory(ctx, wsA, s.ID, e.ID, sha("not e"), actorKey), memstore.EPreconditionFailed, "delete with a stale hash")
	wantRoom(t, b, s.ID, limit, 3, "after a delete and two failed ones")
	wantTotals(t, b, s.ID, 3, len("a3")+len("d")+len("eee"), "after a delete and two failed ones")

	// Writers at once: the live memories are deleted while twice the limit
	// of creates race for the places; whatever wins, the count is the
	// number of memories that the store lists.
	live := []string{a.ID, d.ID, e.ID}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	for _, id := range live {
		wg.Go(func() {
			if err := b.DeleteMemory(ctx, wsA, s.ID, id, "", actorKey); err != nil {
				report("delete %s: %v", id, err)
			}
		})
	}
	for i := range 2 * limit {
		wg.Go(func() {
			p := fmt.Sprintf("/race/%d.md", i)
			_, err := b.CreateMemory(ctx, wsA, s.ID, memstore.MemoryCreate{Path: p, Content: p}, actorKey)
			if c := memstore.ErrorCode(err); err != nil && c != memstore.EInvalid {
				report("create %s: %v (code %s), want success or %s", p, err, c, memstore.EInvalid)
			}
		})
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	items, _ := allItems(t, b, wsA, s.ID, memstore.MemoryFilter{PathPrefix: "/race/"})
	if len(items) < limit-len(live) {
		t.Errorf("%d of the racing creates succeeded, want at least %d", len(items), limit-len(live))
	}
	wantRoom(t, b, s.ID, limit, len(items), "after concurrent deletes and creates")
	size := 0
	for _, it := range items {
		size += int(it.Memory.ContentSize)
	}
	wantTotals(t, b, s.ID, len(items), size, "after concurrent deletes and creates")
}

// wantTotals checks the count and content size that store id reports,
// alone and in the list of stores.
func wantTotals(t *testing.T, b backend, id string, count, size int, what string) {
	t.Helper()
	if _, omitted := b.(*asKeys).stores.(StoreTotalsOmitted); omitted {
		return
	}
	got := []memstore.Store{*mustStore(t, b, wsA, id)}
	listed, _ := allStores(t, b, wsA, memstore.StoreFilter{IncludeArchived: true})
	for _, s := range listed {
		if s.ID == id {
			got = append(got, s)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%s: the list of stores holds %d entries of store %s, want 1", what, len(got)-1, id)
	}
	for i, s := range got {
		if s.MemoryCount != int64(count) || s.ContentSize != int64(size) {
			t.Errorf("%s: store (%s) reports %d memories of %d bytes, want %d of %d", what, []string{"alone", "listed"}[i], s.MemoryCount, s.ContentSize, count, size)
		}
	}
}

// wantRoom checks that store id lists live memories and takes exactly
// limit - live more before its limit refuses one, then deletes those it
// created.
func wantRoom(t *testing.T, b backend, id string, limit, live int, what string) {
	t.Helper()
	if items, _ := allItems(t, b, wsA, id, memstore.MemoryFilter{}); len(items) != live {
		t.Errorf("%s: the store lists %d memories, want %d", what, len(items), live)
	}
	var made []string
	for i := 0; len(made) <= limit-live; i++ {
		p := fmt.Sprintf("/room/%d.md", i)
		m, err := b.CreateMemory(t.Context(), wsA, id, memstore.MemoryCreate{Path: p, Content: p}, actorKey)
		if err != nil {
			wantCode(t, err, memstore.EInvalid, what+": the create beyond the limit")
			break
		}
		made = append(made, m.ID)
	}
	if len(made) != limit-live {
		t.Errorf("%s: the store took %d more memories, want %d", what, len(made), limit-live)
	}
	for _, m := range made {
		mustDeleteMemory(t, b, wsA, id, m, actorKey)
	}
}
