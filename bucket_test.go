package memstore

import (
	"testing"
	"time"
)

// TestBucket: a bucket gains one token per interval up to its burst,
// gains nothing when time runs backwards, and says how long until it
// holds a whole token and until it is full.
func TestBucket(t *testing.T) {
	const interval, burst = 4 * time.Second, 5
	for _, tc := range []struct {
		tokens  float64
		elapsed time.Duration
		want    float64
	}{
		{0, 0, 0},
		{0, time.Second, 0.25},
		{0, 8 * time.Second, 2},
		{4.5, 4 * time.Second, 5},
		{0, time.Hour, 5},
		{2, -time.Minute, 2},
	} {
		if got := refill(tc.tokens, tc.elapsed, interval, burst); got != tc.want {
			t.Errorf("refill(%v, %v) = %v, want %v", tc.tokens, tc.elapsed, got, tc.want)
		}
	}
	if got := untilWhole(0.25, interval); got != 3*time.Second {
		t.Errorf("untilWhole(0.25) = %v, want 3s", got)
	}
	if got := untilWhole(1, interval); got != 0 {
		t.Errorf("untilWhole(1) = %v, want 0", got)
	}
	if got := untilFull(3, interval, burst); got != 8*time.Second {
		t.Errorf("untilFull(3) = %v, want 8s", got)
	}
}
