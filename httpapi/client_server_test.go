package httpapi

import (
	"net/http"
	"net/url"
	"testing"
)

// TestSameServer: a server is a scheme, a host and a port; a default port
// written out is the same server, anything else differs is another.
func TestSameServer(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		same     bool
	}{
		{"http://example.com/v1/a", "http://example.com/v1/b", true},
		{"http://example.com/v1/a", "http://example.com:80/v1/a/", true},
		{"https://example.com/v1", "https://EXAMPLE.com:443/v1", true},
		{"HTTP://Example.COM:8080/", "http://example.com:8080/x", true},
		{"http://[::1]:8080/", "http://[::1]:8080/y", true},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"http://example.com/", "http://example.com:8080/", false},
		{"https://example.com/", "http://example.com/", false},
		{"http://example.com/", "https://example.com/", false},
		{"http://example.com:443/", "https://example.com/", false},
		{"http://example.com/", "http://api.example.com/", false},
		{"http://api.example.com/", "http://example.com/", false},
		{"http://example.com/", "http://example.com./", false},
		{"http://127.0.0.1:8080/", "http://localhost:8080/", false},
		{"http://[::1]:8080/", "http://127.0.0.1:8080/", false},
		{"http://example.com/", "http://user:pw@example.org/", false},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		err := sameServer(&http.Request{URL: to}, []*http.Request{{URL: from}})
		if (err == nil) != tc.same {
			t.Errorf("%s then %s: error %v; want same server %v", tc.from, tc.to, err, tc.same)
		}
	}
}
