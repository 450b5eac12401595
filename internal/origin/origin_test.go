package origin

import (
	"net/url"
	"testing"
)

// TestSame: a server is a scheme, a host and a port; a default port
// written out, or letters in another case, are the same server, anything
// else that differs is another.
func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://example.com/v1/a", "http://example.com/v1/b", true},
		{"http://example.com/v1/a", "http://example.com:80/v1/a/", true},
		{"https://example.com/v1", "https://EXAMPLE.com:443/v1", true},
		{"HTTP://Example.COM:8080/", "http://example.com:8080/x", true},
		{"http://[::1]:8080/", "http://[::1]:8080/y", true},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"http://example.com/", "http://example.com:8080/", false},
		{"https://example.com/", "http://example.com/", false},
		{"http://example.com:443/", "https://example.com/", false},
		{"http://example.com/", "http://api.example.com/", false},
		{"http://example.com/", "http://example.com./", false},
		{"http://127.0.0.1:8080/", "http://localhost:8080/", false},
		{"http://[::1]:8080/", "http://127.0.0.1:8080/", false},
		{"http://example.com/", "http://user:pw@example.org/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := Same(a, b); got != tc.same {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
