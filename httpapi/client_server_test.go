package httpapi

import (
	"net/http"
	"net/url"
	"testing"
)

// TestSameServer: a redirect is followed only to the server it came from,
// as internal/origin's Same decides (its own test holds the full table of
// what is and is not the same server); here, that the redirect's target
// and its origin reach Same, in either order.
func TestSameServer(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		same     bool
	}{
		{"http://example.com/v1/a", "http://example.com:80/v1/a/", true},
		{"http://example.com/", "https://example.com/", false},
		{"http://api.example.com/", "http://example.com/", false},
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
