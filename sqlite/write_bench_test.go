package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// BenchmarkWriteCycle measures the writer alone, without HTTP: 32
// goroutines each create a memory of 1 KiB, update it and delete it, as
// the write mix of memstore bench does. One op is one cycle of three
// writes; writes/s is the writer's throughput.
func BenchmarkWriteCycle(b *testing.B) {
	db := MustOpen(b)
	s := mustStore(b, db)
	content := strings.Repeat("memstore bench line\n", 52)[:1024]
	var n atomic.Int64
	b.SetParallelism(16) // 32 goroutines on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := n.Add(1)
			m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/bench/%d/%d.md", i%32, i), Content: content}, alice)
			if err != nil {
				b.Error(err)
				return
			}
			c := content + fmt.Sprint(i)
			if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				b.Error(err)
				return
			}
			if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
