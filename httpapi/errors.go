package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/httpstatus"
)

// internalMessage is all a client learns of an internal error; the cause
// goes to the log.
const internalMessage = "internal server error"

// fail answers a request with err: a *memstore.Error with its code's
// status and message, anything else (or an unknown code) as a 500
// api_error with a generic message. The cause of every 5xx is logged
// here, once.
func (s *Server) fail(w *responseWriter, r *http.Request, err error) {
	var e *memstore.Error
	if !errors.As(err, &e) || httpstatus.Of(e.Code) == 0 {
		e = &memstore.Error{Code: memstore.EInternal, Message: internalMessage}
	}
	status := httpstatus.Of(e.Code)
	if status >= 500 && r.Context().Err() != nil {
		// The client went away (or gave up): nobody reads the answer,
		// and it is not the server's fault, so it is no error in the log.
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request abandoned by the client",
			slog.String("request_id", w.requestID), slog.String("route", routeOf(r)))
	} else if status >= 500 {
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", w.requestID), slog.String("route", routeOf(r)),
			slog.Int("status", status), slog.String("error", err.Error()))
	}
	s.writeError(w, status, e)
}

// writeError writes the error envelope with status, and the retry hint
// (docs/api.md, Retries): the SDKs retry every 409 unless told not to, so
// each deterministic 4xx says x-should-retry: false, while transient
// contention, and a path conflict whose blocker could not be named, say
// true.
func (s *Server) writeError(w *responseWriter, status int, e *memstore.Error) {
	h := w.Header()
	switch {
	case e.Retry || (e.Code == memstore.EPathConflict && e.ConflictingMemoryID == ""):
		h.Set("X-Should-Retry", "true")
	case status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
		h.Set("X-Should-Retry", "false")
	}
	if wait := httpstatus.RetryAfter(h, e); wait > 0 {
		// What the SDKs read first: milliseconds, else Retry-After's
		// whole seconds.
		h.Set("Retry-After-Ms", strconv.FormatInt(max(wait.Milliseconds(), 1), 10))
	}
	body := ErrorJSON{
		Type:      typeError,
		Error:     ErrorDetail{Type: e.Code, Message: e.Message, Detail: e.Detail},
		RequestID: w.requestID,
	}
	// A path conflict always names what blocks it ("" when unknown); a
	// create's failed not_exists precondition names it too.
	if e.Code == memstore.EPathConflict || e.ConflictingMemoryID != "" {
		id, path := e.ConflictingMemoryID, e.ConflictingPath
		body.Error.ConflictingMemoryID, body.Error.ConflictingPath = &id, &path
	}
	s.writeJSON(w, status, body)
}

// invalid is an EInvalid error: a 400 invalid_request_error.
func invalid(format string, args ...any) error {
	return memstore.Errorf(memstore.EInvalid, format, args...)
}
