package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// headerLog records the requests a server receives.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *headerLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// credentialHeaders are the headers of a request that carry or vouch for a
// credential: none may reach a host the client was not given.
func credentialHeaders(h http.Header) []string {
	var found []string
	for k := range h {
		switch lk := strings.ToLower(k); {
		case lk == "x-api-key", lk == "authorization", lk == "cookie", lk == "proxy-authorization",
			strings.HasPrefix(lk, "anthropic-"):
			found = append(found, k+": "+h.Get(k))
		}
	}
	return found
}

// TestClientRedirects: the client follows a redirect on the server it was
// given (same scheme, host and port), and refuses one to any other, a
// different port of the same host included, before sending anything
// there: the other server never sees the key, a session token, or any
// header that goes with them.
func TestClientRedirects(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// /old/v1/... moved to /v1/... on the same server.
			if rest, ok := strings.CutPrefix(r.URL.Path, "/old/"); ok {
				http.Redirect(w, r, "/"+rest, http.StatusPermanentRedirect)
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	_, _, key := h.newKey(t, "redirects")
	ctx := t.Context()

	// A server that must never be reached: it records what it would have
	// been given.
	var other headerLog
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r.Header)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data":[],"has_more":false,"first_id":null,"last_id":null}`))
	}))
	defer elsewhere.Close()
	eu, _ := url.Parse(elsewhere.URL)

	// The given server sends everything under /away/ to target.
	redirector := func(target func(r *http.Request) string, code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rest, ok := strings.CutPrefix(r.URL.Path, "/hop/"); ok {
				// One redirect on the same server first.
				http.Redirect(w, r, "/"+rest, code)
				return
			}
			http.Redirect(w, r, target(r), code)
		}))
	}
	sameOtherPort := func(r *http.Request) string { return elsewhere.URL + r.URL.RequestURI() }
	otherName := func(r *http.Request) string { return "http://localhost:" + eu.Port() + r.URL.RequestURI() }

	t.Run("SameServerFollowed", func(t *testing.T) {
		c := httpapi.NewClient(h.URL+"/old", key)
		s, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "moved"})
		if err != nil {
			t.Fatalf("a redirect on the same server: %v", err)
		}
		if _, err := c.Store(ctx, nil, s.ID); err != nil {
			t.Fatalf("a redirect on the same server: %v", err)
		}
	})

	for _, tc := range []struct {
		name   string
		target func(*http.Request) string
		code   int
		base   string // below the redirector's URL
		client *http.Client
	}{
		{"OtherPort", sameOtherPort, http.StatusFound, "", nil},
		{"OtherPortKeepsMethod", sameOtherPort, http.StatusTemporaryRedirect, "", nil},
		{"OtherName", otherName, http.StatusPermanentRedirect, "", nil},
		{"AfterASameServerHop", sameOtherPort, http.StatusTemporaryRedirect, "/hop", nil},
		{"OwnHTTPClient", sameOtherPort, http.StatusFound, "", &http.Client{}},
		{"OwnHTTPClientFollowingAll", sameOtherPort, http.StatusFound, "",
			&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other.reset()
			red := redirector(tc.target, tc.code)
			defer red.Close()
			for _, secret := range []string{key, memstore.SessionTokenPrefix + "not-a-real-token"} {
				c := httpapi.NewClient(red.URL+tc.base, secret)
				c.HTTPClient = tc.client
				c.WorkspaceID = "wrkspc_x"
				calls := map[string]func() error{
					"list": func() error { _, err := c.Stores(ctx, nil, memstore.StoreFilter{}); return err },
					"create": func() error {
						_, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "x"})
						return err
					},
					"stream": func() error {
						return c.StreamEvents(ctx, nil, "memstore_x", "", func(memstore.Event) error { return nil })
					},
				}
				if strings.HasPrefix(secret, memstore.SessionTokenPrefix) {
					calls["authenticate"] = func() error { _, err := c.AuthenticateSession(ctx, secret); return err }
				}
				for name, call := range calls {
					err := call()
					if err == nil {
						t.Errorf("%s: followed the redirect to another server", name)
						continue
					}
					if !strings.Contains(err.Error(), "redirected to another server") || strings.Contains(err.Error(), secret) {
						t.Errorf("%s: error %q; want one saying the redirect went to another server, without the credential", name, err)
					}
					var me *memstore.Error
					if errors.As(err, &me) {
						t.Errorf("%s: error %v is an API error; want a client-side refusal", name, err)
					}
				}
			}
			for _, hdr := range other.all() {
				t.Errorf("the other server was reached, with %q", credentialHeaders(hdr))
			}
		})
	}
}
