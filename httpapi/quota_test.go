package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// TestQuotasOnTheWire: the official SDK sees a store beyond the limit as
// the hosted API's 400 invalid_request_error naming the limit's flag; a
// search beyond the credential's rate is a 429 rate_limit_error with the
// wait in the headers the SDKs read, which another workspace's key does
// not get meanwhile. Both backends.
func TestQuotasOnTheWire(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		h := newAPIHarness(t, harnessOptions{backend: backend, core: []memstore.CoreOption{
			memstore.WithLimits(memstore.Limits{StoresPerWorkspace: 1, SearchesPerCredential: 1}),
			memstore.CoreClock(func() time.Time { return now }),
		}})
		_, _, secretA := h.newKey(t, "a")
		_, _, secretB := h.newKey(t, "b")
		e := &sdkEnv{h: h}
		sdkA, sdkB := e.client(secretA, option.WithMaxRetries(0)), e.client(secretB, option.WithMaxRetries(0))
		storeA, err := sdkA.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = sdkA.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "one too many"})
		if body := sdkError(t, err, http.StatusBadRequest, memstore.EInvalid, "a store beyond the limit"); body != nil {
			if msg, _ := body["message"].(string); !strings.Contains(msg, "memstore serve --max-stores-per-workspace") {
				t.Errorf("the refusal %q does not name the flag", msg)
			}
		}
		storeB, err := sdkB.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "b"})
		if err != nil {
			t.Fatalf("a store in another workspace while the first is full: %v", err)
		}

		search := func(secret, storeID string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, h.URL+"/v1/memory_stores/"+storeID+"/memories/search?q=anything", nil)
			req.Header.Set("x-api-key", secret)
			res, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { res.Body.Close() })
			return res
		}
		if res := search(secretA, storeA.ID); res.StatusCode != http.StatusOK {
			t.Fatalf("the first search: %s", res.Status)
		}
		res := search(secretA, storeA.ID)
		var env httpapi.ErrorJSON
		if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusTooManyRequests || env.Error.Type != "rate_limit_error" ||
			!strings.Contains(env.Error.Message, "memstore serve --search-rate-per-credential") {
			t.Errorf("a search beyond the rate: %s %+v", res.Status, env.Error)
		}
		if res.Header.Get("Retry-After") != "1" || res.Header.Get("Retry-After-Ms") != "1000" || res.Header.Get("X-Should-Retry") != "true" {
			t.Errorf("a search beyond the rate: Retry-After %q, Retry-After-Ms %q, X-Should-Retry %q; want 1, 1000 and true, as a stream's 429",
				res.Header.Get("Retry-After"), res.Header.Get("Retry-After-Ms"), res.Header.Get("X-Should-Retry"))
		}
		if res := search(secretB, storeB.ID); res.StatusCode != http.StatusOK {
			t.Errorf("another workspace's search meanwhile: %s", res.Status)
		}
	})
}
