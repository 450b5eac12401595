package httpstatus

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// TestStatuses: each error code has the API's status (docs/api.md, Status
// codes) and a page's, which differs only where a browser would not
// understand the API's (529) or must not read the message (500).
func TestStatuses(t *testing.T) {
	want := map[string][2]int{ // the API's status, a page's
		memstore.EInvalid:            {400, 400},
		memstore.EUnauthenticated:    {401, 401},
		memstore.EPermission:         {403, 403},
		memstore.ENotFound:           {404, 404},
		memstore.EConflict:           {409, 409},
		memstore.EPathConflict:       {409, 409},
		memstore.EPreconditionFailed: {409, 409},
		TooLarge:                     {413, 413},
		memstore.ERateLimited:        {429, 429},
		memstore.EInternal:           {500, 0},
		memstore.EOverloaded:         {529, 503},
		"no_such_error":              {0, 0},
	}
	for code, w := range want {
		if got := [2]int{Of(code), Page(code)}; got != w {
			t.Errorf("%s: API %d, page %d; want %d, %d", code, got[0], got[1], w[0], w[1])
		}
	}
}

// TestRetryAfter: a refusal that names its wait sets Retry-After in whole
// seconds, rounded up; any other error sets nothing.
func TestRetryAfter(t *testing.T) {
	h := httptest.NewRecorder().Header()
	err := &memstore.Error{Code: memstore.ERateLimited, RetryAfter: 1500 * time.Millisecond}
	if got := RetryAfter(h, err); got != 1500*time.Millisecond || h.Get("Retry-After") != "2" {
		t.Errorf("RetryAfter = %v, header %q; want 1.5s and 2", got, h.Get("Retry-After"))
	}
	h = http.Header{}
	if got := RetryAfter(h, memstore.Errorf(memstore.EInvalid, "no")); got != 0 || h.Get("Retry-After") != "" {
		t.Errorf("RetryAfter of an error without a wait = %v, header %q", got, h.Get("Retry-After"))
	}
}
