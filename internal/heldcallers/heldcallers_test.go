package heldcallers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

func sessionCaller(sessionID, tokenID string) *memstore.Caller {
	return &memstore.Caller{WorkspaceID: "wrkspc_1", Session: &memstore.Session{ID: sessionID}, TokenID: tokenID,
		Actor: memstore.Actor{Type: memstore.ActorSession, ID: sessionID}}
}

// waitFor fails t unless cond holds within 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStops: a revocation that names a held caller ends its hold at once;
// a released hold, and the holds of other credentials, are not ended.
func TestStops(t *testing.T) {
	var notices memstore.Revocations
	r := New(nil, &notices)
	defer r.Close()
	var a, b, released atomic.Int32
	r.Hold(context.Background(), sessionCaller("sesn_a", "tok_a"), "", func() { a.Add(1) })
	r.Hold(context.Background(), sessionCaller("sesn_b", "tok_b"), "", func() { b.Add(1) })
	release := r.Hold(context.Background(), sessionCaller("sesn_a", "tok_c"), "", func() { released.Add(1) })
	release()
	notices.Revoked(memstore.Revocation{SessionID: "sesn_a"})
	if a.Load() != 1 || b.Load() != 0 || released.Load() != 0 {
		t.Errorf("ended: a %d, b %d, released %d; want 1, 0, 0", a.Load(), b.Load(), released.Load())
	}
}

// TestRecheck: after notices went unheard every hold is read again, and
// those whose check refuses end; after a session's stores changed, only
// its holds of a store are read again.
func TestRecheck(t *testing.T) {
	var notices memstore.Revocations
	checked := map[string]*atomic.Int32{"tok_gone": {}, "tok_ok": {}, "tok_moved": {}, "tok_mcp": {}}
	check := func(ctx context.Context, c *memstore.Caller, storeID string) error {
		checked[c.TokenID].Add(1)
		switch c.TokenID {
		case "tok_gone":
			return memstore.Errorf(memstore.EUnauthenticated, "gone")
		case "tok_moved":
			return memstore.Errorf(memstore.EPermission, "detached")
		}
		return nil
	}
	r := New(check, &notices)
	defer r.Close()
	ended := map[string]*atomic.Int32{"tok_gone": {}, "tok_ok": {}, "tok_moved": {}, "tok_mcp": {}}
	for tok, store := range map[string]string{"tok_gone": "memstore_1", "tok_ok": "memstore_1", "tok_moved": "memstore_1", "tok_mcp": ""} {
		sesn := "sesn_" + tok
		if tok == "tok_mcp" {
			sesn = "sesn_tok_moved" // the same session as tok_moved, holding no store
		}
		r.Hold(context.Background(), sessionCaller(sesn, tok), store, func() { ended[tok].Add(1) })
	}

	notices.Revoked(memstore.Revocation{SessionID: "sesn_tok_moved", Refresh: true})
	waitFor(t, "the store's hold ended", func() bool { return ended["tok_moved"].Load() == 1 })
	if n := checked["tok_mcp"].Load() + checked["tok_ok"].Load() + checked["tok_gone"].Load(); n != 0 {
		t.Errorf("a change of one session's stores read %d other holds again", n)
	}

	notices.Revoked(memstore.Revocation{Unheard: true})
	waitFor(t, "the revoked token's hold ended", func() bool { return ended["tok_gone"].Load() == 1 })
	waitFor(t, "every hold read again", func() bool { return checked["tok_mcp"].Load() == 1 && checked["tok_ok"].Load() == 1 })
	if ended["tok_ok"].Load() != 0 || ended["tok_mcp"].Load() != 0 {
		t.Errorf("holds whose check passed were ended")
	}
}

// TestCloseWaitsForRechecks: Close ends the lookups under way and returns
// only once they have returned, so that none reads a database closed
// after it.
func TestCloseWaitsForRechecks(t *testing.T) {
	var notices memstore.Revocations
	started := make(chan struct{})
	var returned atomic.Bool
	check := func(ctx context.Context, c *memstore.Caller, storeID string) error {
		close(started)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // a lookup slow to notice
		returned.Store(true)
		return ctx.Err()
	}
	r := New(check, &notices)
	r.Hold(context.Background(), sessionCaller("sesn_a", "tok_a"), "memstore_1", func() {})
	notices.Revoked(memstore.Revocation{Unheard: true})
	<-started
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(memstore.RecheckTimeout / 2):
		t.Fatal("Close did not end the lookup under way")
	}
	if !returned.Load() {
		t.Error("Close returned before the lookup under way")
	}
	r.Close() // a second time is harmless
	notices.Revoked(memstore.Revocation{Unheard: true})
}

// TestListenOnce: a notifier given as two services (a Core is both the
// key and the session service) is heard once per revocation; two
// notifiers are each heard.
func TestListenOnce(t *testing.T) {
	var one, two memstore.Revocations
	var heard atomic.Int32
	stop := Listen(func(memstore.Revocation) { heard.Add(1) }, &one, &one, "not a notifier", &two)
	defer stop()
	one.Revoked(memstore.Revocation{SessionID: "sesn_a"})
	if n := heard.Load(); n != 1 {
		t.Errorf("a revocation of a notifier given twice was heard %d times, want 1", n)
	}
	two.Revoked(memstore.Revocation{SessionID: "sesn_a"})
	if n := heard.Load(); n != 2 {
		t.Errorf("after the second notifier's revocation: heard %d times, want 2", n)
	}
	stop()
	one.Revoked(memstore.Revocation{SessionID: "sesn_a"})
	if n := heard.Load(); n != 2 {
		t.Errorf("heard after stop: %d, want 2", n)
	}
}
