package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlrow"
)

// versionColumns are the columns of a version's row (sqlrow.ScanVersion),
// with its content when full.
func versionColumns(full bool) string { return sqlrow.VersionColumns(full, "NULL") }

func getVersion(ctx context.Context, tx *txn, storeID, id string) (*memstore.Version, error) {
	v, err := sqlrow.ScanVersion(tx.queryRow(ctx, `SELECT `+versionColumns(true)+` FROM versions WHERE id = ? AND store_id = ?`, id, storeID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrVersionNotFound(id)
	}
	return v, err
}

// Versions implements memstore.VersionStorage: newest first by ID (IDs
// are time-ordered), keyset on the ID, served by the versions_by_*
// indexes.
func (db *DB) Versions(ctx context.Context, workspaceID, storeID string, f memstore.VersionFilter) (memstore.Page[memstore.Version], error) {
	var page memstore.Page[memstore.Version]
	n, err := memstore.PageSize(f.Limit, f.Full)
	if err != nil {
		return page, err
	}
	cur, err := parseCursor(f.Page, kindVersions)
	if err != nil {
		return page, err
	}
	where := []string{"store_id = ?"}
	args := []any{storeID}
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if f.MemoryID != "" {
		add("memory_id = ?", f.MemoryID)
	}
	if f.Operation != "" {
		add("operation = ?", string(f.Operation))
	}
	for t, id := range map[memstore.ActorType]string{
		memstore.ActorSession: f.SessionID, memstore.ActorAPIKey: f.APIKeyID, memstore.ActorServiceAccount: f.ServiceAccountID,
	} {
		if id != "" {
			add("actor_type = ?", string(t))
			add("actor_id = ?", id)
		}
	}
	if f.CreatedAtGTE != nil {
		add("created_at >= ?", nanos(*f.CreatedAtGTE))
	}
	if f.CreatedAtLTE != nil {
		add("created_at <= ?", nanos(*f.CreatedAtLTE))
	}
	if cur != nil {
		add("id < ?", cur.Key)
	}
	args = append(args, n+1)
	err = db.read(ctx, func(tx *txn) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		rows, err := tx.query(ctx, `SELECT `+versionColumns(f.Full)+` FROM versions WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Items, err = sqlrow.Collect(rows, sqlrow.ScanVersion)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.Version]{}, wrap(err, "list versions")
	}
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		page.Next = cursor{Kind: kindVersions, Key: page.Items[n-1].ID}.String()
	}
	return page, nil
}

// Version implements memstore.VersionStorage.
func (db *DB) Version(ctx context.Context, workspaceID, storeID, id string) (*memstore.Version, error) {
	var v *memstore.Version
	err := db.read(ctx, func(tx *txn) (err error) {
		if _, err = storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		v, err = getVersion(ctx, tx, storeID, id)
		return err
	})
	return v, wrap(err, "get version %s", id)
}

// RedactVersion implements memstore.VersionStorage. The columns are
// overwritten with NULL in place, secure_delete (set at Open) zeroes the
// space the old values took, and a checkpoint then empties the
// write-ahead log, which still holds the pages as they were: when it
// returns, the version's path and content are in neither the database
// file nor its log. The search indexes are purged afterwards (see
// WaitSearchIndex). The live memory is left alone even when this is its
// current version.
//
// Redacting again runs the checkpoint again, so that a redaction whose
// checkpoint failed (the log stayed busy) can be finished.
func (db *DB) RedactVersion(ctx context.Context, workspaceID, storeID, id string, by memstore.Actor) (*memstore.Version, error) {
	var v *memstore.Version
	err := db.write(ctx, func(tx *txn) (err error) {
		if _, err = storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		if v, err = getVersion(ctx, tx, storeID, id); err != nil || v.Redacted() {
			return err // redacting again keeps the first redaction
		}
		now := fromNanos(nanos(db.now()))
		if _, err := tx.exec(ctx, `UPDATE versions SET path = NULL, content = NULL, sha256 = NULL, size = NULL, redacted_at = ?, redactor_type = ?, redactor_id = ? WHERE store_id = ? AND id = ?`,
			nanos(now), string(by.Type), by.ID, storeID, id); err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, storeID, memstore.EventVersionRedacted, id, by, now); err != nil {
			return err
		}
		v.Redact(now, by)
		return nil
	})
	if err != nil {
		return nil, wrap(err, "redact version %s", id)
	}
	if err := db.ck.erase(ctx); err != nil {
		db.log.LogAttrs(ctx, slog.LevelWarn, "a redaction could not empty the write-ahead log", slog.String("version", id), slog.String("error", err.Error()))
		return nil, &memstore.Error{Code: memstore.EConflict, Retry: true,
			Message: fmt.Sprintf("version %s is redacted, but its former content may remain in the database's write-ahead log, which stayed busy; redact it again to finish", id)}
	}
	return v, nil
}
