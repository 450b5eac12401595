package postgres_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/postgres"
)

// TestSearchWindow proves that a term's lookup reads only the newest
// memories that have it, however many share it: an older memory that
// would rank first is not ranked at all once SearchCandidates newer ones
// have the term.
func TestSearchWindow(t *testing.T) {
	ctx := t.Context()
	core := memstore.NewCore(mustOpen(t, postgres.Options{}))
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "window"})
	if err != nil {
		t.Fatal(err)
	}
	create := func(path, content string) {
		t.Helper()
		if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: path, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	create("/heron/old.md", "heron heron heron")
	for i := range postgres.SearchCandidates {
		create(fmt.Sprintf("/n/%03d.md", i), "a heron flew by")
	}
	var paths []string
	for page := ""; ; {
		p, err := core.SearchMemories(ctx, alice, []string{s.ID}, memstore.SearchQuery{Text: "heron", Limit: memstore.MaxSearchLimit, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			paths = append(paths, r.Memory.Path)
		}
		if page = p.Next; page == "" {
			break
		}
	}
	if slices.Contains(paths, "/heron/old.md") || len(paths) != postgres.SearchCandidates {
		t.Fatalf("found %d memories (the oldest: %v), want the %d newest", len(paths), slices.Contains(paths, "/heron/old.md"), postgres.SearchCandidates)
	}
}
