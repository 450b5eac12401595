package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/clientaddr"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestSignInRefusedByAddressTakesNoName: a sign-in refused for its
// client's address takes nothing from the name's allowance: once the
// address may try again, the user still signs in at once.
func TestSignInRefusedByAddressTakesNoName(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, "default")
	users := memstore.NewUsers(db)
	op := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	if _, err := users.CreateUser(context.Background(), op, memstore.UserCreate{Name: "ann", Role: memstore.RoleMember, Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	h := New(Config{Users: users})
	signIn := func(from, password string) int {
		form := url.Values{"workspace": {"default"}, "name": {"ann"}, "password": {password}}
		r := httptest.NewRequest("POST", Prefix+"signin", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "http://"+r.Host)
		r.RemoteAddr = from
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	// The address's allowance, used up by made-up links.
	for i := range memstore.SignInAddrBurst {
		if got := attemptLink(h, "203.0.113.9:4000", ""); got != http.StatusUnauthorized {
			t.Fatalf("attempt %d within the address's burst: %d", i, got)
		}
	}
	for i := range memstore.SignInNameBurst + 5 {
		if got := signIn("203.0.113.9:4000", fmt.Sprint("guess ", i)); got != http.StatusTooManyRequests {
			t.Fatalf("a guess at ann past the address's burst: %d, want 429", got)
		}
	}
	if got := signIn("198.51.100.1:4000", "correct horse battery"); got != http.StatusSeeOther {
		t.Errorf("ann from another address, after guesses refused for theirs: %d, want 303", got)
	}
}

// attemptLink redeems a made-up sign-in link (refused without hashing
// anything) from peer, forwarded for xff when not "", and returns the
// status.
func attemptLink(h *Handler, peer, xff string) int {
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

// TestSignInLimitByClient: the sign-in limit per client address counts
// an IPv6 client by its /64, believes X-Forwarded-For only from a trusted
// proxy, and there counts each forwarded client apart.
func TestSignInLimitByClient(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	proxies, err := clientaddr.Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	attempt := attemptLink
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
		for i := range memstore.SignInAddrBurst {
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

// TestLinkRefusedAsSentence: a sign-in link redeemed past the address's
// allowance is refused as the sign-in form refuses a password: 429 with
// Retry-After, and the core's words as a sentence of the page.
func TestLinkRefusedAsSentence(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	sqlitetest.Workspace(t, db, "default")
	h := New(Config{Users: memstore.NewUsers(db)})
	for range memstore.SignInAddrBurst {
		attemptLink(h, "203.0.113.7:4000", "")
	}
	r := httptest.NewRequest("POST", Prefix+"link", strings.NewReader("t=made-up"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://"+r.Host)
	r.RemoteAddr = "203.0.113.7:4000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d, Retry-After %q; want 429 with a wait", w.Code, w.Header().Get("Retry-After"))
	}
	if body := w.Body.String(); !strings.Contains(body, "Too many sign-in attempts") || !strings.Contains(body, "try again.") {
		t.Errorf("the page does not say, as a sentence, to wait and try again:\n%s", body)
	}
}
