package memstore

import (
	"context"
	"time"
)

// Operation is what a version records.
type Operation string

// The operations.
const (
	OpCreated  Operation = "created"
	OpModified Operation = "modified"
	OpDeleted  Operation = "deleted"
)

// Operations lists the operations.
var Operations = []Operation{OpCreated, OpModified, OpDeleted}

// A Version is an immutable record of one change to a memory. Redaction is
// the only change a version ever undergoes: it erases the path and content
// for good.
type Version struct {
	ID        string // memver_...
	StoreID   string
	MemoryID  string // still valid after the memory is deleted
	Operation Operation
	// Path is the memory's path as of this change; "" once redacted.
	Path string
	// Content, ContentSHA256 and ContentSize are the memory's content after
	// this change. HasContent is false for a deletion and once redacted.
	Content       string
	ContentSHA256 string
	ContentSize   int64
	HasContent    bool
	CreatedAt     time.Time
	CreatedBy     Actor
	RedactedAt    *time.Time
	RedactedBy    *Actor
}

// NewVersion is the version, with the ID and time (as stored) a backend
// gives it, that records operation op by an actor on memory m, in its
// new state: a deletion keeps the path, not the content.
func NewVersion(id string, m *Memory, op Operation, by Actor, now time.Time) *Version {
	return &Version{
		ID: id, StoreID: m.StoreID, MemoryID: m.ID, Operation: op,
		Path: m.Path, Content: m.Content, ContentSHA256: m.ContentSHA256, ContentSize: m.ContentSize,
		HasContent: op != OpDeleted, CreatedAt: now, CreatedBy: by,
	}
}

// Redacted reports whether the version was redacted.
func (v *Version) Redacted() bool { return v.RedactedAt != nil }

// Redact makes v what a redaction at time at (as stored) by an actor
// leaves of it: no path, no content (nor its hash and size), and who
// redacted it when.
func (v *Version) Redact(at time.Time, by Actor) {
	v.Path, v.Content, v.ContentSHA256, v.ContentSize, v.HasContent = "", "", "", 0, false
	v.RedactedAt, v.RedactedBy = &at, &by
}

// VersionFilter selects versions for a list, newest first. Set fields AND
// together.
type VersionFilter struct {
	MemoryID         string
	Operation        Operation
	SessionID        string
	APIKeyID         string
	ServiceAccountID string
	CreatedAtGTE     *time.Time
	CreatedAtLTE     *time.Time
	Full             bool   // fill in Content
	Limit            int    // 1-100, at most 20 when Full
	Page             string // cursor from a previous page's Next
}

// VersionService reads and redacts versions, inside the caller's
// workspace and one store (ENotFound for another store's). A session
// caller reads the versions of its attached stores only, and never
// redacts (EPermission).
type VersionService interface {
	// Versions lists versions newest first (EInvalid, ENotFound).
	Versions(ctx context.Context, c *Caller, storeID string, f VersionFilter) (Page[Version], error)
	// Version returns one version with its content (ENotFound).
	Version(ctx context.Context, c *Caller, storeID, id string) (*Version, error)
	// RedactVersion erases a version's path and content for good, from
	// every index too, recording the caller's actor as the redactor.
	// Redacting again changes nothing (ENotFound).
	RedactVersion(ctx context.Context, c *Caller, storeID, id string) (*Version, error)
}

// VersionStorage is VersionService as a backend keeps it: each method
// does what the VersionService method of the same name does, inside the
// workspace workspaceID. It is trusted: only a Core calls it, once the
// caller may (see Core).
type VersionStorage interface {
	Versions(ctx context.Context, workspaceID, storeID string, f VersionFilter) (Page[Version], error)
	Version(ctx context.Context, workspaceID, storeID, id string) (*Version, error)
	RedactVersion(ctx context.Context, workspaceID, storeID, id string, by Actor) (*Version, error)
}
