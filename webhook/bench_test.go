package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/cputime"
	"github.com/memstore/memstore/webhook"
)

// BenchmarkDeliver measures a deliverer draining a backlog of b.N due
// deliveries, made by writes before the timer starts, to endpoints each
// on a local server of its own that answers 204: the process's CPU per delivery (the
// deliverer's database work and its HTTP, both ends) and the deliveries
// per second. One endpoint is held to MaxInFlightPerEndpoint attempts at
// once; sixteen let the deliverer fill its pool.
func BenchmarkDeliver(b *testing.B) {
	for _, endpoints := range []int{1, 16} {
		b.Run(fmt.Sprintf("endpoints=%d", endpoints), func(b *testing.B) {
			var got atomic.Int64
			e := newEnv(b)
			for range endpoints {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					got.Add(1)
					w.WriteHeader(http.StatusNoContent)
				}))
				defer srv.Close()
				e.hook(b, srv.URL, memstore.WebhookMemoryCreated)
			}
			s := e.store(b, "bench")
			want := int64((b.N + endpoints - 1) / endpoints * endpoints)
			for i := range want / int64(endpoints) {
				if _, err := e.co.CreateMemory(b.Context(), e.c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", i), Content: "x"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			cpu := cputime.Process(b)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				webhook.New(e.db, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond}).Run(ctx)
			}()
			for got.Load() < want {
				time.Sleep(time.Millisecond)
			}
			cancel()
			<-done
			b.StopTimer()
			b.ReportMetric(float64((cputime.Process(b)-cpu).Microseconds())/float64(want), "cpu-µs/delivery")
			b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
