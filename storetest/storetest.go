// Package storetest is the behavioural conformance suite that every
// memstore backend must pass: the contract of memstore.StoreStorage,
// MemoryService and VersionService (spec/memory-stores-api.md sections 2-4)
// checked through the interfaces only, so that SQLite and PostgreSQL are
// held to exactly the same rules.
//
// The suite knows nothing about a backend's IDs or cursors beyond their
// documented prefixes (memstore_, mem_, memver_): IDs and cursors are
// opaque strings. It does not assume a clock resolution either; it only
// relies on later writes having a CreatedAt not before earlier ones, and
// compares timestamps with time.Time.Equal.
//
// A backend's test calls Run with a function that opens a fresh, empty
// backend (with no memory limit), and RunLimits with one that opens a
// backend with a given limit of memories per store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Backend { return MustOpen(t) })
//	}
package storetest

import (
	"testing"

	"github.com/memstore/memstore"
)

// Backend is what a memstore backend provides.
type Backend interface {
	memstore.StoreStorage
	memstore.MemoryStorage
	memstore.VersionStorage
}

// Run runs the suite. open returns a fresh, empty backend for each
// subtest, with no limit on the memories per store (MaxMemoriesPerStore =
// 0); RunLimits covers the limit.
func Run(t *testing.T, open func(t *testing.T) Backend) {
	t.Run("Stores", func(t *testing.T) { testStores(t, open) })
	t.Run("Isolation", func(t *testing.T) { testIsolation(t, open) })
	t.Run("CreateMemory", func(t *testing.T) { testCreateMemory(t, open) })
	t.Run("GetMemory", func(t *testing.T) { testGetMemory(t, open) })
	t.Run("ListMemories", func(t *testing.T) { testListMemories(t, open) })
	t.Run("UpdateMemory", func(t *testing.T) { testUpdateMemory(t, open) })
	t.Run("DeleteMemory", func(t *testing.T) { testDeleteMemory(t, open) })
	t.Run("ArchivedStore", func(t *testing.T) { testArchivedStore(t, open) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, open) })
	t.Run("Redact", func(t *testing.T) { testRedact(t, open) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, open) })
}

// RunLimits runs the tests of the limit on memories per store.
// openWithLimit returns a fresh, empty backend that holds at most
// maxMemoriesPerStore live memories in each store.
func RunLimits(t *testing.T, openWithLimit func(t *testing.T, maxMemoriesPerStore int) Backend) {
	t.Run("MemoryLimit", func(t *testing.T) { testMemoryLimit(t, openWithLimit) })
}
