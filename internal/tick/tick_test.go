package tick

import (
	"context"
	"testing"
	"time"
)

// Every calls fn until it returns false, and stops when its context
// ends, before or between calls.
func TestEvery(t *testing.T) {
	calls := 0
	Every(t.Context(), time.Millisecond, func() bool { calls++; return calls < 3 })
	if calls != 3 {
		t.Fatalf("fn ran %d times, want 3: it stops when fn returns false", calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	Every(ctx, time.Millisecond, func() bool { t.Fatal("fn ran after its context ended"); return false })

	ctx, cancel = context.WithCancel(t.Context())
	calls = 0
	Every(ctx, time.Millisecond, func() bool {
		calls++
		cancel()
		return true
	})
	if calls != 1 {
		t.Fatalf("fn ran %d times once its context ended, want 1", calls)
	}
}
