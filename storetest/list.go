package storetest

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/memstore/memstore"
)

func testListMemories(t *testing.T, open func(*testing.T) backend) {
	t.Run("PathByteOrder", func(t *testing.T) {
		b, sid := newStore(t, open)
		// In byte order '-' < '.' < '/' < '0' < 'A' < '_' < 'a' < 0xC3 (é).
		paths := []string{"/é.md", "/apple/x.md", "/Zebra.md", "/apple.md", "/apple-pie", "/apple0", "/_under", "/a", "/B/b.md"}
		for _, p := range paths {
			mustCreateMemory(t, b, wsA, sid, p, "content of "+p)
		}
		want := slices.Clone(paths)
		sort.Strings(want)
		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{})
		var got []string
		for _, it := range items {
			if it.Memory == nil {
				t.Fatalf("depth 0 list has a prefix item %q", it.Prefix)
			}
			got = append(got, it.Memory.Path)
			// Basic view: no content, but hash and size.
			checkMemory(t, it.Memory, it.Memory.Path, "content of "+it.Memory.Path, false, "basic list item")
			if it.Memory.StoreID != sid {
				t.Errorf("list item StoreID %q, want %q", it.Memory.StoreID, sid)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("paths in order\n%q\nwant byte order\n%q", got, want)
		}
	})

	t.Run("Paging", func(t *testing.T) {
		b, sid := newStore(t, open)
		var want []string
		for i := range 45 {
			p := fmt.Sprintf("/dir%d/m%02d.md", i%3, i)
			mustCreateMemory(t, b, wsA, sid, p, p)
			want = append(want, p)
		}
		sort.Strings(want)
		items, sizes := allItems(t, b, wsA, sid, memstore.MemoryFilter{Limit: 20})
		if !slices.Equal(sizes, []int{20, 20, 5}) {
			t.Errorf("page sizes %v, want [20 20 5]", sizes)
		}
		if got := memoryPaths(items); !slices.Equal(got, want) {
			t.Errorf("paged list\n%q\nwant\n%q", got, want)
		}
		for _, limit := range []int{1, 7, 15, 44, 45, 100} {
			items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{Limit: limit})
			if got := memoryPaths(items); !slices.Equal(got, want) {
				t.Errorf("Limit %d: paged list has %d items (each exactly once and in order expected)", limit, len(got))
			}
		}
		// Limit 0 is the default, 20.
		p, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 20 || p.Next == "" {
			t.Errorf("default page: %d items, Next %q; want 20 and a cursor", len(p.Items), p.Next)
		}
		// A memory deleted between pages is not listed; the rest are, once.
		p, err = b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		del := want[15]
		for _, it := range mustAllMemories(t, b, sid) {
			if it.Path == del {
				mustDeleteMemory(t, b, wsA, sid, it.ID, actorKey)
			}
		}
		rest, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{Limit: 10, Page: p.Next})
		wantRest := slices.Delete(slices.Clone(want[10:]), 5, 6)
		if got := memoryPaths(rest); !slices.Equal(got, wantRest) {
			t.Errorf("after a delete between pages\n%q\nwant\n%q", got, wantRest)
		}
	})

	t.Run("PathPrefix", func(t *testing.T) {
		b, sid := newStore(t, open)
		for _, p := range []string{"/notes/a.md", "/notes/sub/b.md", "/notes-archive/a.md", "/notes_backup/a.md", "/notes.md", "/notesfile", "/other.md"} {
			mustCreateMemory(t, b, wsA, sid, p, p)
		}
		all := []string{"/notes-archive/a.md", "/notes.md", "/notes/a.md", "/notes/sub/b.md", "/notes_backup/a.md", "/notesfile", "/other.md"}
		for _, c := range []struct {
			prefix string
			want   []string
		}{
			{"", all},
			{"/", all},
			{"/notes/", []string{"/notes/a.md", "/notes/sub/b.md"}},
			{"/notes/sub/", []string{"/notes/sub/b.md"}},
			{"/notes-archive/", []string{"/notes-archive/a.md"}},
			{"/nothing/", nil},
			{"/notes/a.md/", nil},
			// Without a final "/", a plain string prefix (legacy).
			{"/notes", []string{"/notes-archive/a.md", "/notes.md", "/notes/a.md", "/notes/sub/b.md", "/notes_backup/a.md", "/notesfile"}},
			{"/notes/a", []string{"/notes/a.md"}},
			{"/notes.md", []string{"/notes.md"}},
			{"/x", nil},
		} {
			items, sizes := allItems(t, b, wsA, sid, memstore.MemoryFilter{PathPrefix: c.prefix})
			if got := memoryPaths(items); !slices.Equal(got, c.want) {
				t.Errorf("prefix %q: %q, want %q", c.prefix, got, c.want)
			}
			if c.want == nil && !slices.Equal(sizes, []int{0}) {
				t.Errorf("prefix %q: page sizes %v, want one empty page", c.prefix, sizes)
			}
		}
		_, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{PathPrefix: "notes/"})
		wantCode(t, err, memstore.EInvalid, "prefix without a leading /")
	})

	t.Run("Depth", func(t *testing.T) {
		b, sid := newStore(t, open)
		for _, p := range []string{"/top.md", "/a/1.md", "/a/2.md", "/a/deep/x.md", "/a/deep/er/y.md", "/b/y.md", "/c.md", "/z/z/z.md", "/a-b.md", "/a0.md"} {
			mustCreateMemory(t, b, wsA, sid, p, p)
		}
		for _, c := range []struct {
			name   string
			prefix string
			depth  int
			want   []string
		}{
			// A prefix item sorts by its path with the trailing "/":
			// "/a-b.md" < "/a/" < "/a0.md".
			{"Root1", "/", 1, []string{"M /a-b.md", "P /a/", "M /a0.md", "P /b/", "M /c.md", "M /top.md", "P /z/"}},
			{"EmptyPrefix1", "", 1, []string{"M /a-b.md", "P /a/", "M /a0.md", "P /b/", "M /c.md", "M /top.md", "P /z/"}},
			{"Sub1", "/a/", 1, []string{"M /a/1.md", "M /a/2.md", "P /a/deep/"}},
			{"Deeper1", "/a/deep/", 1, []string{"P /a/deep/er/", "M /a/deep/x.md"}},
			{"Root2", "/", 2, []string{"M /a-b.md", "M /a/1.md", "M /a/2.md", "P /a/deep/", "M /a0.md", "M /b/y.md", "M /c.md", "M /top.md", "P /z/z/"}},
			{"Recursive0", "/a/", 0, []string{"M /a/1.md", "M /a/2.md", "M /a/deep/er/y.md", "M /a/deep/x.md"}},
			{"Empty1", "/nothing/", 1, nil},
			// A raw prefix counts depth from its last "/".
			{"Raw1", "/a", 1, []string{"M /a-b.md", "P /a/", "M /a0.md"}},
			{"RawSub1", "/a/d", 1, []string{"P /a/deep/"}},
			{"RawSub2", "/a/d", 2, []string{"P /a/deep/er/", "M /a/deep/x.md"}},
		} {
			items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{PathPrefix: c.prefix, Depth: c.depth})
			if got := itemKeys(items); !slices.Equal(got, c.want) {
				t.Errorf("%s (prefix %q, depth %d):\n%q\nwant\n%q", c.name, c.prefix, c.depth, got, c.want)
			}
		}
		_, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Depth: -1})
		wantCode(t, err, memstore.EInvalid, "negative depth")
	})

	t.Run("DepthPaging", func(t *testing.T) {
		b, sid := newStore(t, open)
		var want []string
		for i := range 12 {
			// A memory and a folder per i: "/k00.md" < "/k00/" ('.' < '/').
			mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/k%02d.md", i), "m")
			for j := range 3 {
				mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/k%02d/f%d/x.md", i, j), "f")
			}
			want = append(want, fmt.Sprintf("M /k%02d.md", i), fmt.Sprintf("P /k%02d/", i))
		}
		for _, limit := range []int{1, 2, 5, 7, 24, 100} {
			items, sizes := allItems(t, b, wsA, sid, memstore.MemoryFilter{PathPrefix: "/", Depth: 1, Limit: limit})
			if got := itemKeys(items); !slices.Equal(got, want) {
				t.Errorf("Limit %d:\n%q\nwant each item exactly once:\n%q", limit, got, want)
			}
			for i, n := range sizes[:len(sizes)-1] {
				if n != limit {
					t.Errorf("Limit %d: page %d has %d items (prefixes count toward the limit)", limit, i+1, n)
				}
			}
		}
	})

	t.Run("Full", func(t *testing.T) {
		b, sid := newStore(t, open)
		for i := range 25 {
			p := fmt.Sprintf("/f%02d.md", i)
			mustCreateMemory(t, b, wsA, sid, p, "full content of "+p+"\r\n")
		}
		p, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Full: true, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 20 || p.Next == "" {
			t.Errorf("Full with Limit 50: %d items, Next %q; want 20 and a cursor", len(p.Items), p.Next)
		}
		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{Full: true, Limit: 50})
		if len(items) != 25 {
			t.Errorf("Full list has %d items, want 25", len(items))
		}
		for _, it := range items {
			checkMemory(t, it.Memory, it.Memory.Path, "full content of "+it.Memory.Path+"\r\n", true, "full list item")
		}
		p, err = b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 20 {
			t.Errorf("Full with the default limit: %d items, want 20", len(p.Items))
		}
		_, err = b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Full: true, Limit: 101})
		wantCode(t, err, memstore.EInvalid, "Full with Limit 101")
	})

	t.Run("Invalid", func(t *testing.T) {
		b, sid := newStore(t, open)
		for i := range 3 {
			mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/i%d.md", i), "x")
		}
		for _, c := range []struct {
			name string
			f    memstore.MemoryFilter
		}{
			{"Limit101", memstore.MemoryFilter{Limit: 101}},
			{"LimitNegative", memstore.MemoryFilter{Limit: -1}},
			{"DepthNegative", memstore.MemoryFilter{Depth: -1}},
			{"GarbageCursor", memstore.MemoryFilter{Page: "garbage"}},
			{"GarbledPageCursor", memstore.MemoryFilter{Page: "page_!!!not-base64!!!"}},
		} {
			_, err := b.Memories(t.Context(), wsA, sid, c.f)
			wantCode(t, err, memstore.EInvalid, c.name)
		}
		p, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Limit: 100})
		if err != nil || len(p.Items) != 3 || p.Next != "" {
			t.Errorf("Limit 100: %d items, Next %q, err %v; want 3, \"\", nil", len(p.Items), p.Next, err)
		}
		_, err = b.Memories(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.MemoryFilter{})
		wantError(t, err, memstore.ErrStoreNotFound("memstore_01jzzzzzzzzzzzzzzzzzzzzzzz"), "unknown store")
	})

	t.Run("CursorFromAnotherList", func(t *testing.T) {
		// A cursor of another list endpoint is refused (docs/api.md,
		// Pagination).
		b, sid := newStore(t, open)
		for i := range 3 {
			mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/c%d.md", i), "x")
		}
		vp, err := b.Versions(t.Context(), wsA, sid, memstore.VersionFilter{Limit: 1})
		if err != nil || vp.Next == "" {
			t.Fatalf("Versions(Limit 1): Next %q, %v", vp.Next, err)
		}
		_, err = b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Limit: 1, Page: vp.Next})
		wantCode(t, err, memstore.EInvalid, "version cursor on the memory list")
		mp, err := b.Memories(t.Context(), wsA, sid, memstore.MemoryFilter{Limit: 1})
		if err != nil || mp.Next == "" {
			t.Fatalf("Memories(Limit 1): Next %q, %v", mp.Next, err)
		}
		_, err = b.Versions(t.Context(), wsA, sid, memstore.VersionFilter{Limit: 1, Page: mp.Next})
		wantCode(t, err, memstore.EInvalid, "memory cursor on the version list")
	})
}

func memoryPaths(items []memstore.ListItem) []string {
	var paths []string
	for _, it := range items {
		if it.Memory == nil {
			paths = append(paths, "prefix "+it.Prefix)
			continue
		}
		paths = append(paths, it.Memory.Path)
	}
	return paths
}

// mustAllMemories lists every memory of a store in workspace A.
func mustAllMemories(t *testing.T, b backend, storeID string) []*memstore.Memory {
	t.Helper()
	items, _ := allItems(t, b, wsA, storeID, memstore.MemoryFilter{Limit: 100})
	var ms []*memstore.Memory
	for _, it := range items {
		if it.Memory != nil {
			ms = append(ms, it.Memory)
		}
	}
	return ms
}

// ListNames pages through a memory list from f's page on, list answering
// each page, and returns its items as strings: a memory's path, or a
// prefix ("/b/"), as ListAll checks them.
func ListNames(tb testing.TB, f memstore.MemoryFilter, list func(memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error)) []string {
	tb.Helper()
	var out []string
	for _, it := range ListAll(tb, f, list) {
		if it.Memory != nil {
			out = append(out, it.Memory.Path)
		} else {
			out = append(out, it.Prefix)
		}
	}
	return out
}

// ListAll pages through a memory list from f's page on, list answering
// each page, and returns its items. It fails the test on an empty page
// that names a next one, and on pages without end.
func ListAll(tb testing.TB, f memstore.MemoryFilter, list func(memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error)) []memstore.ListItem {
	tb.Helper()
	var out []memstore.ListItem
	for range 1000 {
		p, err := list(f)
		if err != nil {
			tb.Fatal(err)
		}
		if p.Next != "" && len(p.Items) == 0 {
			tb.Fatal("empty page with a next cursor")
		}
		out = append(out, p.Items...)
		if p.Next == "" {
			return out
		}
		f.Page = p.Next
	}
	tb.Fatal("too many pages")
	return nil
}
