package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
)

// memoryColumns selects a memory; with full false the content is left out
// of the row, so lists without content never read it.
func memoryColumns(full bool) string {
	c := "''::bytea"
	if full {
		c = "content"
	}
	return `id, store_id, path, ` + c + `, sha256, size, version_id, created_at, updated_at`
}

func scanMemory(r row) (*memstore.Memory, error) {
	var (
		m        memstore.Memory
		content  []byte
		cat, uat int64
	)
	if err := r.Scan(&m.ID, &m.StoreID, &m.Path, &content, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &cat, &uat); err != nil {
		return nil, err
	}
	m.Content = string(content)
	m.CreatedAt, m.UpdatedAt = keyset.Time(cat), keyset.Time(uat)
	return &m, nil
}

func errMemoryNotFound(id string) *memstore.Error {
	return memstore.Errorf(memstore.ENotFound, "memory %s not found", id)
}

// insertVersion adds version v and its event e in one statement: a
// round trip fewer on every write.
func insertVersion(ctx context.Context, tx pgx.Tx, v *memstore.Version, e memstore.EventType) error {
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
	_, err := tx.Exec(ctx, `WITH v AS (INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11))
		`+insertEvent("$2", "$12", "$1", "$10", "$11", "$9"),
		v.ID, v.StoreID, v.MemoryID, string(v.Operation), v.Path, content, sum, size, keyset.Nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID, string(e))
	return err
}

// WriteMemory implements memstore.MemoryStorage: fn runs in one
// transaction that first locks the store's row, so that the writes of a
// store run one at a time across every process (see the package doc).
func (db *DB) WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		st, err := storeState(ctx, tx, workspaceID, storeID, true)
		if err != nil {
			return err
		}
		return fn(&memTx{ctx: ctx, db: db, tx: tx, storeID: storeID, archived: st.archived, count: st.memories})
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
	// The store's last version, once read (see next).
	lastRead bool
	lastID   string
	lastAt   int64
}

// next returns the ID and time of the transaction's next version: never
// dated before the store's last version, and sorting after it. The
// store's lock orders the writes of processes whose clocks may differ;
// this keeps their versions in that order, newest first by ID.
func (t *memTx) next() (string, time.Time, error) {
	if !t.lastRead {
		err := t.tx.QueryRow(t.ctx, `SELECT id, created_at FROM versions WHERE store_id = $1 ORDER BY id DESC LIMIT 1`, t.storeID).Scan(&t.lastID, &t.lastAt)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return "", time.Time{}, err
		}
		t.lastRead = true
	}
	now := t.db.stamp()
	if n := keyset.Nanos(now); n < t.lastAt {
		now = keyset.Time(t.lastAt)
	}
	id := t.db.ids.New(ids.Version, now)
	if id <= t.lastID {
		id = ids.Next(t.lastID)
	}
	t.lastID, t.lastAt = id, keyset.Nanos(now)
	return id, now, nil
}

func (t *memTx) Archived() bool { return t.archived }

func (t *memTx) Memory(id string) (*memstore.Memory, error) {
	m, err := scanMemory(t.tx.QueryRow(t.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = $1 AND store_id = $2`, id, t.storeID))
	return m, notFound(err, errMemoryNotFound(id))
}

func (t *memTx) MemoryAt(path string) (*memstore.Memory, error) {
	m, err := scanMemory(t.tx.QueryRow(t.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE store_id = $1 AND path = $2`, t.storeID, path))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// Overlapping looks for the path and its ancestors (equality lookups of at
// most MaxPathSegments paths), then for one memory below it (a range scan
// limited to one row).
func (t *memTx) Overlapping(path, self string) (*memstore.Memory, error) {
	paths := make([]string, 0, memstore.MaxPathSegments)
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			paths = append(paths, path[:i])
		}
	}
	paths = append(paths, path)
	var m memstore.Memory
	err := t.tx.QueryRow(t.ctx, `SELECT id, path FROM memories WHERE store_id = $1 AND id <> $2 AND path = ANY($3) ORDER BY path LIMIT 1`,
		t.storeID, self, paths).Scan(&m.ID, &m.Path)
	if errors.Is(err, pgx.ErrNoRows) {
		// "/" + 1 is "0": everything below path, and nothing else.
		err = t.tx.QueryRow(t.ctx, `SELECT id, path FROM memories WHERE store_id = $1 AND id <> $2 AND path >= $3 AND path < $4 ORDER BY path LIMIT 1`,
			t.storeID, self, path+"/", path+"0").Scan(&m.ID, &m.Path)
	}
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
func (t *memTx) Put(m *memstore.Memory, e memstore.EventType, by memstore.Actor) error {
	if err := memstore.ValidatePath(m.Path); err != nil {
		return err
	}
	op := e.Operation()
	vid, now, err := t.next()
	if err != nil {
		return err
	}
	if op == memstore.OpCreated {
		m.ID, m.CreatedAt = t.db.ids.New(ids.Memory, now), now
	}
	v := memstore.NewVersion(vid, m, op, by, now)
	if err := insertVersion(t.ctx, t.tx, v, e); err != nil {
		return err
	}
	m.VersionID, m.UpdatedAt = v.ID, now
	text, pathWords, contentWords := searchValues(m.Path, m.Content)
	if op == memstore.OpCreated {
		err = t.tx.QueryRow(t.ctx, `WITH m AS (INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at, search_text, search_words)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, `+searchWords("$10", "$11")+`) RETURNING 1)
			`+countChange("+", "$2"),
			m.ID, t.storeID, m.Path, []byte(m.Content), m.ContentSHA256, m.ContentSize, m.VersionID, keyset.Nanos(now), text, pathWords, contentWords).Scan(&t.count)
	} else {
		_, err = t.tx.Exec(t.ctx, `UPDATE memories SET path = $1, content = $2, sha256 = $3, size = $4, version_id = $5, updated_at = $6,
			search_text = $8, search_words = `+searchWords("$9", "$10")+` WHERE id = $7`,
			m.Path, []byte(m.Content), m.ContentSHA256, m.ContentSize, m.VersionID, keyset.Nanos(now), m.ID, text, pathWords, contentWords)
	}
	return err
}

// Delete keeps the path at deletion in the "deleted" version; the
// memory's row, and with it the content, goes.
func (t *memTx) Delete(m *memstore.Memory, by memstore.Actor) error {
	vid, now, err := t.next()
	if err != nil {
		return err
	}
	if err := insertVersion(t.ctx, t.tx, memstore.NewVersion(vid, m, memstore.OpDeleted, by, now), memstore.EventMemoryDeleted); err != nil {
		return err
	}
	return t.tx.QueryRow(t.ctx, `WITH m AS (DELETE FROM memories WHERE id = $1 RETURNING 1) `+countChange("-", "$2"), m.ID, t.storeID).Scan(&t.count)
}

// countChange is the statement that follows a change of memories m (a
// data-modifying WITH query) in the same statement: the count of the
// store whose ID is the parameter store moves by op (+ or -) the rows of
// m, and is returned. One statement, so one round trip, for both; the
// store's row is already locked (WriteMemory).
func countChange(op, store string) string {
	return `UPDATE stores SET memory_count = memory_count ` + op + ` (SELECT count(*) FROM m) WHERE id = ` + store + ` RETURNING memory_count`
}

// Memory implements memstore.MemoryStorage: one statement, the store's
// workspace checked by the join.
func (db *DB) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	m, err := scanMemory(db.pool.QueryRow(ctx, `SELECT m.id, m.store_id, m.path, m.content, m.sha256, m.size, m.version_id, m.created_at, m.updated_at
		FROM memories m JOIN stores s ON s.id = m.store_id
		WHERE m.id = $1 AND m.store_id = $2 AND s.workspace_id = $3`, id, storeID, workspaceID))
	if err != nil {
		return nil, db.memoryMissing(ctx, err, workspaceID, storeID, id)
	}
	return m, nil
}

// MemoryUnlessAt implements memstore.MemoryRevalidatorStorage: a lookup
// of the memory's version alone, the memory itself only when that is not
// version.
func (db *DB) MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*memstore.Memory, error) {
	if version != "" {
		var current string
		err := db.pool.QueryRow(ctx, `SELECT m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
			WHERE m.id = $1 AND m.store_id = $2 AND s.workspace_id = $3`, id, storeID, workspaceID).Scan(&current)
		switch {
		case err != nil:
			return nil, db.memoryMissing(ctx, err, workspaceID, storeID, id)
		case current == version:
			return nil, nil
		}
	}
	return db.Memory(ctx, workspaceID, storeID, id)
}

// memoryMissing turns the failure of a lookup of a memory into the error
// to report, saying whether the store or the memory is missing.
func (db *DB) memoryMissing(ctx context.Context, err error, workspaceID, storeID, id string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		var one int
		err = db.pool.QueryRow(ctx, `SELECT 1 FROM stores WHERE id = $1 AND workspace_id = $2`, storeID, workspaceID).Scan(&one)
		if err == nil {
			err = errMemoryNotFound(id)
		} else {
			err = notFound(err, errStoreNotFound(storeID))
		}
	}
	return wrap(err, "get memory %s", id)
}

// Memories implements memstore.MemoryStorage: the walk of the list
// (keyset.MemoryWalk) over the (store_id, path) index, in one read
// transaction.
func (db *DB) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	w, err := keyset.NewMemoryWalk(f)
	if err != nil {
		return memstore.Page[memstore.ListItem]{}, err
	}
	var page memstore.Page[memstore.ListItem]
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID, false); err != nil {
			return err
		}
		page, err = w.Walk(func(r keyset.MemoryRange, yield func(*memstore.Memory) bool) error {
			q := newQuery(storeID, r.From)
			where := "store_id = $1 AND path > $2"
			if r.Inclusive {
				where = "store_id = $1 AND path >= $2"
			}
			if r.To != "" {
				where += " AND path < " + q.arg(r.To)
			}
			rows, err := tx.Query(ctx, `SELECT `+memoryColumns(f.Full)+` FROM memories WHERE `+where+` ORDER BY path LIMIT `+q.arg(r.Want), q.args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				m, err := scanMemory(rows)
				if err != nil {
					return err
				}
				if !yield(m) {
					return nil
				}
			}
			return rows.Err()
		})
		return err
	})
	if err != nil {
		return memstore.Page[memstore.ListItem]{}, wrap(err, "list memories")
	}
	return page, nil
}
