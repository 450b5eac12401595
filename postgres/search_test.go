package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/postgres"
)

// TestSearchWindow proves that a term's lookup reads only the newest
// memories that have it, however many share it: an older memory that
// would rank first, with the term in its content only, is not ranked at
// all once a window of newer ones have the term.
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
	create("/old.md", "heron heron heron")
	for i := range searchtext.Window {
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
	if slices.Contains(paths, "/old.md") || len(paths) != searchtext.Window {
		t.Fatalf("found %d memories (the oldest: %v), want the %d newest", len(paths), slices.Contains(paths, "/old.md"), searchtext.Window)
	}
}

// TestSearchVectorsInline proves that the search vector of a memory of a
// few hundred bytes stays in its row, where a search's scan of the newest
// memories reads it, and is not moved to the TOAST table.
func TestSearchVectorsInline(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	core := memstore.NewCore(mustOpenAt(t, url, postgres.Options{}))
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "inline"})
	if err != nil {
		t.Fatal(err)
	}
	// Words of random letters, which compress poorly, as varied prose's
	// many distinct words do.
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 600 {
		for range 4 + r.IntN(5) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/prose.md", Content: b.String()}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var row, toast int64
	err = conn.QueryRow(ctx, `SELECT (SELECT pg_column_size(m.*) FROM memories m),
		pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'memories'::regclass`).Scan(&row, &toast)
	if err != nil {
		t.Fatal(err)
	}
	if toast != 0 {
		t.Fatalf("a memory's row of %d bytes put %d bytes in the TOAST table", row, toast)
	}
}
