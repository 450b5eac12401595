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
	wantCode(t, err, memstore.EInvalid, "4th memory")
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
	wantCode(t, err, memstore.EInvalid, "4th memory after delete and create")
	items, _ := allItems(t, b, wsA, s.ID, memstore.MemoryFilter{})
	if len(items) != 3 {
		t.Errorf("%d memories in the limited store, want 3", len(items))
	}
}
