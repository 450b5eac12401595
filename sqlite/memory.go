package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
)

// memoryColumns selects a memory; with full false the content is left out
// of the row, so lists without content never read it.
func memoryColumns(full bool) string {
	c := "''"
	if full {
		c = "content"
	}
	return `id, store_id, path, ` + c + `, sha256, size, version_id, created_at, updated_at`
}

func scanMemory(row interface{ Scan(...any) error }) (*memstore.Memory, error) {
	var (
		m        memstore.Memory
		cat, uat int64
	)
	if err := row.Scan(&m.ID, &m.StoreID, &m.Path, &m.Content, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &cat, &uat); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = fromNanos(cat), fromNanos(uat)
	return &m, nil
}

func getMemory(ctx context.Context, tx *txn, storeID, id string) (*memstore.Memory, error) {
	m, err := scanMemory(tx.queryRow(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = ? AND store_id = ?`, id, storeID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.Errorf(memstore.ENotFound, "memory %s not found", id)
	}
	return m, err
}

func hash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// upperBound returns the smallest string above every string that starts
// with prefix, its last byte incremented: the memories under "/a/" are
// exactly those with "/a/" <= path < "/a0". This keeps prefix scans on the
// (store_id, path) index.
func upperBound(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return prefix + "\xff" // unreachable for UTF-8 text, which has no 0xff byte
}

// conflict finds a live memory other than self that keeps path from being
// used: one at path or at an ancestor of it (equality lookups of at most
// 20 paths), or one below it (a range scan limited to one row). Both use
// the (store_id, path) index, whatever the store's size.
func conflict(ctx context.Context, tx *txn, storeID, path, self string) error {
	var id, at string
	args := []any{storeID, self}
	marks := make([]string, 0, memstore.MaxPathSegments)
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			args, marks = append(args, path[:i]), append(marks, "?")
		}
	}
	args, marks = append(args, path), append(marks, "?")
	err := tx.queryRow(ctx, `SELECT id, path FROM memories WHERE store_id = ? AND id <> ? AND path IN (`+strings.Join(marks, ", ")+`) ORDER BY path LIMIT 1`, args...).Scan(&id, &at)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.queryRow(ctx, `SELECT id, path FROM memories WHERE store_id = ? AND id <> ? AND path >= ? AND path < ? ORDER BY path LIMIT 1`,
			storeID, self, path+"/", upperBound(path+"/")).Scan(&id, &at)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	msg := fmt.Sprintf("path %q is taken by memory %s", path, id)
	if at != path {
		msg = fmt.Sprintf("path %q overlaps %q of memory %s", path, at, id)
	}
	return &memstore.Error{Code: memstore.EPathConflict, Message: msg, ConflictingMemoryID: id, ConflictingPath: at}
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

// newVersion makes the version of a memory's new state m, stamped now.
func (db *DB) newVersion(m *memstore.Memory, op memstore.Operation, by memstore.Actor) *memstore.Version {
	now := fromNanos(nanos(db.now()))
	return &memstore.Version{
		ID: db.ids.New(ids.Version, now), StoreID: m.StoreID, MemoryID: m.ID, Operation: op,
		Path: m.Path, Content: m.Content, ContentSHA256: m.ContentSHA256, ContentSize: m.ContentSize,
		HasContent: op != memstore.OpDeleted, CreatedAt: now, CreatedBy: by,
	}
}

// modify gives m a new path and content, whose SHA-256 is sum, with a
// "modified" version. Callers hash the content before their write is
// queued: the writer is the one thread every write waits for.
func (db *DB) modify(ctx context.Context, tx *txn, m *memstore.Memory, path, content, sum string, by memstore.Actor) error {
	m.Path, m.Content, m.ContentSHA256, m.ContentSize = path, content, sum, int64(len(content))
	v := db.newVersion(m, memstore.OpModified, by)
	if err := insertVersion(ctx, tx, v); err != nil {
		return err
	}
	m.VersionID, m.UpdatedAt = v.ID, v.CreatedAt
	_, err := tx.exec(ctx, `UPDATE memories SET path = ?, content = ?, sha256 = ?, size = ?, version_id = ?, updated_at = ? WHERE id = ?`,
		m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, nanos(m.UpdatedAt), m.ID)
	return err
}

// storablePath refuses a malformed path whoever asks: the only check of
// its input the backend keeps from the core's, because a stored path is
// an invariant of the store. The checks of overlapping paths and the
// roll-up of lists by depth read its segments, so one malformed path
// would corrupt the tree of every later write.
func storablePath(p string) error { return memstore.ValidatePath(p) }

// CreateMemory implements memstore.MemoryStorage. With Upsert, an
// identical memory at the path is returned unchanged, with no version,
// like an update that changes nothing.
func (db *DB) CreateMemory(ctx context.Context, workspaceID, storeID string, c memstore.MemoryCreate, by memstore.Actor) (*memstore.Memory, error) {
	if err := storablePath(c.Path); err != nil {
		return nil, err
	}
	sum := hash(c.Content)
	var m *memstore.Memory
	err := db.write(ctx, func(tx *txn) error {
		archived, err := storeState(ctx, tx, workspaceID, storeID)
		if err != nil {
			return err
		}
		if archived {
			return memstore.ErrArchived(storeID)
		}
		if c.Upsert && !c.IfNotExists {
			m, err = scanMemory(tx.queryRow(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE store_id = ? AND path = ?`, storeID, c.Path))
			switch {
			case err == nil && m.Content == c.Content:
				return nil
			case err == nil:
				return db.modify(ctx, tx, m, c.Path, c.Content, sum, by)
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if err := conflict(ctx, tx, storeID, c.Path, ""); err != nil {
			var e *memstore.Error
			if c.IfNotExists && errors.As(err, &e) && e.Code == memstore.EPathConflict {
				return memstore.Errorf(memstore.EPreconditionFailed, "%s", e.Message)
			}
			return err
		}
		if db.max > 0 {
			var n int
			if err := tx.queryRow(ctx, `SELECT count(*) FROM memories WHERE store_id = ?`, storeID).Scan(&n); err != nil {
				return err
			}
			if n >= db.max {
				return memstore.Errorf(memstore.EInvalid, "memory store %s holds %d memories, its limit; delete some before creating more", storeID, n)
			}
		}
		now := fromNanos(nanos(db.now()))
		m = &memstore.Memory{
			ID: db.ids.New(ids.Memory, now), StoreID: storeID, Path: c.Path,
			Content: c.Content, ContentSHA256: sum, ContentSize: int64(len(c.Content)),
		}
		v := db.newVersion(m, memstore.OpCreated, by)
		if err := insertVersion(ctx, tx, v); err != nil {
			return err
		}
		m.VersionID, m.CreatedAt, m.UpdatedAt = v.ID, v.CreatedAt, v.CreatedAt
		_, err = tx.exec(ctx, `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, storeID, m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, nanos(m.CreatedAt), nanos(m.UpdatedAt))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create memory %q", c.Path)
	}
	return m, nil
}

// Memory implements memstore.MemoryStorage.
func (db *DB) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	// The hot path of every client: one statement on a prepared query and
	// no transaction (a single statement reads one snapshot), the store's
	// workspace checked by the join.
	m, err := scanMemory(db.rs.queryRow(ctx, `SELECT m.id, m.store_id, m.path, m.content, m.sha256, m.size, m.version_id, m.created_at, m.updated_at
		FROM memories m JOIN stores s ON s.id = m.store_id
		WHERE m.id = ? AND m.store_id = ? AND s.workspace_id = ?`, id, storeID, workspaceID))
	if err != nil {
		return nil, db.memoryMissing(ctx, err, workspaceID, storeID, id)
	}
	return m, nil
}

// MemoryUnlessAt implements memstore.MemoryRevalidatorStorage: a lookup of the
// memory's version alone, the memory itself only when that is not
// version. (A single statement returning every column, empty when at
// version, cost nearly as much as reading the memory: most of a
// statement's cost is per column.)
func (db *DB) MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*memstore.Memory, error) {
	if version != "" {
		var current string
		err := db.rs.queryRow(ctx, `SELECT m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
			WHERE m.id = ? AND m.store_id = ? AND s.workspace_id = ?`, id, storeID, workspaceID).Scan(&current)
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
	if errors.Is(err, sql.ErrNoRows) {
		err = db.read(ctx, func(tx *txn) error {
			if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
				return err
			}
			return memstore.Errorf(memstore.ENotFound, "memory %s not found", id)
		})
	}
	return wrap(translate(err), "get memory %s", id)
}

// UpdateMemory implements memstore.MemoryStorage, deciding in the order
// of docs/api.md (Order of checks).
func (db *DB) UpdateMemory(ctx context.Context, workspaceID, storeID, id string, u memstore.MemoryUpdate, by memstore.Actor) (*memstore.Memory, error) {
	if u.Path != nil {
		if err := storablePath(*u.Path); err != nil {
			return nil, err
		}
	}
	var newSum string
	if u.Content != nil {
		newSum = hash(*u.Content)
	}
	var m *memstore.Memory
	err := db.write(ctx, func(tx *txn) error {
		archived, err := storeState(ctx, tx, workspaceID, storeID)
		if err != nil {
			return err
		}
		if m, err = getMemory(ctx, tx, storeID, id); err != nil {
			return err
		}
		if archived {
			return memstore.ErrArchived(storeID)
		}
		path, content, sum := m.Path, m.Content, m.ContentSHA256
		if u.Path != nil {
			path = *u.Path
		}
		if u.Content != nil {
			content, sum = *u.Content, newSum
		}
		if path == m.Path && content == m.Content {
			return nil // already so: a retried update succeeds, whatever its precondition
		}
		if u.IfSHA256 != "" && !strings.EqualFold(u.IfSHA256, m.ContentSHA256) {
			return memstore.Errorf(memstore.EPreconditionFailed, "memory %s has content_sha256 %s, not %s", id, m.ContentSHA256, u.IfSHA256)
		}
		if path != m.Path {
			if err := conflict(ctx, tx, storeID, path, id); err != nil {
				var e *memstore.Error
				if u.RenameIfFree && errors.As(err, &e) && e.Code == memstore.EPathConflict {
					return nil // the target is taken: a successful no-op
				}
				return err
			}
		}
		return db.modify(ctx, tx, m, path, content, sum, by)
	})
	if err != nil {
		return nil, wrap(err, "update memory %s", id)
	}
	return m, nil
}

// DeleteMemory implements memstore.MemoryStorage. The "deleted" version
// keeps the path at deletion; the memory's row, and with it the content,
// goes.
func (db *DB) DeleteMemory(ctx context.Context, workspaceID, storeID, id, ifSHA256 string, by memstore.Actor) error {
	err := db.write(ctx, func(tx *txn) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		m, err := getMemory(ctx, tx, storeID, id)
		if err != nil {
			return err
		}
		if ifSHA256 != "" && !strings.EqualFold(ifSHA256, m.ContentSHA256) {
			return memstore.Errorf(memstore.EPreconditionFailed, "memory %s has content_sha256 %s, not %s", id, m.ContentSHA256, ifSHA256)
		}
		if err := insertVersion(ctx, tx, db.newVersion(m, memstore.OpDeleted, by)); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `DELETE FROM memories WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return wrap(err, "delete memory %s", id)
	}
	return nil
}

// Memories implements memstore.MemoryStorage. It walks the (store_id,
// path) index from the cursor and stops after limit+1 items, so a page
// costs O(page) whatever the store's size: with a depth, each rolled-up
// prefix is emitted once and the walk then seeks past everything under
// it.
func (db *DB) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	var page memstore.Page[memstore.ListItem]
	n, err := limit(f.Limit, f.Full)
	if err != nil {
		return page, err
	}
	if f.Depth < 0 {
		return page, memstore.Errorf(memstore.EInvalid, "depth %d must not be negative", f.Depth)
	}
	cur, err := parseCursor(f.Page, kindMemories)
	if err != nil {
		return page, err
	}
	prefix := f.PathPrefix
	if prefix == "" {
		prefix = "/"
	}
	// The walk resumes at from: strictly after a memory's path, or after
	// everything below a prefix.
	from, inclusive := prefix, true
	if cur != nil {
		from, inclusive = cur.Key, false
		if cur.Prefix {
			from, inclusive = upperBound(cur.Key), true
		}
		if from < prefix {
			from, inclusive = prefix, true
		}
	}
	hi := upperBound(prefix)
	// Depth counts segments below base, the prefix up to its last "/":
	// the prefix itself for a segment-aligned one.
	base := prefix[:strings.LastIndexByte(prefix, '/')+1]
	var keys []cursor // the cursor after each item
	err = db.read(ctx, func(tx *txn) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		for len(page.Items) <= n {
			want := n + 1 - len(page.Items)
			op := ">"
			if inclusive {
				op = ">="
			}
			rows, err := tx.query(ctx, `SELECT `+memoryColumns(f.Full)+` FROM memories WHERE store_id = ? AND path `+op+` ? AND path < ? ORDER BY path LIMIT ?`,
				storeID, from, hi, want)
			if err != nil {
				return err
			}
			got, seek := 0, false
			for rows.Next() {
				m, err := scanMemory(rows)
				if err != nil {
					rows.Close()
					return err
				}
				got++
				rest := m.Path[len(base):]
				if f.Depth > 0 && strings.Count(rest, "/") >= f.Depth {
					// Deeper than the depth: roll up to the first Depth
					// segments below the prefix, then seek past them.
					segs := strings.SplitN(rest, "/", f.Depth+1)
					p := base + strings.Join(segs[:f.Depth], "/") + "/"
					page.Items = append(page.Items, memstore.ListItem{Prefix: p})
					keys = append(keys, cursor{Kind: kindMemories, Key: p, Prefix: true})
					from, inclusive, seek = upperBound(p), true, true
					break
				}
				page.Items = append(page.Items, memstore.ListItem{Memory: m})
				keys = append(keys, cursor{Kind: kindMemories, Key: m.Path})
				from, inclusive = m.Path, false
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if !seek && got < want {
				return nil // the range is exhausted
			}
		}
		return nil
	})
	if err != nil {
		return memstore.Page[memstore.ListItem]{}, wrap(err, "list memories")
	}
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		page.Next = keys[n-1].String()
	}
	return page, nil
}
