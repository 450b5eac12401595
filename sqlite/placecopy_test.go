package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// A search of conversations ranks the same from a copy of where the
// store's memories are, kept up to date across creations, deletions and
// moves made through this database or another process's, as from the
// database: each step compares it with a database opened anew on the
// file, which reads the store whole, and with the search that reads
// everything from the database (a store too large for the copies).
func TestPlaceCopiesFollowTheStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	other := mustOpenAt(t, path, sqlite.Options{}) // another process on the file
	s := mustStore(t, db)
	turn := func(c, n int) string { return fmt.Sprintf("/chats/c%d/%03d.md", c, n) }
	for c := range 3 {
		for n := 1; n <= 8; n++ {
			text := fmt.Sprintf("small talk %d about the weather", n)
			if n == 4 {
				text = "where did you leave the walrus"
			}
			mustCreate(t, db, s.ID, turn(c, n), text)
		}
	}
	search := func(db *sqlite.DB) []string {
		t.Helper()
		p, err := db.SearchMemories(ctx, ws, []string{s.ID}, memstore.SearchQuery{Text: "walrus lighthouse", Limit: 20, ConversationStores: []string{s.ID}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Items {
			out = append(out, fmt.Sprintf("%s %.6f", r.Memory.Path, r.Score))
		}
		return out
	}
	step := 0
	check := func(what string, want, notWant string) {
		t.Helper()
		step++
		got := search(db)
		fresh := mustOpenAt(t, path, sqlite.Options{})
		again := search(fresh)
		if err := fresh.Close(); err != nil {
			t.Fatal(err)
		}
		*sqlite.PlaceCopyMax = 0 // every store too large: the rows
		uncopied := mustOpenAt(t, path, sqlite.Options{})
		plain := search(uncopied)
		kept := uncopied.PlaceCopies()
		*sqlite.PlaceCopyMax = memstore.PlaceCopyBytesPerWorkspace
		if err := uncopied.Close(); err != nil {
			t.Fatal(err)
		}
		if kept != 0 {
			t.Fatalf("%s: %d copies kept of stores too large for them", what, kept)
		}
		if !slices.Equal(got, again) || !slices.Equal(got, plain) {
			t.Fatalf("%s: the copy kept by searches ranks\n%v\na new one\n%v\nthe database\n%v", what, got, again, plain)
		}
		has := func(p string) bool {
			return slices.ContainsFunc(got, func(r string) bool { return len(r) > len(p) && r[:len(p)+1] == p+" " })
		}
		if want != "" && !has(want) {
			t.Fatalf("%s: %s not found beside the walrus: %v", what, want, got)
		}
		if notWant != "" && has(notWant) {
			t.Fatalf("%s: %s found: %v", what, notWant, got)
		}
	}
	check("the first search", turn(0, 5), "")
	if db.PlaceCopies() != 1 {
		t.Fatalf("%d copies of places after a search of conversations, want 1", db.PlaceCopies())
	}
	// A turn beside a lighthouse, by the other process: read from the
	// store's events.
	mustCreate(t, other, s.ID, turn(3, 1), "the lighthouse")
	mustCreate(t, other, s.ID, turn(3, 2), "more small talk")
	check("after creations by another process", turn(3, 2), "")
	mustCreate(t, db, s.ID, turn(4, 7), "a lighthouse keeper")
	mustCreate(t, db, s.ID, turn(4, 8), "tea")
	check("after creations", turn(4, 8), "")
	// A change of content only: the store's events move on, its places
	// do not.
	m := memoryAt(t, db, s.ID, turn(2, 7))
	text := "the lighthouse again"
	if _, err := sqlitetest.Writer(other).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: &text}, alice); err != nil {
		t.Fatal(err)
	}
	check("after a change of content", turn(2, 8), "")
	// Deleted: no longer beside the lighthouse.
	m = memoryAt(t, db, s.ID, turn(3, 2))
	if err := sqlitetest.Writer(other).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	check("after a deletion by another process", "", turn(3, 2))
	// Moved away from the walrus, and another moved beside it.
	m = memoryAt(t, db, s.ID, turn(1, 5))
	moved := "/chats/elsewhere/005.md"
	if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: &moved}, alice); err != nil {
		t.Fatal(err)
	}
	m = memoryAt(t, db, s.ID, turn(4, 8))
	beside := turn(2, 9)
	if _, err := sqlitetest.Writer(other).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: &beside}, alice); err != nil {
		t.Fatal(err)
	}
	check("after moves", "", turn(1, 5))
	mustCreate(t, db, s.ID, turn(1, 5), "a new fifth turn")
	check("after a creation at a path moved from", turn(1, 5), moved)
	// A copy that grew past the bound goes at its next search, which
	// reads the rows.
	*sqlite.PlaceCopyMax = 1
	beyond := search(db)
	*sqlite.PlaceCopyMax = memstore.PlaceCopyBytesPerWorkspace
	if n := db.PlaceCopies(); n != 0 {
		t.Fatalf("%d copies of places kept past their bound", n)
	}
	if again := search(db); !slices.Equal(beyond, again) {
		t.Fatalf("from the rows\n%v\nfrom a new copy\n%v", beyond, again)
	}
	// The store's deletion drops its copy.
	if err := db.DeleteStore(ctx, ws, s.ID); err != nil {
		t.Fatal(err)
	}
	if n := db.PlaceCopies(); n != 0 {
		t.Fatalf("%d copies of places after the store's deletion, want 0", n)
	}
}

// memoryAt returns the memory of the store at path.
func memoryAt(t *testing.T, db *sqlite.DB, storeID, path string) *memstore.Memory {
	t.Helper()
	p, err := db.Memories(context.Background(), ws, storeID, memstore.MemoryFilter{PathPrefix: path})
	if err != nil || len(p.Items) != 1 || p.Items[0].Memory == nil {
		t.Fatalf("memory at %s: %v, %d found", path, err, len(p.Items))
	}
	return p.Items[0].Memory
}
