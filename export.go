package memstore

import (
	"context"
	"time"
)

// An export is a whole store's live memories in one request: what a
// client that mounts a store (Claude Code's team memory, memdir sync)
// reads first, instead of a list and one read per memory. It is one
// snapshot: one read transaction of the backend, which the export holds
// while its client reads. A read transaction held long has a cost (under
// SQLite's WAL, checkpoints cannot pass it and the log grows; on
// PostgreSQL, vacuum cannot remove what changed after its snapshot), so
// an export is bounded in time (ExportHold) and in number
// (MaxExportsAtOnce, MaxExportsPerWorkspace), and the HTTP API lets go a
// client that stops reading (each write of the stream is bounded).

// The bounds of exports (docs/security.md, Limits).
const (
	// ExportHold is the longest an export holds its snapshot: past it,
	// the export ends unfinished (its client sees no end of stream and
	// reads memory by memory instead). It bounds how long a client that
	// reads slowly keeps a read transaction open.
	ExportHold = 2 * time.Minute
	// MaxExportsAtOnce bounds the exports in progress in one server,
	// each holding a read connection of the backend, so that the
	// others' reads keep connections to run on (SQLite reads through a
	// pool of four).
	MaxExportsAtOnce = 2
	// MaxExportsPerWorkspace is a workspace's share of them, so that
	// another workspace can always start one.
	MaxExportsPerWorkspace = 1
	// ExportWait is how long an export waits for a place before it is
	// refused (ERateLimited).
	ExportWait = 10 * time.Second
)

// ExportSink takes an export: the store first, then each live memory,
// by path in byte order. Its error ends the export with that error.
type ExportSink interface {
	Store(*Store) error
	// Memory takes a memory, with its Content when the export asked for
	// it, without otherwise (its ContentSHA256 and ContentSize are set).
	Memory(*Memory) error
}

// ExportFunc is an ExportSink that takes each memory with a function,
// and the store with nothing.
type ExportFunc func(*Memory) error

// Store implements ExportSink.
func (ExportFunc) Store(*Store) error { return nil }

// Memory implements ExportSink.
func (f ExportFunc) Memory(m *Memory) error { return f(m) }

// ExportService streams a store's memories in one snapshot.
type ExportService interface {
	// ExportMemories hands sink the store storeID and every live memory
	// of it, with their content when content is set, all as of one
	// moment. The caller may do it when it may list the store's memories
	// (CanRead: a session token of a store attached read-only may).
	// ENotFound: no such store. ERateLimited: too many exports in
	// progress. An export that outlives ExportHold fails with the
	// context's deadline error.
	ExportMemories(ctx context.Context, c *Caller, storeID string, content bool, sink ExportSink) error
}

// ExportStorage is how a backend exports a store, trusted as
// MemoryStorage is.
type ExportStorage interface {
	// ExportMemories reads store storeID of workspace workspaceID
	// (ENotFound when the workspace has no such store) and its live
	// memories in one read transaction, handing each to sink as it is
	// read, never holding more than one at a time, and ends the
	// transaction when ctx is done. It never runs sink twice for the
	// same memory: a transaction that must be run again fails instead.
	ExportMemories(ctx context.Context, workspaceID, storeID string, content bool, sink ExportSink) error
}

// ExportMemories implements ExportService.
func (co *Core) ExportMemories(ctx context.Context, c *Caller, storeID string, content bool, sink ExportSink) error {
	if err := c.CanRead(storeID); err != nil {
		return err
	}
	if err := ValidateID("memory_store_id", storeID); err != nil {
		return err
	}
	release, err := co.exports.take(ctx, c.WorkspaceID)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, co.exports.hold)
	defer cancel()
	return co.b.ExportMemories(ctx, c.WorkspaceID, storeID, content, sink)
}

// exportPlaces are the places of exports in progress: MaxExportsAtOnce,
// MaxExportsPerWorkspace of them a workspace's.
type exportPlaces struct {
	places
	hold, wait time.Duration // ExportHold and ExportWait, but in tests
}

// take waits up to ExportWait for a place for an export of workspace ws
// and returns its release.
func (p *exportPlaces) take(ctx context.Context, ws string) (release func(), err error) {
	wctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	release, err = p.places.take(wctx, ws)
	if err == nil || ctx.Err() != nil {
		return release, err
	}
	e := Errorf(ERateLimited, "too many exports in progress (at most %d at once, %d per workspace); %s, or list the memories page by page",
		MaxExportsAtOnce, MaxExportsPerWorkspace, WaitAndRetry(p.wait))
	e.Retry, e.RetryAfter = true, p.wait
	return nil, e
}
