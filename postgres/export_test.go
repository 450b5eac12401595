package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/vector"
)

// FailAfterWebhookEvents creates, in one transaction, a store of
// workspace workspaceID and an archive event of store storeID, events
// that webhooks may want, and then fails, so that it is rolled back.
func (db *DB) FailAfterWebhookEvents(ctx context.Context, workspaceID, storeID string) error {
	return db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		now := db.stamp()
		if _, err := tx.Exec(ctx, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES ($1, $2, 'rolled back', '', '{}', $3, $3)`,
			db.ids.New(memstore.StoreIDPrefix, now), workspaceID, keyset.Nanos(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertEvent("$1", "$2", "NULL", "''", "''", "$3"), storeID, string(memstore.EventStoreArchived), keyset.Nanos(now)); err != nil {
			return err
		}
		return memstore.Errorf(memstore.EConflict, "failed after its changes")
	})
}

// VectorRowsRead is how many vectors this DB's semantic searches read
// from the database.
func (db *DB) VectorRowsRead() int64 { return db.vectors.rowsRead.Load() }

// SetVectorLogKeep keeps n entries of vector_log, until the returned
// function restores the default.
func SetVectorLogKeep(n int) func() {
	old := vectorLogKeep
	vectorLogKeep = n
	return func() { vectorLogKeep = old }
}

// SetVectorCopyBytes sets the bound of db's copies of stores' vectors.
func (db *DB) SetVectorCopyBytes(n int64) { db.vectors.Limit = n }

// SetVectorCopyShare sets a workspace's share of db's copies of stores'
// vectors.
func (db *DB) SetVectorCopyShare(n int64) { db.vectors.WorkspaceLimit = n }

// VectorCopies is how many copies of stores' vectors db keeps, and each
// one's place in their order of use.
func (db *DB) VectorCopies() (int, map[vector.CopyKey]uint64) {
	return db.vectors.Len(), db.vectors.Uses()
}

// VectorCopyHolds says whether one of db's copies holds a vector of the
// memory.
func (db *DB) VectorCopyHolds(memoryID string) bool { return db.vectors.Holds(memoryID) }

// SweepVectorCopies runs the sweep of db's copies as it would run at now.
func (db *DB) SweepVectorCopies(now time.Time) {
	db.vectors.Sweep(now.Add(-memstore.VectorCopyIdle))
}

// LoadMemories writes memories of the paths and contents into store
// storeID straight into its table, with their search columns as a write
// makes them and IDs growing in their order, a thousand a statement: a
// benchmark's memories, in seconds where writes take minutes. It writes
// no versions or events; the store's count follows, and the table is
// vacuumed and analyzed, as a database that has settled.
func (db *DB) LoadMemories(ctx context.Context, storeID string, paths, contents []string) error {
	const batch = 1000
	for lo := 0; lo < len(paths); lo += batch {
		hi := min(lo+batch, len(paths))
		var ids []string
		for range hi - lo {
			ids = append(ids, db.ids.New(memstore.MemoryIDPrefix, db.stamp()))
		}
		_, err := db.pool.Exec(ctx, `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at)
			SELECT id, $1, path, convert_to(content, 'UTF8'), '', octet_length(content), 'ver_' || id, 0, 0
			FROM unnest($2::text[], $3::text[], $4::text[]) AS l(id, path, content)`,
			storeID, ids, paths[lo:hi], contents[lo:hi])
		if err != nil {
			return err
		}
	}
	_, err := db.pool.Exec(ctx, `UPDATE stores SET memory_count = (SELECT count(*) FROM memories WHERE store_id = $1),
		content_size = (SELECT sum(size) FROM memories WHERE store_id = $1) WHERE id = $1`, storeID)
	if err != nil {
		return err
	}
	// The search data, by the indexer's rounds, as writes get it.
	if err := db.catchUp(ctx, []string{storeID}); err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `VACUUM ANALYZE memories, memory_search, search_postings`)
	return err
}

// PostingRank is postingRank, and SearchRankWeights searchRankWeights.
var (
	PostingRank       = postingRank
	SearchRankWeights = searchRankWeights
)

// QueuedWrites is how many writes of the store wait in this process for
// the one running.
func (db *DB) QueuedWrites(workspaceID, storeID string) int {
	db.storeWrites.mu.Lock()
	defer db.storeWrites.mu.Unlock()
	return len(db.storeWrites.queues[workspaceID+"\x00"+storeID])
}

// IndexQueued runs the search indexer's rounds until the queue is empty.
func (db *DB) IndexQueued(ctx context.Context) error { return db.indexRounds(ctx) }

// StopIndexer stops db's background rounds: what is written stays queued
// until a search of its store, or IndexQueued, indexes it.
func (db *DB) StopIndexer() { db.stopIndexer() }

// StartIndexer starts db's background rounds again after StopIndexer.
func (db *DB) StartIndexer() { db.startIndexer() }

// LookBehind looks, as the background rounds do, for the stores whose
// writes must wait for the search indexer.
func (db *DB) LookBehind(ctx context.Context) error { return db.lookBehind(ctx) }

// SetMaxStoreLag sets maxStoreLag until the returned function restores it.
func SetMaxStoreLag(n int) func() {
	was := maxStoreLag
	maxStoreLag = n
	return func() { maxStoreLag = was }
}

// OnRoundClaimed runs f in each search indexer's round between its reads
// and its writes, until the returned function restores the default.
func OnRoundClaimed(f func()) func() {
	roundClaimed = f
	return func() { roundClaimed = nil }
}

// IndexRound runs one search indexer's round over every store's queue.
func (db *DB) IndexRound(ctx context.Context) error {
	_, _, err := db.indexRound(ctx, nil, 0, false)
	return err
}

// OnSearchCaughtUp runs f in each search between the rounds it runs and
// its snapshot, until the returned function restores the default.
func OnSearchCaughtUp(f func()) func() {
	searchCaughtUp = f
	return func() { searchCaughtUp = nil }
}

// RoundBytes is how much content a search indexer's round reads.
const RoundBytes = roundBytes

// SearchText is the folded text memory_search holds for a memory of path
// and content.
func SearchText(path, content string) string {
	text, _, _ := searchValues(path, content)
	return text
}
