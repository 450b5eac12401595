package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
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
