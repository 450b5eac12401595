package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// memoryColumns selects a memory; with full false the content is left out
// of the row, so lists without content never read it.
func memoryColumns(full bool) string { return sqlrow.MemoryColumns(full, dialect.EmptyContent) }

func errMemoryNotFound(id string) *memstore.Error {
	return memstore.ErrMemoryNotFound(id)
}

// versionArgs are the parameters $1 to $12 of a statement that begins
// with versionInsert: v's columns, and the type of its event e. Put's
// statements use $5 to $9 for the memory too (its path, content, hash,
// size and time are the version's), so that the content crosses the
// network once.
func versionArgs(v *memstore.Version, e memstore.EventType) []any {
	var (
		content []byte
		sum     *string
		size    *int64
	)
	if v.HasContent {
		content, sum, size = []byte(v.Content), &v.ContentSHA256, &v.ContentSize
		if content == nil {
			content = []byte{} // empty content, not none
		}
	}
	return []any{v.ID, v.StoreID, v.MemoryID, string(v.Operation), v.Path, content, sum, size, keyset.Nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID, string(e)}
}

// versionInsert is the WITH query that inserts a version and its event,
// of the parameters versionArgs gives: every change of a memory is one
// statement, its version and event included, so one round trip.
var versionInsert = `WITH v AS (INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)),
	ev AS (` + insertEvent("$2", "$12", "$1", "$10", "$11", "$9") + `)`

// WriteMemory implements memstore.MemoryStorage: fn runs in one
// transaction that first locks the store's row, so that the writes of a
// store run one at a time across every process (see the package doc).
// The lock and the read of the store's last version (see memTx.next) go
// in one round trip: the read, a statement of its own, starts once the
// lock is held, so it sees the versions of the write that held it before.
func (db *DB) WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		t := &memTx{ctx: ctx, db: db, tx: tx, storeID: storeID}
		var b pgx.Batch
		b.Queue(storeStateQuery(true), storeID, workspaceID)
		b.Queue(`SELECT id, created_at FROM versions WHERE store_id = $1 ORDER BY id DESC LIMIT 1`, storeID)
		br := tx.SendBatch(ctx, &b)
		st, err := scanStoreState(br.QueryRow(), storeID)
		if err == nil {
			err = br.QueryRow().Scan(&t.lastID, &t.lastAt)
			if errors.Is(err, pgx.ErrNoRows) {
				err = nil
			}
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		t.archived, t.count = st.archived, st.memories
		return fn(t)
	})
	if err == nil {
		// Told even when fn changed nothing: a notice costs a
		// listener a read, and fn does not say whether it wrote.
		db.evented(storeID)
	}
	return wrap(err, "write memories of store %s", storeID)
}

// A memTx is a memstore.MemoryTx over one transaction holding the store's
// lock: its reads use the (store_id, path) index.
type memTx struct {
	ctx      context.Context
	db       *DB
	tx       pgx.Tx
	storeID  string
	archived bool
	count    int64 // the store's live memories, as its row has them
	// The store's last version ("" and 0 for none), as of the lock, then
	// the last one this transaction made (see next).
	lastID string
	lastAt int64
}

// next returns the ID and time of the transaction's next version: never
// dated before the store's last version, and sorting after it. The
// store's lock orders the writes of processes whose clocks may differ;
// this keeps their versions in that order, newest first by ID.
func (t *memTx) next() (string, time.Time) {
	now := t.db.stamp()
	if n := keyset.Nanos(now); n < t.lastAt {
		now = keyset.Time(t.lastAt)
	}
	id := t.db.ids.New(memstore.VersionIDPrefix, now)
	if id <= t.lastID {
		id = ids.Next(t.lastID)
	}
	t.lastID, t.lastAt = id, keyset.Nanos(now)
	return id, now
}

func (t *memTx) Archived() bool { return t.archived }

func (t *memTx) Memory(id string) (*memstore.Memory, error) {
	m, err := sqlrow.ScanMemory(t.tx.QueryRow(t.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = $1 AND store_id = $2`, id, t.storeID))
	return m, notFound(err, errMemoryNotFound(id))
}

func (t *memTx) MemoryAt(path string) (*memstore.Memory, error) {
	m, err := sqlrow.ScanMemory(t.tx.QueryRow(t.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE store_id = $1 AND path = $2`, t.storeID, path))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// Overlapping looks for the path and its ancestors (equality lookups of at
// most MaxPathSegments paths) and for one memory below it (a range scan
// limited to one row), in one statement. The ancestors and the path are
// prefixes of every path below it, so they sort first: the first of the
// two in path order is the first of the ancestors and the path, when
// there is one, as the rule wants.
func (t *memTx) Overlapping(path, self string) (*memstore.Memory, error) {
	paths := make([]string, 0, memstore.MaxPathSegments)
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			paths = append(paths, path[:i])
		}
	}
	paths = append(paths, path)
	var m memstore.Memory
	// "/" + 1 is "0": everything below path, and nothing else.
	err := t.tx.QueryRow(t.ctx, `(SELECT id, path FROM memories WHERE store_id = $1 AND id <> $2 AND path = ANY($3) ORDER BY path LIMIT 1)
		UNION ALL (SELECT id, path FROM memories WHERE store_id = $1 AND id <> $2 AND path >= $4 AND path < $5 ORDER BY path LIMIT 1)
		ORDER BY path LIMIT 1`,
		t.storeID, self, paths, path+"/", path+"0").Scan(&m.ID, &m.Path)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	m.StoreID = t.storeID
	return &m, nil
}

// Count is the count in the store's row, read with its lock and kept by
// Put and Delete since: no statement, whatever the store's size.
func (t *memTx) Count() (int, error) { return int(t.count), nil }

// Put refuses a malformed path whoever asks, the one check of the core's
// that this backend repeats: a stored path is an invariant of the store,
// whose overlap checks and roll-up of lists by depth read its segments,
// so one malformed path would corrupt every later write.
//
// The version, its event, the memory and, for a new one, the store's
// count are written by one statement.
func (t *memTx) Put(m *memstore.Memory, e memstore.EventType, by memstore.Actor) error {
	if err := memstore.ValidatePath(m.Path); err != nil {
		return err
	}
	op := e.Operation()
	vid, now := t.next()
	if op == memstore.OpCreated {
		m.ID, m.CreatedAt = t.db.ids.New(memstore.MemoryIDPrefix, now), now
	}
	v := memstore.NewVersion(vid, m, op, by, now)
	m.VersionID, m.UpdatedAt = v.ID, now
	text, pathWords, contentWords := searchValues(m.Path, m.Content)
	args := append(versionArgs(v, e), text, pathWords, contentWords)
	if op == memstore.OpCreated {
		return t.tx.QueryRow(t.ctx, versionInsert+`, m AS (INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at, search_text, search_words)
			VALUES ($3, $2, $5, $6, $7, $8, $1, $9, $9, $13, `+searchWords("$14", "$15")+`) RETURNING size)
			`+countChange("+", "$2"), args...).Scan(&t.count)
	}
	// The join reads the row as it was, so the store's size moves by
	// the change of the memory's.
	_, err := t.tx.Exec(t.ctx, versionInsert+`, m AS (UPDATE memories n SET path = $5, content = $6, sha256 = $7, size = $8, version_id = $1, updated_at = $9,
		search_text = $13, search_words = `+searchWords("$14", "$15")+` FROM memories o WHERE n.id = $3 AND o.id = n.id RETURNING n.size - o.size AS d)
		UPDATE stores SET content_size = content_size + coalesce((SELECT sum(d) FROM m), 0) WHERE id = $2`, args...)
	return err
}

// Delete keeps the path at deletion in the "deleted" version; the
// memory's row, and with it the content, goes, and the store's count
// with it, in one statement.
func (t *memTx) Delete(m *memstore.Memory, by memstore.Actor) error {
	vid, now := t.next()
	return t.tx.QueryRow(t.ctx, versionInsert+`, m AS (DELETE FROM memories WHERE id = $3 RETURNING size) `+countChange("-", "$2"),
		versionArgs(memstore.NewVersion(vid, m, memstore.OpDeleted, by, now), memstore.EventMemoryDeleted)...).Scan(&t.count)
}

// countChange is the statement that ends an insert or delete of
// memories m (a data-modifying WITH query returning their sizes): the
// count and content size of the store whose ID is the parameter store
// move by op (+ or -) the rows of m and their sizes, and the count is
// returned. The store's row is already locked (WriteMemory).
func countChange(op, store string) string {
	return `UPDATE stores SET memory_count = memory_count ` + op + ` (SELECT count(*) FROM m),
		content_size = content_size ` + op + ` (SELECT coalesce(sum(size), 0) FROM m) WHERE id = ` + store + ` RETURNING memory_count`
}

// Memory implements memstore.MemoryStorage (sqlread.Memory).
func (db *DB) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	m, err := sqlread.Memory(reader{ctx, db.pool}, dialect, workspaceID, storeID, id)
	return m, wrap(err, "get memory %s", id)
}

// MemoryUnlessAt implements memstore.MemoryRevalidatorStorage
// (sqlread.MemoryUnlessAt). The lookups of the versions of concurrent
// calls go together in one statement (revalidate.go), each taken after
// its call began.
func (db *DB) MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*memstore.Memory, error) {
	m, err := sqlread.MemoryUnlessAt(reader{ctx, db.pool}, dialect, workspaceID, storeID, id, version, func() (string, error) {
		current, err := db.revalidate.Do(ctx, versionQuery{id: id, storeID: storeID, workspaceID: workspaceID})
		if err == nil && current == "" {
			err = pgx.ErrNoRows
		}
		return current, err
	})
	return m, wrap(err, "get memory %s", id)
}

// Memories implements memstore.MemoryStorage (sqlread.Memories).
func (db *DB) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	page, err := sqlread.Memories(db.readStore(ctx, workspaceID, storeID), dialect, storeID, f)
	return page, wrap(err, "list memories")
}
