package sqlread

import (
	"context"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlrow"
)

// OverviewReads is the reads of memstore.OverviewStorage, which both SQL
// backends embed, over the same transactions as their SessionReads.
type OverviewReads SessionReads

// nanosPerHour turns a created_at (nanoseconds since 1970) into the
// hour of the table change_counts.
const nanosPerHour = int64(time.Hour)

// ChangeCounts implements memstore.OverviewStorage: a range of the key of
// change_counts (store, hour, kind of actor) per store, which triggers on
// versions keep (every insert of a version adds one, a restore's too);
// the stores are the workspace's only (a join on stores).
func (r OverviewReads) ChangeCounts(ctx context.Context, workspaceID string, storeIDs []string, since time.Time, hours int) ([]memstore.ChangeCount, error) {
	d := r.Dialect
	from := since.UnixNano() / nanosPerHour
	q := d.Query(workspaceID, from, hours)
	var out []memstore.ChangeCount
	err := r.Read(ctx)(func(tx Tx) error {
		rows, err := tx.Query(`SELECT c.store_id, c.actor_type, (c.hour - `+d.Param(2)+`) / `+d.Param(3)+`, SUM(c.changes)
			FROM change_counts c JOIN stores s ON s.id = c.store_id
			WHERE s.workspace_id = `+d.Param(1)+` AND `+d.OneOf(q, "c.store_id", storeIDs)+` AND c.hour >= `+d.Param(2)+`
			GROUP BY 1, 2, 3`, q.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out, err = sqlrow.Collect(rows, func(row sqlrow.Row) (*memstore.ChangeCount, error) {
			var n memstore.ChangeCount
			var actor string
			var period int64
			if err := row.Scan(&n.StoreID, &actor, &period, &n.Changes); err != nil {
				return nil, err
			}
			n.Actor = memstore.ActorType(actor)
			n.Start = time.Unix(0, (from+period*int64(hours))*nanosPerHour).UTC()
			return &n, nil
		})
		return err
	})
	return out, r.Wrap(err, "count changes")
}

// LiveSessions implements memstore.OverviewStorage, on the index
// sessions_live.
func (r OverviewReads) LiveSessions(ctx context.Context, workspaceID string) (n int64, err error) {
	err = r.Read(ctx)(func(tx Tx) error {
		return tx.QueryRow(r.Dialect.SQL(`SELECT count(*) FROM sessions WHERE workspace_id = $1 AND archived_at IS NULL`), workspaceID).Scan(&n)
	})
	return n, r.Wrap(err, "count sessions")
}
