package sqlread

import (
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// SessionEvents lists the events of a session of the workspace by f, in
// the order of their numbers: one range of the table's primary key per
// page. The cursor names the session, so that one session's cursor is
// refused by another's list.
func SessionEvents(read Read, d *Dialect, workspaceID, sessionID string, f memstore.SessionEventFilter) (memstore.Page[memstore.SessionEvent], error) {
	var page memstore.Page[memstore.SessionEvent]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	kind, order, cmp := keyset.SessionEvents, "", ">"
	if f.Descending {
		kind, order, cmp = keyset.SessionEventsDesc, " DESC", "<"
	}
	cur, err := keyset.Parse(f.Page, kind)
	if err != nil {
		return page, err
	}
	if cur != nil && cur.Key != sessionID {
		return page, memstore.Errorf(memstore.EInvalid, "page %q is a cursor of another session's events", f.Page)
	}
	q := d.Query(sessionID)
	where := `session_id = ` + d.Param(1)
	switch {
	case cur != nil:
		where += ` AND seq ` + cmp + ` ` + q.Arg(cur.Seq)
	case f.AfterSeq > 0:
		where += ` AND seq > ` + q.Arg(f.AfterSeq)
	}
	for _, b := range []struct {
		at *time.Time
		op string
	}{{f.CreatedAtGT, ">"}, {f.CreatedAtGTE, ">="}, {f.CreatedAtLT, "<"}, {f.CreatedAtLTE, "<="}} {
		if b.at != nil {
			where += ` AND processed_at ` + b.op + ` ` + q.Arg(keyset.Nanos(*b.at))
		}
	}
	if len(f.Types) > 0 {
		where += ` AND ` + d.OneOf(q, "type", f.Types)
	}
	full := false // more events follow the page
	err = read(func(tx Tx) error {
		if err := sessionExists(tx, d, workspaceID, sessionID); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT `+sqlrow.SessionEventColumns+` FROM session_events WHERE `+where+` ORDER BY seq`+order+` LIMIT `+q.Arg(n+1), q.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Items, full = nil, false
		// The page ends early rather than hold more than
		// MaxSessionEventPageBytes of events; the next page starts at
		// the event left out.
		size := 0
		for rows.Next() {
			e, err := sqlrow.ScanSessionEvent(rows)
			if err != nil {
				return err
			}
			if size += len(e.Body); len(page.Items) > 0 && size > memstore.MaxSessionEventPageBytes {
				full = true
				break
			}
			page.Items = append(page.Items, *e)
		}
		return rows.Err()
	})
	if err != nil {
		return page, err
	}
	if page.Items == nil {
		page.Items = []memstore.SessionEvent{}
	}
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		full = true
	}
	if full {
		page.Next = keyset.Cursor{Kind: kind, Key: sessionID, Seq: page.Items[len(page.Items)-1].Seq}.String()
	}
	return page, nil
}
