package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

// TestSearchRateLimited: a user searching faster than their share gets a
// 429 page saying so and when to retry, while another user of the
// workspace searches at once.
func TestSearchRateLimited(t *testing.T) {
	f := newFixture(t, "We chose PostgreSQL for the billing service.")
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	core := memstore.NewCore(f.db, memstore.WithLimits(memstore.Limits{SearchesPerCredential: 1}), memstore.CoreClock(func() time.Time { return now }))
	h := console.New(console.Config{Stores: core, Memories: core, Versions: core, Search: core, Sessions: core, Activity: core,
		Keys: memstore.NewKeys(f.core), Users: memstore.NewUsers(f.db)})
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)

	search := "/console/stores/" + f.storeID + "/search?q=billing"
	auditor, member := f.signIn(t, "auditor"), f.signIn(t, "member")
	if resp, body := f.get(t, auditor, search); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<mark>billing</mark>") {
		t.Fatalf("the first search: %d\n%s", resp.StatusCode, body)
	}
	resp, body := f.get(t, auditor, search)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(body, "too many searches") || !strings.Contains(body, "wait 1 second and try again") {
		t.Errorf("a search beyond the rate: %d, Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := f.get(t, member, search); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<mark>billing</mark>") {
		t.Errorf("another user's search meanwhile: %d\n%s", resp.StatusCode, body)
	}
	now = now.Add(time.Second)
	if resp, body := f.get(t, auditor, search); resp.StatusCode != http.StatusOK {
		t.Errorf("a search a second later: %d\n%s", resp.StatusCode, body)
	}
}
