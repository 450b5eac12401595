package main

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleTrustedProxies: the console's sign-in limit per client
// address believes X-Forwarded-For from the peers of --trusted-proxies
// only.
func TestConsoleTrustedProxies(t *testing.T) {
	const burst = 20 // the console's sign-in burst per client address
	for _, trusted := range []bool{false, true} {
		args := []string{"--db", filepath.Join(t.TempDir(), "m.db")}
		if trusted {
			args = append(args, "--trusted-proxies", "127.0.0.0/8,::1")
		}
		s := startServer(t, args...)
		// redeem tries a made-up sign-in link, as forwarded for client.
		redeem := func(client string) int {
			req, _ := http.NewRequest("POST", s.url+"/console/link", strings.NewReader(url.Values{"t": {"made-up"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", s.url)
			req.Header.Set("X-Forwarded-For", client)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for range burst {
			if got := redeem("198.51.100.1"); got != http.StatusUnauthorized {
				t.Fatalf("trusted %v: a sign-in within the burst: %d", trusted, got)
			}
		}
		if got := redeem("198.51.100.1"); got != http.StatusTooManyRequests {
			t.Errorf("trusted %v: past the burst: %d, want 429", trusted, got)
		}
		want := http.StatusTooManyRequests // the same peer, whatever it claims
		if trusted {
			want = http.StatusUnauthorized // another client behind the proxy
		}
		if got := redeem("198.51.100.2"); got != want {
			t.Errorf("trusted %v: another forwarded client: %d, want %d", trusted, got, want)
		}
	}
}
