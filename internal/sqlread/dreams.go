package sqlread

import (
	"errors"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dream reads a dream of the workspace (ENotFound), locked until tx ends
// by lock ("" for none).
func Dream(tx Tx, d *Dialect, workspaceID, id, lock string) (*memstore.Dream, error) {
	dr, err := sqlrow.ScanDream(tx.QueryRow(d.SQL(`SELECT `+sqlrow.DreamColumns+` FROM dreams WHERE id = $1 AND workspace_id = $2`+lockClause(lock)), id, workspaceID))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrDreamNotFound(id))
	}
	return dr, nil
}

// UpdatingDream reads the ID of an update_existing dream of store
// storeID that has not stopped at now ("" for none): pending or running,
// or canceled while its worker's lease still holds.
func UpdatingDream(tx Tx, d *Dialect, workspaceID, storeID string, now time.Time) (string, error) {
	var id string
	err := tx.QueryRow(d.SQL(`SELECT id FROM dreams WHERE workspace_id = $1 AND input_store_id = $2 AND output_behavior = $3
		AND (status IN ('pending', 'running') OR (status = 'canceled' AND owner <> '' AND lease_until > $4)) LIMIT 1`),
		workspaceID, storeID, memstore.OutputUpdateExisting, keyset.Nanos(now)).Scan(&id)
	if errors.Is(err, d.NoRows) {
		return "", nil
	}
	return id, err
}

// DreamByID reads a dream of whichever workspace (ENotFound).
func DreamByID(tx Tx, d *Dialect, id string) (*memstore.Dream, error) {
	dr, err := sqlrow.ScanDream(tx.QueryRow(d.SQL(`SELECT `+sqlrow.DreamColumns+` FROM dreams WHERE id = $1`), id))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrDreamNotFound(id))
	}
	return dr, nil
}

// Dreams lists the dreams of a workspace newest first, with keyset
// pagination on (created_at, id): one range of dreams_by_workspace per
// page.
func Dreams(read Read, d *Dialect, workspaceID string, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	return dreamList.page(read, d, workspaceID, f.Limit, f.Page, func(q *Query) (where []string) {
		if !f.IncludeArchived {
			where = append(where, "archived_at IS NULL")
		}
		if len(f.Statuses) > 0 {
			statuses := make([]string, len(f.Statuses))
			for i, s := range f.Statuses {
				statuses[i] = string(s)
			}
			where = append(where, d.OneOf(q, "status", statuses))
		}
		if f.CreatedAtGT != nil {
			where = append(where, "created_at > "+q.Arg(keyset.Nanos(*f.CreatedAtGT)))
		}
		if f.CreatedAtLT != nil {
			where = append(where, "created_at < "+q.Arg(keyset.Nanos(*f.CreatedAtLT)))
		}
		return where
	})
}

var dreamList = newestFirst[memstore.Dream]{
	table: "dreams", columns: sqlrow.DreamColumns, kind: keyset.Dreams, scan: sqlrow.ScanDream,
	key: func(dr *memstore.Dream) (time.Time, string) { return dr.CreatedAt, dr.ID },
}
