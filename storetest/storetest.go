// Package storetest is the behavioural conformance suite that every
// memstore backend must pass: the contract of memstore.StoreService,
// MemoryService, VersionService, SessionService and SearchService
// (docs/api.md) checked through the caller-facing interfaces only, so that
// every backend (behind a memstore.Core) and every remote core
// (httpapi.Client) is held to exactly the same rules.
//
// The suite knows nothing about a backend's IDs or cursors beyond their
// documented prefixes (memstore_, mem_, memver_): IDs and cursors are
// opaque strings. It does not assume a clock resolution either; it only
// relies on later writes having a CreatedAt not before earlier ones, and
// compares timestamps with time.Time.Equal. It calls as API keys of
// workspaces and actors of its own (see memstore.Caller), which a backend
// treats as opaque, and as the session callers its sessions' tokens
// authenticate.
//
// A backend's test calls Run with a function that opens a fresh, empty
// backend behind a core, and RunLimits with one whose core has a given
// limit of memories per store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Backend { return memstore.NewCore(MustOpen(t)) })
//		storetest.RunLimits(t, func(t *testing.T, n int) storetest.Backend {
//			return memstore.NewCore(MustOpen(t), memstore.MaxMemoriesPerStore(n))
//		})
//	}
package storetest

import (
	"testing"

	"github.com/memstore/memstore"
)

// Backend is what Run needs: the caller-facing services of stores,
// memories and versions.
type Backend interface {
	memstore.StoreService
	memstore.MemoryService
	memstore.VersionService
}

// StoreTotalsOmitted is implemented by a Backend whose stores do not
// report their count and content size (memstore.Store's MemoryCount and
// ContentSize), as a client of the HTTP API, whose store object has
// neither: the suite checks them on every other backend.
type StoreTotalsOmitted interface{ StoreTotalsOmitted() }

// Run runs the suite. open returns a fresh, empty backend for each
// subtest, with no limit on the memories per store; RunLimits covers the
// limit.
func Run(t *testing.T, open func(t *testing.T) Backend) {
	o := func(t *testing.T) backend { return viewOf(open(t)) }
	t.Run("Stores", func(t *testing.T) { testStores(t, o) })
	t.Run("Isolation", func(t *testing.T) { testIsolation(t, o) })
	t.Run("CreateMemory", func(t *testing.T) { testCreateMemory(t, o) })
	t.Run("GetMemory", func(t *testing.T) { testGetMemory(t, o) })
	t.Run("ListMemories", func(t *testing.T) { testListMemories(t, o) })
	t.Run("UpdateMemory", func(t *testing.T) { testUpdateMemory(t, o) })
	t.Run("DeleteMemory", func(t *testing.T) { testDeleteMemory(t, o) })
	t.Run("ArchivedStore", func(t *testing.T) { testArchivedStore(t, o) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, o) })
	t.Run("Redact", func(t *testing.T) { testRedact(t, o) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, o) })
}

// RunLimits runs the tests of the limit on memories per store.
// openWithLimit returns a fresh, empty backend that holds at most
// maxMemoriesPerStore live memories in each store.
func RunLimits(t *testing.T, openWithLimit func(t *testing.T, maxMemoriesPerStore int) Backend) {
	o := func(t *testing.T, n int) backend { return viewOf(openWithLimit(t, n)) }
	t.Run("MemoryLimit", func(t *testing.T) { testMemoryLimit(t, o) })
	t.Run("MemoryCount", func(t *testing.T) { testMemoryCount(t, o) })
}
