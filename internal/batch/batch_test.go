package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrent checks that every caller gets its own answer, that
// batches hold several requests under load, and that the bounds hold.
func TestConcurrent(t *testing.T) {
	const maxFlight, maxBatch, callers, each = 2, 8, 32, 50
	var inFlight, peak, batches, biggest atomic.Int64
	b := New(maxFlight, maxBatch, func(ctx context.Context, qs []int) ([]string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		for s := biggest.Load(); int64(len(qs)) > s && !biggest.CompareAndSwap(s, int64(len(qs))); s = biggest.Load() {
		}
		batches.Add(1)
		time.Sleep(100 * time.Microsecond) // a round trip, so that requests queue
		as := make([]string, len(qs))
		for i, q := range qs {
			as[i] = fmt.Sprint("answer ", q)
		}
		return as, nil
	})
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range each {
				q := g*each + i
				a, err := b.Do(context.Background(), q)
				if want := fmt.Sprint("answer ", q); err != nil || a != want {
					t.Errorf("Do(%d) = %q, %v; want %q", q, a, err, want)
				}
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > maxFlight {
		t.Errorf("%d batches in flight at once, bound %d", p, maxFlight)
	}
	if s := biggest.Load(); s > maxBatch || s < 2 {
		t.Errorf("biggest batch %d, want 2 to %d", s, maxBatch)
	}
	if n := batches.Load(); n >= callers*each {
		t.Errorf("%d batches for %d requests: none batched", n, callers*each)
	}
}

// TestLoneRequestGoesAtOnce checks that a request with nothing in flight
// runs in its caller, alone.
func TestLoneRequestGoesAtOnce(t *testing.T) {
	var sizes []int
	b := New(1, 8, func(ctx context.Context, qs []int) ([]int, error) {
		sizes = append(sizes, len(qs))
		return qs, nil
	})
	for i := range 3 {
		if a, err := b.Do(context.Background(), i); err != nil || a != i {
			t.Fatalf("Do(%d) = %d, %v", i, a, err)
		}
	}
	if fmt.Sprint(sizes) != "[1 1 1]" {
		t.Errorf("batch sizes %v, want [1 1 1]", sizes)
	}
}

// blocker is a run function that holds its first batch until released,
// so that the test can queue requests behind it.
type blocker struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	seen    [][]int
	err     error // the answer to every batch after the first
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}), release: make(chan struct{})}
}

func (k *blocker) run(ctx context.Context, qs []int) ([]int, error) {
	first := false
	k.once.Do(func() { first = true; close(k.started) })
	if first {
		<-k.release
	}
	k.mu.Lock()
	k.seen = append(k.seen, append([]int(nil), qs...))
	k.mu.Unlock()
	if !first && k.err != nil {
		return nil, k.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return qs, nil
}

// queue starts Do(q) for each q while the first request's batch is held,
// and returns their results' channel once all are queued.
func queue(t *testing.T, b *Batcher[int, int], k *blocker, ctxs map[int]context.Context, qs ...int) chan [3]any {
	t.Helper()
	out := make(chan [3]any, len(qs)+1)
	go func() {
		a, err := b.Do(context.Background(), 0)
		out <- [3]any{0, a, err}
	}()
	<-k.started
	for _, q := range qs {
		ctx := ctxs[q]
		if ctx == nil {
			ctx = context.Background()
		}
		go func() {
			a, err := b.Do(ctx, q)
			out <- [3]any{q, a, err}
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == len(qs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", n, len(qs))
		}
	}
	return out
}

// TestQueuedTakenTogether checks that the requests that came while the
// batch was in flight go in the next batch, together.
func TestQueuedTakenTogether(t *testing.T) {
	k := newBlocker()
	b := New(1, 256, k.run)
	out := queue(t, b, k, nil, 1, 2, 3)
	close(k.release)
	for range 4 {
		r := <-out
		if r[2] != nil || r[0] != r[1] {
			t.Errorf("request %v answered %v, %v", r[0], r[1], r[2])
		}
	}
	if fmt.Sprint(k.seen[0]) != "[0]" || len(k.seen) != 2 || len(k.seen[1]) != 3 {
		t.Errorf("batches %v, want [0] then the three queued together", k.seen)
	}
}

// TestBatchBound checks that a batch takes at most its bound.
func TestBatchBound(t *testing.T) {
	k := newBlocker()
	b := New(1, 2, k.run)
	out := queue(t, b, k, nil, 1, 2, 3, 4, 5)
	close(k.release)
	for range 6 {
		<-out
	}
	for _, s := range k.seen {
		if len(s) > 2 {
			t.Errorf("batch %v over the bound of 2", s)
		}
	}
	if len(k.seen) != 4 {
		t.Errorf("batches %v, want 4", k.seen)
	}
}

// TestCancelledCaller checks that a caller whose context ends gets its
// error at once and that the others of its batch are answered.
func TestCancelledCaller(t *testing.T) {
	k := newBlocker()
	b := New(1, 256, k.run)
	ctx, cancel := context.WithCancel(context.Background())
	out := queue(t, b, k, map[int]context.Context{2: ctx}, 1, 2, 3)
	cancel()
	if r := <-out; r[0] != 2 || !errors.Is(r[2].(error), context.Canceled) {
		t.Fatalf("first answer %v, want request 2 cancelled", r)
	}
	close(k.release)
	for range 3 {
		if r := <-out; r[2] != nil || r[0] != r[1] {
			t.Errorf("request %v answered %v, %v", r[0], r[1], r[2])
		}
	}
	if len(k.seen) != 2 || len(k.seen[1]) != 2 || k.seen[1][0]+k.seen[1][1] != 4 {
		t.Errorf("batches %v, want the cancelled request left out", k.seen)
	}
}

// TestCancelledInFlight checks that a batch in flight keeps running when
// one of its callers goes away, and ends when all have.
func TestCancelledInFlight(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	var ctxErr atomic.Value
	b := New(1, 256, func(ctx context.Context, qs []int) ([]int, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			ctxErr.Store(ctx.Err())
			return nil, ctx.Err()
		}
		return qs, nil
	})
	ctx1, cancel1 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Do(ctx1, 1); done <- err }()
	<-started
	cancel1()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v", err)
	}
	// The lone caller gone, its batch's context has ended too.
	for deadline := time.Now().Add(5 * time.Second); ctxErr.Load() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the batch of a caller gone still runs")
		}
	}
	close(release)
	if a, err := b.Do(context.Background(), 7); err != nil || a != 7 {
		t.Errorf("next Do = %d, %v", a, err)
	}
}

// TestError checks that a failing batch fails each of its requests with
// its error, and that the next batch runs.
func TestError(t *testing.T) {
	k := newBlocker()
	boom := errors.New("boom")
	k.err = boom
	b := New(1, 256, k.run)
	out := queue(t, b, k, nil, 1, 2)
	close(k.release)
	for range 3 {
		r := <-out
		want := error(nil)
		if r[0] != 0 {
			want = boom
		}
		if err, _ := r[2].(error); err != want {
			t.Errorf("request %v: error %v, want %v", r[0], err, want)
		}
	}
}
