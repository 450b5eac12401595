package sqlread

import (
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dream reads a dream of the workspace (ENotFound), locked until tx ends
// by lock ("" for none).
func Dream(tx Tx, d *Dialect, workspaceID, id, lock string) (*memstore.Dream, error) {
	dr, err := sqlrow.ScanDream(tx.QueryRow(d.SQL(`SELECT `+sqlrow.DreamColumns+` FROM dreams WHERE id = $1 AND workspace_id = $2 `+lock), id, workspaceID))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrDreamNotFound(id))
	}
	return dr, nil
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
	var page memstore.Page[memstore.Dream]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	cur, err := keyset.Parse(f.Page, keyset.Dreams)
	if err != nil {
		return page, err
	}
	q := d.Query(workspaceID)
	where := []string{"workspace_id = " + d.Param(1)}
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
	if cur != nil {
		where = append(where, "(created_at, id) < ("+q.Arg(cur.Time)+", "+q.Arg(cur.Key)+")")
	}
	err = read(func(tx Tx) error {
		rows, err := tx.Query(`SELECT `+sqlrow.DreamColumns+` FROM dreams WHERE `+strings.Join(where, " AND ")+
			` ORDER BY created_at DESC, id DESC LIMIT `+q.Arg(n+1), q.Args...)
		page.Items, err = collect(rows, err, sqlrow.ScanDream)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.Dream]{}, err
	}
	return keyset.ByTime(page.Items, n, keyset.Dreams, func(dr *memstore.Dream) (time.Time, string) { return dr.CreatedAt, dr.ID }), nil
}
