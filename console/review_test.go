package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTreeLongPrefix: a folder path no memory could be under is refused
// with a clear message, not listed with a breadcrumb whose size grows
// with the square of its length.
func TestTreeLongPrefix(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "auditor")
	long := strings.Repeat("/a", 2000) + "/"
	resp, body := f.get(t, c, "/console/stores/"+f.storeID+"?path="+url.QueryEscape(long))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "the limit is 1024") || len(body) > 64<<10 {
		t.Errorf("a tree at a %d-byte prefix: %d, %d bytes", len(long), resp.StatusCode, len(body))
	}
}
