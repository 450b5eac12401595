package sqlite_test

import (
	"context"
	"testing"

	"github.com/memstore/memstore"
)

// BenchmarkListMemories pages through a store of 1,000 memories in 10
// folders: whole (100 a page, content left out) and at depth 1 (one
// page of the 10 folders, each a rolled-up prefix and a seek).
func BenchmarkListMemories(b *testing.B) {
	db := MustOpen(b)
	s := mustStore(b, db)
	for d := range 10 {
		mustCreateMany(b, db, s.ID, 100, "/d"+string(rune('0'+d))+"/%03d.md", "memory %d")
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		depth int
		pages int
	}{{"all", 0, 10}, {"depth1", 1, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f := memstore.MemoryFilter{Depth: bc.depth, Limit: 100}
				pages := 0
				for {
					p, err := db.Memories(ctx, ws, s.ID, f)
					if err != nil {
						b.Fatal(err)
					}
					pages++
					if p.Next == "" {
						break
					}
					f.Page = p.Next
				}
				if pages != bc.pages {
					b.Fatalf("%d pages, want %d", pages, bc.pages)
				}
			}
		})
	}
}
