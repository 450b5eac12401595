// Package storetest is the behavioural conformance suite of memstore's
// two contracts: memstore.Database, which every backend implements, and
// memstore.Services, which a memstore.Core over a database and a remote
// core (httpapi.Client) implement. It checks them through the
// caller-facing services wherever it can, so that every backend and
// every remote core is held to exactly the same rules (docs/api.md).
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
// A backend's test calls RunAll once, with a function that opens a fresh,
// empty database:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunAll(t, storetest.Target{
//			Database: func(t *testing.T, now func() time.Time) memstore.Database {
//				return MustOpen(t, Options{Now: now})
//			},
//			RolledBack: failAfterWebhookEvents,
//		})
//	}
package storetest

import (
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// Services are what the suite calls: the caller-facing services, and
// the keys of the database behind them, with which it makes workspaces
// and API keys.
type Services interface {
	memstore.Services
	memstore.KeyService
}

// A Target is what RunAll holds to the contracts: a database, or services
// that stand for a core over one.
type Target struct {
	// Database opens a fresh, empty database whose clock is now (the real
	// clock when nil). RunAll calls a memstore.Core over it, and the
	// storage that works beside the core (keys, users, webhooks and their
	// deliveries) directly.
	Database func(t *testing.T, now func() time.Time) memstore.Database
	// RolledBack fails a change of a database that Database opened
	// (see RolledBack); required with Database.
	RolledBack RolledBack
	// Services, when set, opens what RunAll calls in place of a core over
	// Database: fresh, empty services whose core has limits l and whose
	// clock is now (the real clock when nil), which stamps and expires
	// what they make and refills the shares of searches. A client of a
	// server sets it and no Database: it keeps no storage of its own, so
	// the tests of storage are skipped.
	Services func(t *testing.T, l memstore.Limits, now func() time.Time) Services
	// Admin, when set, opens fresh, empty services and the Admin that
	// manages the same workspaces, in place of a core over Database and
	// memstore's Keys, Users and Webhooks over it.
	Admin func(t *testing.T) (Services, Admin)
	// Semantic, when set, opens fresh, empty services whose core embeds
	// the queries of semantic and hybrid search with e, and the storage
	// of their vectors, whose queue the suite embeds with e. With
	// Database, RunAll opens them over a database itself; a target with
	// neither skips the tests of the search modes.
	Semantic func(t *testing.T, e memstore.Embedder) (Services, memstore.VectorStorage)
}

// What a target cannot do, it says by implementing the interface that
// names it: the suite then leaves out what depends on it.

// StoreTotalsOmitted is implemented by Services whose stores do not
// report their count and content size (memstore.Store's MemoryCount and
// ContentSize), as a client of the HTTP API, whose store object has
// neither: the suite checks them on every other target.
type StoreTotalsOmitted interface{ StoreTotalsOmitted() }

// KeySearchesOneStore is implemented by Services that search several
// stores at once only as a session, as a client of the HTTP API, whose
// one search of several stores is a session's: the suite has an API key
// search several stores on every other target.
type KeySearchesOneStore interface{ KeySearchesOneStore() }

// RunAll runs the whole suite on tg, each part as a subtest.
func RunAll(t *testing.T, tg Target) {
	open := tg.Services
	if open == nil {
		open = func(t *testing.T, l memstore.Limits, now func() time.Time) Services {
			db := tg.Database(t, now)
			var opts []memstore.CoreOption
			if l != (memstore.Limits{}) {
				opts = append(opts, memstore.WithLimits(l))
			}
			if now != nil {
				opts = append(opts, memstore.CoreClock(now))
			}
			opts = append(opts, memstore.WithDreams(true))
			return memstore.NewCore(db, opts...)
		}
	}
	fresh := func(t *testing.T) Services { return open(t, memstore.Limits{}, nil) }
	t.Run("Memories", func(t *testing.T) { runMemories(t, fresh) })
	t.Run("Limits", func(t *testing.T) {
		runLimits(t, func(t *testing.T, n int) Services { return open(t, memstore.Limits{MemoriesPerStore: n}, nil) })
	})
	t.Run("Search", func(t *testing.T) { runSearch(t, fresh) })
	t.Run("SearchModes", func(t *testing.T) {
		semantic := tg.Semantic
		if semantic == nil && tg.Database != nil {
			semantic = func(t *testing.T, e memstore.Embedder) (Services, memstore.VectorStorage) {
				db := tg.Database(t, nil)
				vs, ok := db.(memstore.VectorStorage)
				if !ok {
					t.Skip("the database keeps no vectors")
				}
				return memstore.NewCore(db, memstore.WithEmbedder(e)), vs
			}
		}
		if semantic == nil {
			t.Skip("the target has no semantic search")
		}
		runSearchModes(t, semantic)
	})
	t.Run("Feed", func(t *testing.T) { runFeed(t, fresh) })
	t.Run("Sessions", func(t *testing.T) {
		runSessions(t, func(t *testing.T, now func() time.Time) Services { return open(t, memstore.Limits{}, now) })
	})
	t.Run("SessionEvents", func(t *testing.T) {
		runSessionEvents(t, func(t *testing.T, now func() time.Time) Services {
			return open(t, memstore.Limits{EventsPerSession: eventsLimit, EventBytesPerSession: eventBytesLimit}, now)
		})
	})
	t.Run("SessionEventPageBytes", func(t *testing.T) { testTranscriptPageBytes(t, fresh(t)) })
	t.Run("Isolation", func(t *testing.T) { runIsolation(t, fresh) })
	t.Run("Export", func(t *testing.T) { runExport(t, fresh) })
	t.Run("Quotas", func(t *testing.T) { runQuotas(t, open) })
	t.Run("Dreams", func(t *testing.T) { runDreams(t, fresh) })
	t.Run("Admin", func(t *testing.T) {
		admin := tg.Admin
		if admin == nil && tg.Database != nil {
			admin = func(t *testing.T) (Services, Admin) { return adminOf(tg.Database(t, nil)) }
		}
		if admin == nil {
			t.Skip("the target has no administration services")
		}
		runAdmin(t, admin)
	})

	// The storage beside the core, called directly.
	storage := func(name string, run func(t *testing.T, open func(t *testing.T) memstore.Database)) {
		t.Run(name, func(t *testing.T) {
			if tg.Database == nil {
				t.Skip("the target keeps no storage of its own")
			}
			run(t, func(t *testing.T) memstore.Database { return tg.Database(t, nil) })
		})
	}
	storage("Keys", func(t *testing.T, open func(t *testing.T) memstore.Database) {
		runKeys(t, func(t *testing.T) memstore.KeyService { return memstore.NewCore(open(t)) })
	})
	storage("ExportFlatMemory", func(t *testing.T, open func(t *testing.T) memstore.Database) { testExportFlat(t, open(t)) })
	t.Run("Overview", func(t *testing.T) {
		if tg.Database == nil {
			t.Skip("the target keeps no storage of its own")
		}
		testOverview(t, tg.Database)
	})
	t.Run("DreamReview", func(t *testing.T) {
		if tg.Database == nil {
			t.Skip("the target keeps no storage of its own")
		}
		testDreamReview(t, tg.Database)
	})
	t.Run("DreamRunner", func(t *testing.T) {
		if tg.Database == nil {
			t.Skip("the target keeps no storage of its own")
		}
		runDreamRunner(t, tg.Database)
	})
	storage("Users", runUsers)
	storage("Webhooks", runWebhooks)
	storage("WebhookDeliveries", func(t *testing.T, open func(t *testing.T) memstore.Database) {
		runWebhookDeliveries(t, open, tg.RolledBack)
	})
}

// runMemories runs the tests of stores, memories and versions. open
// returns fresh, empty services for each subtest, with no limit on the
// memories per store; runLimits covers the limit.
func runMemories(t *testing.T, open func(t *testing.T) Services) {
	o := func(t *testing.T) backend { return viewOf(open(t)) }
	t.Run("Stores", func(t *testing.T) { testStores(t, o) })
	t.Run("Isolation", func(t *testing.T) { testIsolation(t, o) })
	t.Run("CreateMemory", func(t *testing.T) { testCreateMemory(t, o) })
	t.Run("GetMemory", func(t *testing.T) { testGetMemory(t, o) })
	t.Run("ListMemories", func(t *testing.T) { testListMemories(t, o) })
	t.Run("UpdateMemory", func(t *testing.T) { testUpdateMemory(t, o) })
	t.Run("DeleteMemory", func(t *testing.T) { testDeleteMemory(t, o) })
	t.Run("ArchivedStore", func(t *testing.T) { testArchivedStore(t, o) })
	t.Run("HostedLimits", func(t *testing.T) { testHostedLimits(t, o) })
	t.Run("ContentRules", func(t *testing.T) { testContentRules(t, o) })
	t.Run("NotExistsConflict", func(t *testing.T) { testNotExistsConflict(t, o) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, o) })
	t.Run("Redact", func(t *testing.T) { testRedact(t, o) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, o) })
}

// runLimits runs the tests of the limit on memories per store.
// openWithLimit returns fresh, empty services that hold at most
// maxMemoriesPerStore live memories in each store.
func runLimits(t *testing.T, openWithLimit func(t *testing.T, maxMemoriesPerStore int) Services) {
	o := func(t *testing.T, n int) backend { return viewOf(openWithLimit(t, n)) }
	t.Run("MemoryLimit", func(t *testing.T) { testMemoryLimit(t, o) })
	t.Run("HostedMemoryLimit", func(t *testing.T) { testHostedMemoryLimit(t, o) })
	t.Run("MemoryCount", func(t *testing.T) { testMemoryCount(t, o) })
}
