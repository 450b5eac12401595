package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/clientaddr"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestLimiterFullTable: a table filled with keys that are all being held
// back still lets a new key in (forgetting the fullest bucket), so that a
// flood of made-up names cannot refuse everyone else; the keys held back
// stay held back.
func TestLimiterFullTable(t *testing.T) {
	l := newLimiter(2, time.Minute)
	now := time.Unix(1_000_000, 0)
	for i := range maxTracked {
		key := fmt.Sprint("flood", i)
		l.allow(key, now)
		if i > 0 {
			l.allow(key, now) // empty: held back
		}
	}
	if ok, _ := l.allow("ann", now); !ok {
		t.Fatal("a new name was refused because the table is full of others")
	}
	if len(l.buckets) > maxTracked {
		t.Errorf("the table holds %d keys, more than %d", len(l.buckets), maxTracked)
	}
	if _, kept := l.buckets["flood0"]; kept {
		t.Error("the fullest bucket (flood0, one token left) was kept; an emptied one went instead")
	}
	if ok, _ := l.allow("flood1", now); ok {
		t.Error("a key held back was let through after the table filled")
	}
}

// TestSignInRefusedByAddressTakesNoName: a sign-in refused for its
// client's address takes no place in the table of names, which a flood
// from one address could otherwise fill.
func TestSignInRefusedByAddressTakesNoName(t *testing.T) {
	h := New(Config{})
	for i := range clientBurst + 50 {
		form := url.Values{"workspace": {"default"}, "name": {fmt.Sprint("made-up-", i)}, "password": {"x"}}
		r := httptest.NewRequest("POST", Prefix+"signin", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "203.0.113.9:4000"
		if i < clientBurst {
			h.byName.allow(fmt.Sprint("made-up-", i), h.now()) // as a sign-in within the burst would
			h.byAddr.allow("203.0.113.9", h.now())
			continue
		}
		w := httptest.NewRecorder()
		h.signIn(w, r)
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("attempt %d past the address's burst: %d", i, w.Code)
		}
	}
	if n := len(h.byName.buckets); n != clientBurst {
		t.Errorf("the names table holds %d names after %d refused attempts, want the %d before them", n, 50, clientBurst)
	}
}

// TestSignInLimitByClient: the sign-in limit per client address counts
// an IPv6 client by its /64, believes X-Forwarded-For only from a trusted
// proxy, and there counts each forwarded client apart.
func TestSignInLimitByClient(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	proxies, err := clientaddr.Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	// attempt redeems a made-up sign-in link (refused without hashing
	// anything) from peer, forwarded for xff when not "", and returns the
	// status.
	attempt := func(h *Handler, peer, xff string) int {
		r := httptest.NewRequest("POST", Prefix+"link", strings.NewReader("t=made-up"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "http://"+r.Host)
		r.RemoteAddr = peer
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		name         string
		burst        func(i int) (peer, xff string) // the attempts that use the burst up
		same, others [2]string                      // one more from the same client, and from another
	}{
		{"IPv6 by its /64",
			func(i int) (string, string) { return fmt.Sprintf("[2001:db8:1:2::%x]:4000", i+1), "" },
			[2]string{"[2001:db8:1:2:ffff::1]:4000", ""}, [2]string{"[2001:db8:1:3::1]:4000", ""}},
		{"X-Forwarded-For from an untrusted peer is ignored",
			func(i int) (string, string) { return "203.0.113.9:4000", fmt.Sprintf("198.51.100.%d", i+1) },
			[2]string{"203.0.113.9:4000", "198.51.100.200"}, [2]string{"203.0.113.10:4000", ""}},
		{"clients behind a trusted proxy",
			func(i int) (string, string) { return "10.0.0.1:4000", "1.2.3.4, 198.51.100.7, 10.1.1.1" },
			[2]string{"10.0.0.2:4000", "198.51.100.7"}, [2]string{"10.0.0.1:4000", "198.51.100.7, 198.51.100.8"}},
	} {
		h := New(Config{Users: memstore.NewUsers(db), TrustedProxies: proxies})
		for i := range clientBurst {
			peer, xff := c.burst(i)
			if got := attempt(h, peer, xff); got != http.StatusUnauthorized {
				t.Fatalf("%s: attempt %d within the burst: %d", c.name, i, got)
			}
		}
		if got := attempt(h, c.same[0], c.same[1]); got != http.StatusTooManyRequests {
			t.Errorf("%s: the same client past its burst: %d, want 429", c.name, got)
		}
		if got := attempt(h, c.others[0], c.others[1]); got != http.StatusUnauthorized {
			t.Errorf("%s: another client: %d, want 401", c.name, got)
		}
	}
}

// TestLimiterLongKeys: a table full of long keys (a user name as long as
// a request's body allows) holds a bounded amount, and a long key is
// still held back like any other.
func TestLimiterLongKeys(t *testing.T) {
	l := newLimiter(1, time.Minute)
	now := time.Unix(1_000_000, 0)
	long := strings.Repeat("n", 1<<20)
	for i := range 50 {
		l.allow(fmt.Sprint(i)+long, now)
	}
	held := 0
	for k := range l.buckets {
		held += len(k)
	}
	if held > 50*maxKeyBytes {
		t.Errorf("50 keys of 1 MiB hold %d bytes", held)
	}
	if ok, _ := l.allow("0"+long, now); ok {
		t.Error("a long key was let through past its burst")
	}
	if ok, _ := l.allow("50"+long, now); !ok {
		t.Error("a new long key was held back as another's")
	}
}
