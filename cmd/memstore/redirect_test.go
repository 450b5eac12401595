package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// TestRedirectKeepsCredential: a server given with --url that redirects
// to another server (here another port of the same host) is refused
// before anything is sent there: the other server never sees the API key
// or the session token, nor the headers that go with them, whatever the
// command.
func TestRedirectKeepsCredential(t *testing.T) {
	clearEnv(t)
	srv := startChild(t, filepath.Join(t.TempDir(), "served.db"))
	code, out, errs := run(t, "", "stores", "create", "notes", "--json", "--url", srv.url, "--api-key", srv.key)
	var store httpapi.StoreJSON
	if code != 0 || json.Unmarshal([]byte(out), &store) != nil {
		t.Fatalf("stores create: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, "", "sessions", "create", "--store", store.ID, "--url", srv.url, "--api-key", srv.key)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if code != 0 || !strings.HasPrefix(token, memstore.SessionTokenPrefix) {
		t.Fatalf("sessions create: %d %s %s", code, out, errs)
	}

	// elsewhere passes everything on to the real server, as a host that
	// harvests credentials would, and records what it was sent.
	var (
		mu   sync.Mutex
		seen []string
	)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" x-api-key="+r.Header.Get("x-api-key")+" authorization="+r.Header.Get("authorization"))
		mu.Unlock()
		http.Redirect(w, r, srv.url+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer elsewhere.Close()
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer moved.Close()

	memdir := t.TempDir()
	for _, cred := range [][]string{{"--api-key", srv.key}, {"--token", token}} {
		for _, args := range [][]string{
			{"stores", "ls"},
			{"ls"},
			{"put", "/a.md"},
			{"grep", "anything"},
			{"sessions", "ls"},
			{"watch"},
			{"memdir", "sync", "--dir", memdir},
		} {
			if cred[0] == "--token" && args[0] != "watch" && args[0] != "memdir" {
				continue // the commands of an API key
			}
			argv := append(append(append([]string{}, args...), "--url", moved.URL), cred...)
			if args[0] != "stores" && args[0] != "sessions" {
				argv = append(argv, "--store", store.ID)
			}
			// A command that followed the redirect might stream for ever
			// (watch, memdir sync --watch): give each a deadline.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			var stdout, stderr bytes.Buffer
			code := Main(ctx, argv, strings.NewReader("hello\n"), &stdout, &stderr)
			cancel()
			errs := stderr.String()
			if code == 0 || !strings.Contains(errs, "redirected to another server, "+elsewhere.URL+";") {
				t.Errorf("%v: exit %d, stderr %q; want a refused redirect naming %s", args, code, errs, elsewhere.URL)
			}
			if strings.Contains(errs, cred[1]) {
				t.Errorf("%v: stderr shows the credential: %q", args, errs)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		t.Errorf("the other server was sent %s", s)
	}
}
