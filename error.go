package memstore

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Error codes, named after the API's error types so that a code travels
// unchanged from the core or a backend to the wire, where each answers
// with the HTTP status noted beside it (docs/api.md, Status codes).
const (
	EInvalid            = "invalid_request_error"            // malformed input, a broken rule or a quota reached (400)
	EUnauthenticated    = "authentication_error"             // missing, unknown, revoked or expired credential (401)
	EPermission         = "permission_error"                 // the caller may not do this: a session token beyond its session, a user beyond their role (403)
	ENotFound           = "not_found_error"                  // no such record in the caller's workspace (404)
	EConflict           = "conflict_error"                   // an archived store or session, a name taken, or transient contention (409)
	EPathConflict       = "memory_path_conflict_error"       // path taken, or overlapping a memory (409)
	EPreconditionFailed = "memory_precondition_failed_error" // content_sha256 mismatch (409)
	ERateLimited        = "rate_limit_error"                 // over a rate, such as searches per second (429)
	EInternal           = "api_error"                        // anything else (500)
	EOverloaded         = "overloaded_error"                 // the server is too busy for now; retry (503, 529 on the API)
)

// Error is memstore's error: a code for programs, a message for people.
// Domain code returns it for every expected failure; any other error is an
// internal one, reported to clients as EInternal with a generic message.
type Error struct {
	Code    string
	Message string
	// ConflictingMemoryID and ConflictingPath describe the memory that
	// blocks a path (EPathConflict only).
	ConflictingMemoryID string
	ConflictingPath     string
	// Retry says that the same request may succeed later (transient
	// contention, or a rate or share that frees up), so that clients are
	// told to retry.
	Retry bool
	// RetryAfter is how long to wait before the same request may succeed
	// (ERateLimited); 0 when unknown.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// RetrySeconds is a wait in whole seconds, rounded up and at least one:
// what a refusal over a rate sends as Retry-After and says in its
// message (WaitAndRetry), so that the two agree.
func RetrySeconds(wait time.Duration) int {
	return max(int(math.Ceil(wait.Seconds())), 1)
}

// WaitAndRetry is how a refusal over a rate says how long to wait, the
// same for every rate: "wait 5 seconds and try again".
func WaitAndRetry(wait time.Duration) string {
	n := RetrySeconds(wait)
	if n == 1 {
		return "wait 1 second and try again"
	}
	return fmt.Sprintf("wait %d seconds and try again", n)
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: its *Error's, EInternal for any other
// error, "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of err's *Error, or a generic message
// for an internal error, which must not reach clients as it may name
// internals.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	}
	return "internal server error"
}

// ErrArchived is the error for a write to the memories of an archived
// store, the same wherever it is found.
func ErrArchived(storeID string) *Error {
	return Errorf(EConflict, "memory store %s is archived; its memories are read-only", storeID)
}
