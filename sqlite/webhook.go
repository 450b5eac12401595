package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/sqlrow"
)

// scanWebhook scans a row of sqlrow.WebhookColumns, whose events SQLite keeps
// as comma-separated text.
func scanWebhook(r interface{ Scan(...any) error }) (*memstore.WebhookEndpoint, error) {
	return sqlrow.ScanWebhook(row{r})
}

// webhookArgs are the values of w's row, in sqlrow.WebhookColumns' order, as
// SQLite keeps them.
func webhookArgs(w *memstore.WebhookEndpoint) []any { return args(sqlrow.WebhookValues(w)) }

// CreateWebhook implements memstore.WebhookStorage, checking q by
// withinQuota.
func (db *DB) CreateWebhook(ctx context.Context, workspaceID string, w memstore.WebhookEndpoint, q memstore.Quota) (*memstore.WebhookEndpoint, error) {
	w.ID, w.WorkspaceID = db.ids.New(memstore.WebhookIDPrefix, w.CreatedAt), workspaceID
	w.CreatedAt, w.UpdatedAt = fromNanos(nanos(w.CreatedAt)), fromNanos(nanos(w.UpdatedAt))
	err := db.write(ctx, func(tx *txn) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, q, `SELECT 1 FROM webhook_endpoints WHERE workspace_id = ?`, workspaceID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "INSERT INTO webhook_endpoints ("+sqlrow.WebhookColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", webhookArgs(&w)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "create webhook endpoint")
	}
	return &w, nil
}

// Webhook implements memstore.WebhookStorage.
func (db *DB) Webhook(ctx context.Context, workspaceID, id string) (*memstore.WebhookEndpoint, error) {
	w, err := scanWebhook(db.rs.queryRow(ctx, "SELECT "+sqlrow.WebhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrNoWebhook(id)
	}
	return w, wrap(translate(err), "get webhook endpoint %s", id)
}

// Webhooks implements memstore.WebhookStorage.
func (db *DB) Webhooks(ctx context.Context, workspaceID string) ([]memstore.WebhookEndpoint, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+sqlrow.WebhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? ORDER BY id", workspaceID)
	if err != nil {
		return nil, wrap(translate(err), "list webhook endpoints")
	}
	defer rows.Close()
	var out []memstore.WebhookEndpoint
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, wrap(err, "list webhook endpoints")
		}
		out = append(out, *w)
	}
	return out, wrap(translate(rows.Err()), "list webhook endpoints")
}

// ChangeWebhook implements memstore.WebhookStorage. An endpoint enabled
// again is first given the deliveries it is owed (drainPage).
func (db *DB) ChangeWebhook(ctx context.Context, workspaceID, id string, apply func(*memstore.WebhookEndpoint) error) (*memstore.WebhookEndpoint, error) {
	var w *memstore.WebhookEndpoint
	for drained := false; !drained; {
		err := db.write(ctx, func(tx *txn) error {
			var err error
			w, err = scanWebhook(tx.queryRow(ctx, "SELECT "+sqlrow.WebhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id))
			if errors.Is(err, sql.ErrNoRows) {
				return memstore.ErrNoWebhook(id)
			}
			if err != nil {
				return err
			}
			was := w.State
			if err := apply(w); err != nil {
				return err
			}
			if was != memstore.WebhookEnabled && w.State == memstore.WebhookEnabled {
				more, err := drainPage(ctx, tx, db.now(), drainEndpoint, id, workspaceID)
				if err != nil || more {
					return err // the page alone, then again
				}
			}
			drained = true
			w.UpdatedAt = fromNanos(nanos(w.UpdatedAt))
			_, err = tx.exec(ctx, "UPDATE webhook_endpoints SET (name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at) = (?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE id = ?",
				append(webhookArgs(w)[2:], id)...)
			return err
		})
		if err != nil {
			return nil, wrap(err, "change webhook endpoint %s", id)
		}
	}
	return w, nil
}

// DeleteWebhook implements memstore.WebhookStorage.
func (db *DB) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "DELETE FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memstore.ErrNoWebhook(id)
		}
		return nil
	})
	return wrap(err, "delete webhook endpoint %s", id)
}

const deliveryColumns = "endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at, state, attempts, next_attempt_at, last_attempt_at, last_status, last_error, dream_id"

func scanDelivery(row interface{ Scan(...any) error }, more ...any) (*memstore.WebhookDelivery, error) {
	var d memstore.WebhookDelivery
	var at, next, last int64
	e := &d.Event
	if err := row.Scan(append([]any{&d.EndpointID, &e.ID, &e.WorkspaceID, &e.Type, &e.StoreID, &e.MemoryID, &e.VersionID, &at,
		&d.State, &d.Attempts, &next, &last, &d.LastStatus, &d.LastError, &e.DreamID}, more...)...); err != nil {
		return nil, err
	}
	e.CreatedAt, d.NextAttemptAt = fromNanos(at), fromNanos(next)
	if last != 0 {
		t := fromNanos(last)
		d.LastAttemptAt = &t
	}
	return &d, nil
}

// ClaimWebhookDeliveries implements memstore.WebhookDeliveryStorage. It
// needs no SKIP LOCKED, unlike PostgreSQL's: the writer runs one claim at
// a time, and a SQLite file has no replicas claiming beside it.
func (db *DB) ClaimWebhookDeliveries(ctx context.Context, c memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	var out []memstore.WebhookDelivery
	err := db.write(ctx, func(tx *txn) error {
		var err error
		out, err = claimDeliveries(ctx, tx, c)
		return err
	})
	return out, wrap(err, "claim webhook deliveries")
}

// claimDeliveries is one statement that leases the deliveries c asks for
// and returns them: of the oldest due of the endpoints and workspaces
// with room, those within their endpoint's room, numbered by a window
// over each endpoint's (the most attempted first, so that the one probe
// of a paused endpoint is the delivery nearest to failing), then those
// within their workspace's room, numbered by a window over each
// workspace's that takes each endpoint's first before any second, and
// taken by that number, so that each workspace gets its first before
// any gets its second.
func claimDeliveries(ctx context.Context, tx *txn, c memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	// Most claims find nothing due (a memory's events are claimed as the
	// feed is read): one probe of the index by due time spares them the
	// statement below, which SQLite prepares again on every run.
	var due bool
	if err := tx.queryRow(ctx, "SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?)", nanos(c.Now)).Scan(&due); err != nil {
		return nil, err
	}
	if !due {
		return pullFeeds(ctx, tx, c, nil)
	}
	rooms, err := json.Marshal(c.EndpointRooms())
	if err != nil {
		return nil, err
	}
	spaces, err := json.Marshal(c.WorkspaceRooms())
	if err != nil {
		return nil, err
	}
	tx.wrote = true // the query updates
	rows, err := tx.query(ctx, `UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE (endpoint_id, event_id) IN (
			SELECT endpoint_id, event_id FROM (
				SELECT endpoint_id, event_id, next_attempt_at, space, row_number() OVER (PARTITION BY workspace_id ORDER BY nth, next_attempt_at, event_id) AS wnth
				FROM (
					SELECT endpoint_id, event_id, workspace_id, next_attempt_at, room, space,
						row_number() OVER (PARTITION BY endpoint_id ORDER BY attempts DESC, next_attempt_at, event_id) AS nth
					FROM (SELECT d.endpoint_id, d.event_id, d.workspace_id, d.next_attempt_at, d.attempts,
							coalesce(r.value, ?4) AS room, coalesce(s.value, ?7) AS space
						FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
							LEFT JOIN json_each(?5) r ON r.key = d.endpoint_id LEFT JOIN json_each(?8) s ON s.key = d.workspace_id
						WHERE d.state = 'pending' AND d.next_attempt_at <= ?1 AND e.state = 'enabled'
							AND coalesce(r.value, ?4) > 0 AND coalesce(s.value, ?7) > 0
						ORDER BY d.next_attempt_at LIMIT ?6))
				WHERE nth <= room)
			WHERE wnth <= space ORDER BY wnth, next_attempt_at LIMIT ?3)
		RETURNING `+deliveryColumns+`, (SELECT url FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id),
			(SELECT secret FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id)`,
		nanos(c.Now), nanos(c.Until), c.N, c.PerEndpoint, string(rooms), c.Scan(), c.WorkspaceCap(), string(spaces))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memstore.WebhookDelivery
	for rows.Next() {
		var url, secret string
		d, err := scanDelivery(rows, &url, &secret)
		if err != nil {
			return nil, err
		}
		d.URL, d.Secret, d.Lease = url, secret, d.NextAttemptAt
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	return pullFeeds(ctx, tx, c, out)
}

// pullFeeds adds to claimed, in the claim's room, deliveries of the
// events past the cursors of the feeds c names, and moves the cursors
// past what it read: one index probe per cursor to find those with
// events, one or two range reads of the feed for each of those. The
// cursor whose next event is the oldest goes first, so that a busy
// store's feed cannot keep another's waiting, and the room is shared
// fairly among workspaces and endpoints (memstore.FeedFill.Pull).
func pullFeeds(ctx context.Context, tx *txn, c memstore.WebhookClaim, claimed []memstore.WebhookDelivery) ([]memstore.WebhookDelivery, error) {
	fill := c.Fill(claimed)
	if fill.Done() {
		return claimed, nil
	}
	where, args := "w.state = 'enabled' AND instr(w.enabled_events, ?) > 0", []any{memstore.WebhookOwnPrefix}
	if !c.AllFeeds {
		b, err := json.Marshal(c.Changed)
		if err != nil {
			return nil, err
		}
		where, args = where+" AND c.store_id IN (SELECT value FROM json_each(?))", append(args, string(b))
	}
	cursors, err := feedCursors(ctx, tx, where+` ORDER BY (SELECT e.created_at FROM events e WHERE e.store_id = c.store_id AND e.seq > c.seq ORDER BY e.seq LIMIT 1)`, args...)
	if err != nil {
		return nil, err
	}
	keys := make([]memstore.FeedCursor, len(cursors))
	for i, cur := range cursors {
		keys[i] = memstore.FeedCursor{Endpoint: cur.w.ID, Workspace: cur.workspace}
	}
	err = fill.Pull(keys, func(i, n int) ([]memstore.WebhookDelivery, bool, error) {
		pulled, read, err := cursors[i].pull(ctx, tx, n, c.Until)
		return pulled, len(pulled) == n || read == memstore.FeedScan, err
	})
	if err != nil {
		return nil, err
	}
	return fill.Claimed, nil
}

// Which cursors a drain makes the deliveries of, due at once: those of a
// store about to be deleted, whose feed goes with it (of an enabled
// endpoint, or of a disabled one that is owed some), and those of an
// endpoint about to be enabled again, which is owed the changes up to
// where the feeds ended when it was disabled.
const (
	drainStore    = "c.store_id = ? AND s.workspace_id = ? AND (w.state = 'enabled' OR c.owed_to IS NOT NULL)"
	drainEndpoint = "c.endpoint_id = ? AND w.workspace_id = ? AND c.owed_to IS NOT NULL"
)

// drainPage makes the deliveries, due at now, of events that the cursors
// matching where (drainStore or drainEndpoint, with args) have still to
// pass: at most memstore.DrainCursors cursors and memstore.FeedScan events of
// each. more tells that some may be left. A deletion or change that
// needs its cursors drained calls it in its own transaction and, while
// more are left, commits the page alone and starts again: each
// transaction is bounded, and most need a single one.
func drainPage(ctx context.Context, tx *txn, now time.Time, where string, args ...any) (more bool, err error) {
	cursors, err := feedCursors(ctx, tx, where+fmt.Sprintf(" LIMIT %d", memstore.DrainCursors), args...)
	if err != nil {
		return false, err
	}
	for _, cur := range cursors {
		_, read, err := cur.pull(ctx, tx, memstore.FeedScan, now)
		if err != nil {
			return false, err
		}
		more = more || read == memstore.FeedScan
	}
	return more || len(cursors) == memstore.DrainCursors, nil
}

// A feedCursor is an endpoint's cursor in a store's feed.
type feedCursor struct {
	w         *memstore.WebhookEndpoint
	workspace string
	store     string
	seq       int64
	upto      int64 // the last event it may pass: its owed_to, if any
}

// noEnd is the upto of a cursor that owes nothing: the feed's end.
const noEnd = math.MaxInt64

// feedCursors returns the cursors, matching where, that have events to
// pass (up to owed_to, when set).
func feedCursors(ctx context.Context, tx *txn, where string, args ...any) ([]*feedCursor, error) {
	rows, err := tx.query(ctx, `SELECT `+sqlrow.Prefixed("w.", sqlrow.WebhookColumns)+`, c.store_id, c.seq, coalesce(c.owed_to, ?), s.workspace_id FROM webhook_cursors c
		JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN stores s ON s.id = c.store_id
		WHERE EXISTS (SELECT 1 FROM events e WHERE e.store_id = c.store_id AND e.seq > c.seq AND e.seq <= coalesce(c.owed_to, ?))
		AND `+where, append([]any{int64(noEnd), int64(noEnd)}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlrow.CollectRefs(rows, func(r sqlrow.Row) (cur *feedCursor, err error) {
		cur = &feedCursor{}
		cur.w, err = scanWebhook(sqlrow.Extra(r, &cur.store, &cur.seq, &cur.upto, &cur.workspace))
		return cur, err
	})
}

// pull makes the deliveries, claimed until until, of up to n events past
// the cursor that its endpoint asks for, reading at most
// memstore.FeedScan events (no further than upto), and moves the cursor
// past what it read, ending what it owed once it has passed it. It
// returns the deliveries and how many events it read.
func (cur *feedCursor) pull(ctx context.Context, tx *txn, n int, until time.Time) ([]memstore.WebhookDelivery, int, error) {
	rows, err := tx.query(ctx, `SELECT e.seq, e.type, coalesce(v.memory_id, ''), coalesce(e.version_id, ''), e.created_at
		FROM events e LEFT JOIN versions v ON v.store_id = e.store_id AND v.id = e.version_id
		WHERE e.store_id = ? AND e.seq > ? AND e.seq <= ? ORDER BY e.seq LIMIT ?`, cur.store, cur.seq, cur.upto, memstore.FeedScan)
	if err != nil {
		return nil, 0, err
	}
	var out []memstore.WebhookDelivery
	seq, read := cur.seq, 0
	for len(out) < n && rows.Next() {
		e := memstore.Event{StoreID: cur.store}
		var typ string
		var at int64
		if err := rows.Scan(&e.Seq, &typ, &e.MemoryID, &e.VersionID, &at); err != nil {
			rows.Close()
			return nil, 0, err
		}
		e.Type, e.CreatedAt = memstore.EventType(typ), fromNanos(at)
		if d, ok := memstore.FeedDelivery(cur.w, cur.workspace, &e, ids.FeedEvent(e.StoreID, e.Seq, e.CreatedAt), until); ok {
			out = append(out, d)
		}
		seq, read = e.Seq, read+1
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for i := range out {
		if err := insertDelivery(ctx, tx, &out[i]); err != nil {
			return nil, 0, err
		}
	}
	if _, err := tx.exec(ctx, "UPDATE webhook_cursors SET seq = ?, owed_to = CASE WHEN owed_to <= ? THEN NULL ELSE owed_to END WHERE endpoint_id = ? AND store_id = ?",
		seq, seq, cur.w.ID, cur.store); err != nil {
		return nil, 0, err
	}
	cur.seq = seq
	return out, read, nil
}

// insertDelivery adds delivery d as it stands.
func insertDelivery(ctx context.Context, tx *txn, d *memstore.WebhookDelivery) error {
	var last int64
	if d.LastAttemptAt != nil {
		last = nanos(*d.LastAttemptAt)
	}
	e := &d.Event
	_, err := tx.exec(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.EndpointID, e.ID, e.WorkspaceID, e.Type, e.StoreID, e.MemoryID, e.VersionID, nanos(e.CreatedAt),
		string(d.State), d.Attempts, nanos(d.NextAttemptAt), last, d.LastStatus, d.LastError, e.DreamID)
	return err
}

// RecordWebhookAttempts implements memstore.WebhookDeliveryStorage: a
// prepared statement per attempt, which measured no dearer than one
// statement for the batch.
func (db *DB) RecordWebhookAttempts(ctx context.Context, attempts []memstore.WebhookAttempt, now time.Time, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	var claimed []memstore.WebhookDelivery
	err := db.write(ctx, func(tx *txn) error {
		claimed = nil // a retried transaction starts again
		for _, a := range attempts {
			d := a.Delivery
			var last int64
			if d.LastAttemptAt != nil {
				last = nanos(*d.LastAttemptAt)
			}
			res, err := tx.exec(ctx, "UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, last_status = ?, last_error = ? WHERE endpoint_id = ? AND event_id = ? AND state = 'pending' AND next_attempt_at = ?",
				string(d.State), d.Attempts, nanos(d.NextAttemptAt), last, d.LastStatus, d.LastError, d.EndpointID, d.Event.ID, nanos(d.Lease))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 || a.Disable == "" {
				continue // a lease lost is no attempt of this claim's
			}
			if _, err := tx.exec(ctx, "UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND state = 'enabled'",
				a.Disable, nanos(now), d.EndpointID); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		var err error
		claimed, err = claimDeliveries(ctx, tx, *next)
		return err
	})
	return claimed, wrap(err, "record webhook deliveries")
}

// WebhookDeliveries implements memstore.WebhookDeliveryStorage.
func (db *DB) WebhookDeliveries(ctx context.Context, workspaceID, endpointID string, n int) ([]memstore.WebhookDelivery, error) {
	var out []memstore.WebhookDelivery
	err := db.read(ctx, func(tx *txn) error {
		var found int
		if err := tx.queryRow(ctx, "SELECT count(*) FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, endpointID).Scan(&found); err != nil {
			return err
		}
		if found == 0 {
			return memstore.ErrNoWebhook(endpointID)
		}
		rows, err := tx.query(ctx, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY event_id DESC LIMIT ?", endpointID, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return err
			}
			out = append(out, *d)
		}
		return rows.Err()
	})
	return out, wrap(err, "list the deliveries of %s", endpointID)
}

// PruneWebhookDeliveries implements memstore.WebhookDeliveryStorage. An
// event's ID begins with its time, so the events before before are, for
// each endpoint, a range of the primary key (the schema keeps no index
// by age).
func (db *DB) PruneWebhookDeliveries(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id IN (SELECT id FROM webhook_endpoints) AND event_id < ?
			AND (state <> 'pending' OR endpoint_id IN (SELECT id FROM webhook_endpoints WHERE state <> 'enabled'))`, ids.Floor(memstore.WebhookEventIDPrefix, before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, wrap(err, "prune webhook deliveries")
}
