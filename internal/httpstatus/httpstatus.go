// Package httpstatus is the one table from memstore's error codes, which
// are the API's error types, to HTTP statuses (docs/api.md, Status
// codes), with the retry wait that goes with a refusal: what every
// surface that answers over HTTP (the API's JSON, the console's pages)
// asks, each then writing the answer in its own format.
package httpstatus

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/memstore/memstore"
)

// TooLarge is the error type of a request body above the server's cap.
// No memstore code stands for it: only the HTTP layer reads bodies.
const TooLarge = "request_too_large"

// overloaded is the API's status for memstore.EOverloaded, Anthropic's
// own, which the SDKs know; browsers do not (see Page).
const overloaded = 529

// statuses are the statuses of the codes. The types that memstore's
// services never return are listed too, so that a backend may use them
// and be mapped.
var statuses = map[string]int{
	memstore.EInvalid:            http.StatusBadRequest,
	memstore.EUnauthenticated:    http.StatusUnauthorized,
	"billing_error":              http.StatusPaymentRequired,
	memstore.EPermission:         http.StatusForbidden,
	memstore.ENotFound:           http.StatusNotFound,
	memstore.EConflict:           http.StatusConflict,
	memstore.EPathConflict:       http.StatusConflict,
	memstore.EPreconditionFailed: http.StatusConflict,
	TooLarge:                     http.StatusRequestEntityTooLarge,
	memstore.ERateLimited:        http.StatusTooManyRequests,
	memstore.EInternal:           http.StatusInternalServerError,
	"timeout_error":              http.StatusGatewayTimeout,
	memstore.EOverloaded:         overloaded,
}

// Of is the API's status of an error code; 0 for a code it does not
// know, which is answered as an internal error.
func Of(code string) int { return statuses[code] }

// Page is the status of an error code on a page that a browser shows:
// the API's, but 503 for an overloaded server, a status browsers know,
// and 0 for an internal error as for an unknown code, whose message a
// page does not show.
func Page(code string) int {
	switch s := statuses[code]; s {
	case overloaded:
		return http.StatusServiceUnavailable
	case http.StatusInternalServerError:
		return 0
	default:
		return s
	}
}

// RetryAfter sets the Retry-After header, in whole seconds, to how long
// err asks to wait before the same request may succeed
// (memstore.Error.RetryAfter), when it asks, and returns that wait; 0
// when it does not ask.
func RetryAfter(h http.Header, err error) time.Duration {
	var e *memstore.Error
	if !errors.As(err, &e) || e.RetryAfter <= 0 {
		return 0
	}
	h.Set("Retry-After", strconv.Itoa(memstore.RetrySeconds(e.RetryAfter)))
	return e.RetryAfter
}
