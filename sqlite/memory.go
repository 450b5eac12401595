package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// memoryColumns selects a memory; with full false the content is left out
// of the row, so lists without content never read it.
func memoryColumns(full bool) string { return sqlrow.MemoryColumns(full, dialect.EmptyContent) }

func getMemory(ctx context.Context, tx *txn, storeID, id string) (*memstore.Memory, error) {
	m, err := sqlrow.ScanMemory(tx.queryRow(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = ? AND store_id = ?`, id, storeID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrMemoryNotFound(id)
	}
	return m, err
}

func insertVersion(ctx context.Context, tx *txn, v *memstore.Version) error {
	var content, sum, size any
	if v.HasContent {
		content, sum, size = v.Content, v.ContentSHA256, v.ContentSize
	}
	_, err := tx.exec(ctx, `INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, v.StoreID, v.MemoryID, string(v.Operation), v.Path, content, sum, size, nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID)
	return err
}

// WriteMemory implements memstore.MemoryStorage: fn runs as a write
// closure of the writer (see DB.write), over a memTx.
func (db *DB) WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	err := db.write(ctx, func(tx *txn) error {
		archived, err := storeState(ctx, tx, workspaceID, storeID)
		if err != nil {
			return err
		}
		return fn(&memTx{ctx: ctx, db: db, tx: tx, storeID: storeID, archived: archived})
	})
	return wrap(err, "write memories of store %s", storeID)
}

// A memTx is a memstore.MemoryTx over one transaction of the writer: its
// reads use the (store_id, path) index, and Put and Delete are a closure's
// only execs.
type memTx struct {
	ctx      context.Context
	db       *DB
	tx       *txn
	storeID  string
	archived bool
}

func (t *memTx) Archived() bool { return t.archived }

func (t *memTx) Memory(id string) (*memstore.Memory, error) {
	return getMemory(t.ctx, t.tx, t.storeID, id)
}

func (t *memTx) MemoryAt(path string) (*memstore.Memory, error) {
	m, err := sqlrow.ScanMemory(t.tx.queryRow(t.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE store_id = ? AND path = ?`, t.storeID, path))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// Overlapping looks for the path and its ancestors (equality lookups of at
// most MaxPathSegments paths), then for one memory below it (a range scan
// limited to one row).
func (t *memTx) Overlapping(path, self string) (*memstore.Memory, error) {
	args := []any{t.storeID, self}
	marks := make([]string, 0, memstore.MaxPathSegments)
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			args, marks = append(args, path[:i]), append(marks, "?")
		}
	}
	args, marks = append(args, path), append(marks, "?")
	var m memstore.Memory
	err := t.tx.queryRow(t.ctx, `SELECT id, path FROM memories WHERE store_id = ? AND id <> ? AND path IN (`+strings.Join(marks, ", ")+`) ORDER BY path LIMIT 1`, args...).Scan(&m.ID, &m.Path)
	if errors.Is(err, sql.ErrNoRows) {
		// "/" + 1 is "0": everything below path, and nothing else.
		err = t.tx.queryRow(t.ctx, `SELECT id, path FROM memories WHERE store_id = ? AND id <> ? AND path >= ? AND path < ? ORDER BY path LIMIT 1`,
			t.storeID, self, path+"/", path+"0").Scan(&m.ID, &m.Path)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	m.StoreID = t.storeID
	return &m, nil
}

// CheckQuota checks q against the count that the schema's triggers keep
// in the store's row: one lookup, whatever the store's size.
func (t *memTx) CheckQuota(q memstore.Quota) error {
	var n int
	if err := t.tx.queryRow(t.ctx, `SELECT memory_count FROM stores WHERE id = ?`, t.storeID).Scan(&n); err != nil {
		return err
	}
	return q.Check(n)
}

// Put refuses a malformed path whoever asks, the one check of the core's
// that this backend repeats: a stored path is an invariant of the store,
// whose overlap checks and roll-up of lists by depth read its segments,
// so one malformed path would corrupt every later write.
func (t *memTx) Put(m *memstore.Memory, e memstore.EventType, by memstore.Actor) error {
	if err := memstore.ValidatePath(m.Path); err != nil {
		return err
	}
	op := e.Operation()
	now := fromNanos(nanos(t.db.now()))
	if op == memstore.OpCreated {
		m.ID, m.CreatedAt = t.db.ids.New(memstore.MemoryIDPrefix, now), now
	}
	v := memstore.NewVersion(t.db.ids.New(memstore.VersionIDPrefix, now), m, op, by, now)
	if err := insertVersion(t.ctx, t.tx, v); err != nil {
		return err
	}
	if err := insertEvent(t.ctx, t.tx, t.storeID, e, v.ID, by, now); err != nil {
		return err
	}
	m.VersionID, m.UpdatedAt = v.ID, now
	var err error
	if op == memstore.OpCreated {
		_, err = t.tx.exec(t.ctx, `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, t.storeID, m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, nanos(m.CreatedAt), nanos(m.UpdatedAt))
	} else {
		_, err = t.tx.exec(t.ctx, `UPDATE memories SET path = ?, content = ?, sha256 = ?, size = ?, version_id = ?, updated_at = ? WHERE id = ?`,
			m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, nanos(m.UpdatedAt), m.ID)
	}
	return err
}

// Delete keeps the path at deletion in the "deleted" version; the
// memory's row, and with it the content, goes.
func (t *memTx) Delete(m *memstore.Memory, by memstore.Actor) error {
	now := fromNanos(nanos(t.db.now()))
	v := memstore.NewVersion(t.db.ids.New(memstore.VersionIDPrefix, now), m, memstore.OpDeleted, by, now)
	if err := insertVersion(t.ctx, t.tx, v); err != nil {
		return err
	}
	if err := insertEvent(t.ctx, t.tx, t.storeID, memstore.EventMemoryDeleted, v.ID, by, now); err != nil {
		return err
	}
	_, err := t.tx.exec(t.ctx, `DELETE FROM memories WHERE id = ?`, m.ID)
	return err
}

// Memory implements memstore.MemoryStorage (sqlread.Memory): one
// statement on a prepared query and no transaction (a single statement
// reads one snapshot).
func (db *DB) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	m, err := sqlread.Memory(reader{ctx, &db.rs}, dialect, workspaceID, storeID, id)
	return m, wrap(translate(err), "get memory %s", id)
}

// MemoryUnlessAt implements memstore.MemoryRevalidatorStorage
// (sqlread.MemoryUnlessAt). (A single statement returning every column,
// empty when at version, cost nearly as much as reading the memory: most
// of a statement's cost is per column.)
func (db *DB) MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*memstore.Memory, error) {
	m, err := sqlread.MemoryUnlessAt(reader{ctx, &db.rs}, dialect, workspaceID, storeID, id, version, func() (current string, err error) {
		err = db.rs.queryRow(ctx, `SELECT m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
			WHERE m.id = ? AND m.store_id = ? AND s.workspace_id = ?`, id, storeID, workspaceID).Scan(&current)
		return current, err
	})
	return m, wrap(translate(err), "get memory %s", id)
}

// Memories implements memstore.MemoryStorage (sqlread.Memories).
func (db *DB) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	page, err := sqlread.Memories(db.readStore(ctx, workspaceID, storeID), dialect, storeID, f)
	return page, wrap(err, "list memories")
}
