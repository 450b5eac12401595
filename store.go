package memstore

import (
	"context"
	"maps"
	"time"
)

// A Store is a collection of memories in a workspace. Its name and
// description are shown to the agents it is attached to; its metadata is
// not.
type Store struct {
	ID          string // memstore_...
	WorkspaceID string // wrkspc_...
	Name        string
	Description string            // "" when unset
	Metadata    map[string]string // never nil
	CreatedAt   time.Time
	// UpdatedAt moves on a change of name, description or metadata and on
	// archive, never on a change to the store's memories.
	UpdatedAt  time.Time
	ArchivedAt *time.Time // nil until archived
	// MemoryCount is the count of the store's live memories and
	// ContentSize the sum of their content sizes in bytes. The backend
	// keeps both with every write, so reading them costs the same
	// whatever the store's size.
	MemoryCount int64
	ContentSize int64
}

// StoreCreate is what a new store is made of.
type StoreCreate struct {
	Name        string
	Description string
	Metadata    map[string]string
}

// NewStore is the store that c makes in the workspace, with the ID and
// time (as stored) a backend gives it: its metadata is a copy of c's,
// empty rather than nil.
func NewStore(id, workspaceID string, c StoreCreate, now time.Time) *Store {
	meta := maps.Clone(c.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	return &Store{ID: id, WorkspaceID: workspaceID, Name: c.Name, Description: c.Description, Metadata: meta, CreatedAt: now, UpdatedAt: now}
}

// StoreUpdate changes a store; nil fields are left as they are. Metadata
// is a merge patch: a key mapped to a value sets it, a key mapped to nil
// removes it, keys not mentioned stay.
type StoreUpdate struct {
	Name        *string
	Description *string
	Metadata    map[string]*string
}

// StoreFilter selects stores for a list, newest first.
type StoreFilter struct {
	IncludeArchived bool
	CreatedAtGTE    *time.Time // inclusive bounds
	CreatedAtLTE    *time.Time
	Limit           int    // page size, 1-100
	Page            string // cursor from a previous page's Next
}

// StoreService keeps the stores of the caller's workspace: a store of
// another workspace does not exist for it (ENotFound). Managing stores
// needs an API key: a session caller is refused every method (EPermission).
type StoreService interface {
	// CreateStore validates sc (EInvalid) and creates a store, unless the
	// workspace holds its limit of stores, archived ones included
	// (ErrStoreLimit).
	CreateStore(ctx context.Context, c *Caller, sc StoreCreate) (*Store, error)
	// Store returns a store, archived or not (ENotFound).
	Store(ctx context.Context, c *Caller, id string) (*Store, error)
	// Stores lists stores newest first (EInvalid for a bad filter or cursor).
	Stores(ctx context.Context, c *Caller, f StoreFilter) (Page[Store], error)
	// UpdateStore applies u (EInvalid, ENotFound; EConflict when the store
	// is archived). An update that changes nothing leaves UpdatedAt alone.
	UpdateStore(ctx context.Context, c *Caller, id string, u StoreUpdate) (*Store, error)
	// ArchiveStore archives a store: its memories become read-only and it
	// can no longer be attached. Archiving again changes nothing
	// (ENotFound).
	ArchiveStore(ctx context.Context, c *Caller, id string) (*Store, error)
	// DeleteStore removes a store with all its memories and versions, for
	// good (ENotFound).
	DeleteStore(ctx context.Context, c *Caller, id string) error
}

// StoreStorage is StoreService as a backend keeps it: each method does
// what the StoreService method of the same name does, inside the
// workspace workspaceID. It is trusted: only a Core calls it, once the
// caller may and the input is valid (see Core).
type StoreStorage interface {
	// CreateStore checks q against the workspace's stores, archived ones
	// included, in the transaction of the insert (see Quota).
	CreateStore(ctx context.Context, workspaceID string, sc StoreCreate, q Quota) (*Store, error)
	Store(ctx context.Context, workspaceID, id string) (*Store, error)
	Stores(ctx context.Context, workspaceID string, f StoreFilter) (Page[Store], error)
	// WriteStore runs fn in one transaction over the store id of the
	// workspace (ENotFound before fn runs), whose row stays locked
	// against every other change until it commits: the core decides
	// what UpdateStore and ArchiveStore change, the StoreTx writes it,
	// and it commits once fn returns nil.
	WriteStore(ctx context.Context, workspaceID, id string, fn func(StoreTx) error) error
	DeleteStore(ctx context.Context, workspaceID, id string) error
}

// A StoreTx is the transaction of WriteStore.
type StoreTx interface {
	// Store is the store as the transaction read it.
	Store() *Store
	// Update keeps s's name, description and metadata, and sets
	// s.UpdatedAt to now.
	Update(s *Store) error
	// Archive archives s now, setting its ArchivedAt and UpdatedAt, and
	// adds its store.archived event, by by.
	Archive(s *Store, by Actor) error
}

// Page sizes of every list, as the hosted API has them: a Limit of 0 means
// DefaultPageSize; a page holds at most MaxPageSize items, or
// MaxFullPageSize when they carry content.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxFullPageSize = 20
)

// Page is one page of a list. Next is the cursor for the following page, ""
// on the last; a page with a Next is never empty.
type Page[T any] struct {
	Items []T
	Next  string
}

// PoolStats is the state of a database's connections, for monitoring:
// how many are open, in use and idle, the most that may be open, and how
// often and how long callers have waited for one since the start.
type PoolStats struct {
	Open, InUse, Idle, Max int
	Waits                  int64
	WaitTime               time.Duration
}

// Counts is how much a database holds, for monitoring.
type Counts struct {
	Workspaces int64
	Stores     int64 // archived ones included
	Memories   int64 // live ones
	Versions   int64
	// SearchBacklog counts the writes of memories that the search indexes
	// have not taken in yet (two of one memory count twice), and every
	// memory while the indexes are being built.
	SearchBacklog int64
}
