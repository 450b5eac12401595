package memstore

import (
	"fmt"
	"testing"
	"time"
)

// TestRateLimiterBounded: the shares of searches hold only the keys of
// recent callers, so that a stream of new credentials cannot grow them
// without end, and a key dropped comes back with a whole share.
func TestRateLimiterBounded(t *testing.T) {
	l := newRateLimiter()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 1000 {
		if _, which := l.take(now, rate{key: fmt.Sprint("cred", i), perSecond: 1}); which != -1 {
			t.Fatalf("the first search of credential %d was refused", i)
		}
	}
	if _, which := l.take(now, rate{key: "cred0", perSecond: 1}); which != 0 {
		t.Fatalf("a second search within the second was not refused")
	}
	now = now.Add(sweepEvery)
	if _, which := l.take(now, rate{key: "cred0", perSecond: 1}); which != -1 {
		t.Fatalf("a search %v later was refused", sweepEvery)
	}
	if n := len(l.buckets); n != 1 {
		t.Errorf("%d buckets kept after %v without their searches, want 1", n, sweepEvery)
	}
}

// TestRateLimiterAllOrNone: a search refused by one share takes nothing
// from the other, and says how long until both have room.
func TestRateLimiterAllOrNone(t *testing.T) {
	l := newRateLimiter()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	cred, ws := rate{key: "cred", perSecond: 2}, rate{key: "ws", perSecond: 4}
	for range 2 {
		if _, which := l.take(now, cred, ws); which != -1 {
			t.Fatal("a search within both shares was refused")
		}
	}
	wait, which := l.take(now, cred, ws)
	if which != 0 || wait != 500*time.Millisecond {
		t.Errorf("beyond the credential's share: refused by %d after %v, want 0 and 500ms", which, wait)
	}
	// The workspace's share lost nothing to the refusal: two more.
	other := rate{key: "cred2", perSecond: 2}
	for range 2 {
		if _, which := l.take(now, other, ws); which != -1 {
			t.Fatal("another credential's search within the workspace's share was refused")
		}
	}
	if _, which := l.take(now, rate{key: "cred3", perSecond: 2}, ws); which != 1 {
		t.Errorf("beyond the workspace's share: refused by %d, want 1", which)
	}
}

// TestQuotaMaxIsWhereCheckRefuses: a quota's cap as a value (Max) is the
// count at which its Check first refuses, which a backend that checks
// the cap in its database relies on; the zero Quota refuses nothing.
func TestQuotaMaxIsWhereCheckRefuses(t *testing.T) {
	for _, limit := range []int{1, 2, 3, DefaultMaxMemoriesPerStore} {
		q := memoryQuota("memstore_q", limit)
		if !q.Limited() || q.Max() != limit {
			t.Fatalf("a quota of %d: Limited %v, Max %d", limit, q.Limited(), q.Max())
		}
		for n := max(0, limit-2); n <= limit+1; n++ {
			if refused := q.Check(n) != nil; refused != (n >= q.Max()) {
				t.Errorf("a quota of %d with %d held: refused %v, want %v", limit, n, refused, n >= q.Max())
			}
		}
	}
	if q := (Quota{}); q.Limited() || q.Check(1<<40) != nil {
		t.Error("the zero Quota caps something")
	}
}
