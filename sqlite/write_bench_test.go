package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/cputime"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/webhook"
)

// BenchmarkWriteCycle measures the writer alone, without HTTP: 32
// goroutines each create a memory of 1 KiB, update it and delete it, as
// the write mix of memstore bench does. One op is one cycle of three
// writes; writes/s is the writer's throughput.
func BenchmarkWriteCycle(b *testing.B) {
	db := MustOpen(b)
	writeCycles(b, db, mustStore(b, db))
}

// BenchmarkWriteCycleWebhooks is BenchmarkWriteCycle with an endpoint
// that wants every event, and a deliverer's work on the database
// running beside it as webhook.Deliverer does it with one endpoint
// (recording the attempts that finished and claiming, into a pool all
// free since attempts take no time here, as many as the endpoint may
// hold, in one transaction; without the HTTP): what webhooks cost the
// writer.
func BenchmarkWriteCycleWebhooks(b *testing.B) {
	db, s := webhookBench(b)
	ctx := context.Background()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		delivered := 0
		var ds []memstore.WebhookDelivery
		var attempts []memstore.WebhookAttempt
		for {
			select {
			case <-stop:
				done <- delivered
				return
			default:
			}
			now := time.Now()
			var err error
			ds, err = db.RecordWebhookAttempts(ctx, attempts, now, &memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: webhook.Pool, PerEndpoint: webhook.MaxHeldPerEndpoint, AllFeeds: true})
			if err != nil {
				b.Error(err)
			}
			attempts = attempts[:0]
			for i := range ds {
				ds[i].Attempted(now, 204, "", memstore.DefaultRetryPolicy)
				attempts = append(attempts, memstore.WebhookAttempt{Delivery: &ds[i]})
			}
			delivered += len(ds)
			if len(ds) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	writeCycles(b, db, s)
	close(stop)
	b.ReportMetric(float64(<-done)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkWriteCycleUndelivered is BenchmarkWriteCycleWebhooks with no
// deliverer: what writing the deliveries alone costs the writer, to tell
// it from the deliverer's share.
func BenchmarkWriteCycleUndelivered(b *testing.B) {
	db, s := webhookBench(b)
	writeCycles(b, db, s)
}

// webhookBench is a database with an endpoint that wants every event of
// its one store's workspace, and the store.
func webhookBench(b *testing.B) (*sqlite.DB, *memstore.Store) {
	db := MustOpen(b)
	ctx := context.Background()
	w, err := db.CreateWorkspace(ctx, "hooks")
	if err != nil {
		b.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: alice}
	if _, err := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)).CreateWebhook(ctx, c,
		memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: memstore.WebhookEventTypes}); err != nil {
		b.Fatal(err)
	}
	s, err := memstore.NewCore(db).CreateStore(ctx, c, memstore.StoreCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return db, s
}

// writeCycles creates, updates and deletes memories of store s from 32
// goroutines, b.N cycles in all.
func writeCycles(b *testing.B, db *sqlite.DB, s *memstore.Store) {
	content := strings.Repeat("memstore bench line\n", 52)[:1024]
	var n atomic.Int64
	b.SetParallelism(16) // 32 goroutines on 2 cores
	b.ResetTimer()
	cpu := cputime.Process(b)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := n.Add(1)
			m, err := sqlitetest.Writer(db).CreateMemory(ctx, s.WorkspaceID, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/bench/%d/%d.md", i%32, i), Content: content}, alice)
			if err != nil {
				b.Error(err)
				return
			}
			c := content + fmt.Sprint(i)
			if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, s.WorkspaceID, s.ID, m.ID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				b.Error(err)
				return
			}
			if err := sqlitetest.Writer(db).DeleteMemory(ctx, s.WorkspaceID, s.ID, m.ID, "", alice); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64((cputime.Process(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}
