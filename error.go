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
	EConflict           = "conflict_error"                   // an archived session, a name taken, or transient contention (409)
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
	// Detail is memstore's own account of the refusal, where Message is
	// the hosted API's fixed wording that clients match word for word
	// (hosted.go): what exactly was over which limit. "" when Message says
	// it all.
	Detail string
	// ConflictingMemoryID and ConflictingPath describe the memory that
	// blocks a path (EPathConflict, and EPreconditionFailed of a create
	// whose path is taken).
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

// Error is the message, followed by the detail when there is one, for
// people and agents, who read both.
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Message
	}
	return e.Message + " (" + e.Detail + ")"
}

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
		return e.Error()
	}
	return "internal server error"
}

// ErrArchived is the error for a write to the memories of an archived
// store (a create, an update or a delete), the same wherever it is found:
// the hosted API's 400 (ArchivedMessage), never a 409, which clients read
// as a concurrent change to merge.
func ErrArchived(storeID string) *Error {
	return Errorf(EInvalid, "%s: memory store %s is archived; its memories are read-only", ArchivedMessage, storeID)
}

// ErrStoreArchived is the error for an update of an archived store.
func ErrStoreArchived(storeID string) *Error {
	return Errorf(EInvalid, "%s: memory store %s is archived and cannot be updated", ArchivedMessage, storeID)
}

// The refusals that every backend makes in the same words: a record
// that is not there, a name that is taken, a write that lost a race.
// The records of the API are "not found" by ID, as the hosted API says;
// those an operator or the console looks up by ID or name are quoted.

// ErrStoreNotFound is the refusal of a memory store that is not in the
// workspace.
func ErrStoreNotFound(id string) *Error {
	return Errorf(ENotFound, "memory store %s not found", id)
}

// ErrMemoryNotFound is the refusal of a memory that is not in the store.
func ErrMemoryNotFound(id string) *Error { return Errorf(ENotFound, "memory %s not found", id) }

// ErrVersionNotFound is the refusal of a version that is not in the
// store.
func ErrVersionNotFound(id string) *Error {
	return Errorf(ENotFound, "memory version %s not found", id)
}

// ErrSessionNotFound is the refusal of a session that is not in the
// workspace.
func ErrSessionNotFound(id string) *Error { return Errorf(ENotFound, "session %s not found", id) }

// ErrTokenNotFound is the refusal of a session token that is not the
// session's.
func ErrTokenNotFound(id string) *Error {
	return Errorf(ENotFound, "session token %s not found", id)
}

// ErrNoWorkspace is the refusal of a workspace ID or name that names
// none.
func ErrNoWorkspace(idOrName string) *Error { return Errorf(ENotFound, "no workspace %q", idOrName) }

// ErrNoAPIKey is the refusal of an API key ID that names none.
func ErrNoAPIKey(id string) *Error { return Errorf(ENotFound, "no API key %q", id) }

// ErrUnknownSecret is storage's answer to a secret that no credential of
// a kind ("API key", "session token") has; Authenticate turns it into
// the caller's refusal.
func ErrUnknownSecret(kind string) *Error { return Errorf(ENotFound, "no %s has this secret", kind) }

// ErrNoUser is the refusal of a user ID or name that names none of the
// workspace's users.
func ErrNoUser(idOrName string) *Error {
	return Errorf(ENotFound, "no user %q in this workspace", idOrName)
}

// ErrNoSignIn is the refusal of a console sign-in that is not kept.
func ErrNoSignIn() *Error { return Errorf(ENotFound, "no such sign-in") }

// ErrNoWebhook is the refusal of a webhook endpoint ID that names none
// of the workspace's endpoints.
func ErrNoWebhook(id string) *Error {
	return Errorf(ENotFound, "no webhook endpoint %q in this workspace", id)
}

// ErrWorkspaceExists is the refusal of a workspace name that is taken.
func ErrWorkspaceExists(name string) *Error {
	return Errorf(EConflict, "a workspace named %q already exists", name)
}

// ErrUserExists is the refusal of a user name that is taken in the
// workspace.
func ErrUserExists(name string) *Error {
	return Errorf(EConflict, "a user named %q already exists in this workspace", name)
}

// ErrPathTaken is the refusal of a write whose path a concurrent write
// took first, which it did not see: the client is told to retry, and
// then meets the memory that holds the path.
func ErrPathTaken() *Error {
	return &Error{Code: EPathConflict, Message: "the path was taken by a concurrent write; retry", Retry: true}
}

// ErrBusy is the refusal of a write that waited too long for the
// database's other writes: the client is told to retry.
func ErrBusy() *Error {
	return &Error{Code: EConflict, Message: "the database is busy; retry", Retry: true}
}
