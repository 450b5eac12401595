package memstore

import (
	"context"
	"time"
)

// A Memory is one text document in a store, addressed by path. Its ID is
// stable across renames; every change is a Version.
type Memory struct {
	ID      string // mem_...
	StoreID string
	Path    string // see ValidatePath
	// Content is the exact text, byte for byte. Lists fill it only when
	// asked to (ListFull).
	Content       string
	ContentSHA256 string // lowercase hex SHA-256 of Content's bytes
	ContentSize   int64  // len(Content)
	// VersionID is the version holding the current content and path.
	VersionID string
	CreatedAt time.Time
	UpdatedAt time.Time // the CreatedAt of version VersionID
}

// MemoryCreate is a new memory.
type MemoryCreate struct {
	Path    string
	Content string
	// IfNotExists reports an occupied path as EPreconditionFailed instead
	// of EPathConflict (the seed API's {"type": "not_exists"}).
	IfNotExists bool
	// Upsert replaces the content of a memory that already has exactly
	// this path (a "modified" version) instead of failing. An overlapping
	// path is still EPathConflict.
	Upsert bool
}

// MemoryUpdate changes a memory; nil fields are left as they are.
type MemoryUpdate struct {
	Content *string
	Path    *string
	// IfSHA256, when set, applies the update only if the memory's current
	// content has this hash (EPreconditionFailed otherwise), unless the
	// update would change nothing, which always succeeds.
	IfSHA256 string
	// RenameIfFree turns a rename onto an occupied path into a no-op that
	// succeeds (the seed API's {"type": "not_exists"} on update).
	RenameIfFree bool
}

// MemoryFilter selects memories for a list, by path in byte order.
type MemoryFilter struct {
	// PathPrefix limits the list to memories below it. Ending with "/",
	// it matches whole segments ("/notes/" does not match "/notes-old/a");
	// "" or "/" is the whole store. Without the final "/" it is a plain
	// string prefix, as in the API's first public beta ("/no" matches
	// "/notes/a" and "/now.md"), and Depth counts from its last "/".
	PathPrefix string
	// Depth 0 lists every memory below the prefix. Depth N > 0 lists those
	// at most N segments below it and rolls deeper ones up into one Prefix
	// item per distinct first N segments.
	Depth int
	// Full fills in Content.
	Full  bool
	Limit int    // page size: 1-100, at most 20 when Full
	Page  string // cursor from a previous page's Next
}

// A ListItem is a memory or, in a list with a depth, a prefix standing for
// the memories below it.
type ListItem struct {
	Memory *Memory
	Prefix string // ends with "/"; set when Memory is nil
}

// MemoryService keeps the memories of stores. Every method works inside
// the caller's workspace and one store: a memory of another store does not
// exist for it (ENotFound). A session caller reaches only the stores
// attached to its session, and changes only those attached read-write
// (EPermission otherwise, whether or not the store exists). Each change
// writes one version, attributed to the caller's actor.
type MemoryService interface {
	// CreateMemory validates mc (EInvalid) and creates a memory with a
	// "created" version. ENotFound: no such store. EConflict: the store is
	// archived. EPathConflict: the path, an ancestor or a descendant is
	// taken. EInvalid: the store is at its memory limit.
	CreateMemory(ctx context.Context, c *Caller, storeID string, mc MemoryCreate) (*Memory, error)
	// Memory returns a memory with its content (ENotFound).
	Memory(ctx context.Context, c *Caller, storeID, id string) (*Memory, error)
	// Memories lists memories and prefixes (EInvalid, ENotFound).
	Memories(ctx context.Context, c *Caller, storeID string, f MemoryFilter) (Page[ListItem], error)
	// UpdateMemory changes content, path or both with a "modified"
	// version. An update that would change nothing returns the memory
	// unchanged, with no version. Errors, in this order: EInvalid,
	// ENotFound, EConflict (archived), EPreconditionFailed, EPathConflict.
	UpdateMemory(ctx context.Context, c *Caller, storeID, id string, u MemoryUpdate) (*Memory, error)
	// DeleteMemory deletes a memory with a "deleted" version, if its
	// content has hash ifSHA256 when that is not "" (EPreconditionFailed).
	// Allowed on archived stores (ENotFound).
	DeleteMemory(ctx context.Context, c *Caller, storeID, id, ifSHA256 string) error
}

// MemoryStorage is how a backend keeps memories. It is trusted: only a
// Core calls it, once the caller may and the input is valid (see Core).
// Memory and Memories do what the MemoryService methods of the same name
// do, inside the workspace workspaceID. The writes are the Core's rules
// (createMemory, updateMemory and deleteMemory) run over WriteMemory.
type MemoryStorage interface {
	Memory(ctx context.Context, workspaceID, storeID, id string) (*Memory, error)
	Memories(ctx context.Context, workspaceID, storeID string, f MemoryFilter) (Page[ListItem], error)
	// WriteMemory runs fn in one write transaction over the memories of
	// store storeID, first refusing a store the workspace does not have
	// (ENotFound) without calling fn. fn may run more than once, each
	// time in a new transaction, and only its last run counts. When fn
	// returns a *Error before its first Put or Delete, the transaction
	// changes nothing and WriteMemory returns that error; any other
	// error from fn undoes all of fn's changes. When WriteMemory returns
	// nil, fn's changes are durable.
	WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(MemoryTx) error) error
}

// A MemoryRevalidator is a MemoryService that can tell cheaply whether a
// memory is still at a version its caller holds, the way an HTTP cache
// revalidates: a server keeps the answers it encoded and sends one again
// without reading the content.
type MemoryRevalidator interface {
	// MemoryUnlessAt returns the memory as Memory does, or nil and no
	// error when its current version is version. The errors are those of
	// Memory.
	MemoryUnlessAt(ctx context.Context, c *Caller, storeID, id, version string) (*Memory, error)
}

// A MemoryRevalidatorStorage is a MemoryStorage that revalidates cheaply:
// MemoryRevalidator as a backend keeps it, trusted as MemoryStorage is.
type MemoryRevalidatorStorage interface {
	MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*Memory, error)
}

// FindMemory returns the live memory at path in a store, without its
// content (ENotFound when there is none). The API has no lookup by path;
// a list whose prefix is the path itself, without a final "/", is a plain
// string prefix, in which the path sorts first if it exists: one request
// of one item, however large the store.
func FindMemory(ctx context.Context, ms MemoryService, c *Caller, storeID, path string) (*Memory, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	page, err := ms.Memories(ctx, c, storeID, MemoryFilter{PathPrefix: path, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 || page.Items[0].Memory == nil || page.Items[0].Memory.Path != path {
		return nil, Errorf(ENotFound, "no memory at %s in store %s", path, storeID)
	}
	return page.Items[0].Memory, nil
}
