package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// versionColumns are the columns of a version's row (sqlrow.ScanVersion),
// with its content when full.
func versionColumns(full bool) string { return sqlrow.VersionColumns(full, "NULL::bytea") }

func getVersion(ctx context.Context, tx pgx.Tx, storeID, id, lock string) (*memstore.Version, error) {
	v, err := sqlrow.ScanVersion(tx.QueryRow(ctx, `SELECT `+versionColumns(true)+` FROM versions WHERE id = $1 AND store_id = $2 `+lock, id, storeID))
	return v, notFound(err, memstore.ErrVersionNotFound(id))
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
	cur, err := keyset.Parse(f.Page, keyset.Versions)
	if err != nil {
		return page, err
	}
	q := newQuery(storeID)
	where := []string{"store_id = $1"}
	add := func(cond string, arg any) { where = append(where, cond+" "+q.Arg(arg)) }
	if f.MemoryID != "" {
		add("memory_id =", f.MemoryID)
	}
	if f.Operation != "" {
		add("operation =", string(f.Operation))
	}
	for _, a := range []struct {
		t  memstore.ActorType
		id string
	}{{memstore.ActorSession, f.SessionID}, {memstore.ActorAPIKey, f.APIKeyID}, {memstore.ActorServiceAccount, f.ServiceAccountID}} {
		if a.id != "" {
			add("actor_type =", string(a.t))
			add("actor_id =", a.id)
		}
	}
	if f.CreatedAtGTE != nil {
		add("created_at >=", keyset.Nanos(*f.CreatedAtGTE))
	}
	if f.CreatedAtLTE != nil {
		add("created_at <=", keyset.Nanos(*f.CreatedAtLTE))
	}
	if cur != nil {
		add("id <", cur.Key)
	}
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID, false); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+versionColumns(f.Full)+` FROM versions WHERE `+strings.Join(where, " AND ")+
			` ORDER BY id DESC LIMIT `+q.Arg(n+1), q.Args...)
		if err != nil {
			return err
		}
		page.Items, err = collect(rows, sqlrow.ScanVersion)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.Version]{}, wrap(err, "list versions")
	}
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		page.Next = keyset.Cursor{Kind: keyset.Versions, Key: page.Items[n-1].ID}.String()
	}
	return page, nil
}

// Version implements memstore.VersionStorage.
func (db *DB) Version(ctx context.Context, workspaceID, storeID, id string) (*memstore.Version, error) {
	var v *memstore.Version
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) (err error) {
		if _, err = storeState(ctx, tx, workspaceID, storeID, false); err != nil {
			return err
		}
		v, err = getVersion(ctx, tx, storeID, id, "")
		return err
	})
	return v, wrap(err, "get version %s", id)
}

// RedactVersion implements memstore.VersionStorage: one UPDATE sets the
// path, content, hash and size to NULL together, so that no reader ever
// sees part of them. The live memory is left alone even when this is its
// current version. PostgreSQL keeps the old row version until vacuum
// reclaims it; nothing memstore serves reads it.
func (db *DB) RedactVersion(ctx context.Context, workspaceID, storeID, id string, by memstore.Actor) (*memstore.Version, error) {
	var v *memstore.Version
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		// The store's lock, as every write that adds an event takes it.
		if _, err = storeState(ctx, tx, workspaceID, storeID, true); err != nil {
			return err
		}
		if v, err = getVersion(ctx, tx, storeID, id, "FOR UPDATE"); err != nil || v.Redacted() {
			return err // redacting again keeps the first redaction
		}
		now := db.stamp()
		if _, err := tx.Exec(ctx, `UPDATE versions SET path = NULL, content = NULL, sha256 = NULL, size = NULL, redacted_at = $1, redactor_type = $2, redactor_id = $3 WHERE id = $4`,
			keyset.Nanos(now), string(by.Type), by.ID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertEvent("$1", "$2", "$3", "$4", "$5", "$6"),
			storeID, string(memstore.EventVersionRedacted), id, string(by.Type), by.ID, keyset.Nanos(now)); err != nil {
			return err
		}
		v.Redact(now, by)
		return nil
	})
	if err != nil {
		return nil, wrap(err, "redact version %s", id)
	}
	db.evented(storeID)
	return v, nil
}
