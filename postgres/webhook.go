package postgres

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// CreateWebhook implements memstore.WebhookStorage, checking q by
// withinQuota.
func (db *DB) CreateWebhook(ctx context.Context, workspaceID string, w memstore.WebhookEndpoint, q memstore.Quota) (*memstore.WebhookEndpoint, error) {
	w.ID, w.WorkspaceID = db.ids.New(memstore.WebhookIDPrefix, w.CreatedAt), workspaceID
	w.CreatedAt, w.UpdatedAt = keyset.Time(keyset.Nanos(w.CreatedAt)), keyset.Time(keyset.Nanos(w.UpdatedAt))
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, q, "webhook_endpoints "+workspaceID, `SELECT 1 FROM webhook_endpoints WHERE workspace_id = $1`, workspaceID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (`+sqlrow.WebhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, sqlrow.WebhookValues(&w)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "create webhook endpoint")
	}
	return &w, nil
}

// Webhook implements memstore.WebhookStorage.
func (db *DB) Webhook(ctx context.Context, workspaceID, id string) (*memstore.WebhookEndpoint, error) {
	w, err := sqlrow.ScanWebhook(db.pool.QueryRow(ctx, `SELECT `+sqlrow.WebhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoWebhook(id)), "get webhook endpoint %s", id)
	}
	return w, nil
}

// Webhooks implements memstore.WebhookStorage.
func (db *DB) Webhooks(ctx context.Context, workspaceID string) ([]memstore.WebhookEndpoint, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+sqlrow.WebhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY id`, workspaceID)
	if err != nil {
		return nil, wrap(err, "list webhook endpoints")
	}
	defer rows.Close()
	var out []memstore.WebhookEndpoint
	for rows.Next() {
		w, err := sqlrow.ScanWebhook(rows)
		if err != nil {
			return nil, wrap(err, "list webhook endpoints")
		}
		out = append(out, *w)
	}
	return out, wrap(rows.Err(), "list webhook endpoints")
}

// ChangeWebhook implements memstore.WebhookStorage, with the endpoint's
// row locked from its read to its write. A change that enables a
// disabled endpoint first makes the deliveries of the events owed to it
// (payOwed), and then, in its own transaction, those owed since, before
// the trigger moves its cursors past the changes made while it was
// disabled.
func (db *DB) ChangeWebhook(ctx context.Context, workspaceID, id string, apply func(*memstore.WebhookEndpoint) error) (*memstore.WebhookEndpoint, error) {
	if err := db.payOwed(ctx, workspaceID, id, apply); err != nil {
		return nil, wrap(err, "change webhook endpoint %s", id)
	}
	var w *memstore.WebhookEndpoint
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		w, err = sqlrow.ScanWebhook(tx.QueryRow(ctx, `SELECT `+sqlrow.WebhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, workspaceID, id))
		if err != nil {
			return notFound(err, memstore.ErrNoWebhook(id))
		}
		was := w.State
		if err := apply(w); err != nil {
			return err
		}
		if enables(was, w.State) {
			if _, err := drainCursors(ctx, tx, cursorsOwed+" AND c.endpoint_id = $1", false, db.now(), id); err != nil {
				return err
			}
		}
		w.UpdatedAt = keyset.Time(keyset.Nanos(w.UpdatedAt))
		_, err = tx.Exec(ctx, `UPDATE webhook_endpoints SET (name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at) = ($1, $2, $3, $4, $5, $6, $7, $8, $9) WHERE id = $10`,
			append(sqlrow.WebhookValues(w)[2:], id)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "change webhook endpoint %s", id)
	}
	return w, nil
}

// enables reports whether a change of an endpoint's state from was to
// now enables it.
func enables(was, now memstore.WebhookState) bool {
	return was != memstore.WebhookEnabled && now == memstore.WebhookEnabled
}

// payOwed makes, when apply would enable the disabled endpoint id, the
// deliveries of the events owed to it, due at once, a page per
// transaction: so that the transaction of the change itself has only
// what was owed since to make, and no transaction grows with the
// backlog. The deliveries of a disabled endpoint wait, pending, for it
// to be enabled. The endpoint's row is locked (KEY SHARE) before its
// cursors, in the order of its change and deletion. Apply is called on
// a copy, as the change's transaction may call it again anyway; an
// endpoint not found, or a change apply refuses, is left for that
// transaction to report.
func (db *DB) payOwed(ctx context.Context, workspaceID, id string, apply func(*memstore.WebhookEndpoint) error) error {
	w, err := db.Webhook(ctx, workspaceID, id)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	was := w.State
	w.EnabledEvents = slices.Clone(w.EnabledEvents)
	if apply(w) != nil || !enables(was, w.State) {
		return nil
	}
	now := db.now()
	for more := true; more; {
		err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
			if _, err := tx.Exec(ctx, `SELECT FROM webhook_endpoints WHERE id = $1 FOR KEY SHARE`, id); err != nil {
				return err
			}
			more, err = drainCursors(ctx, tx, cursorsOwed+" AND c.endpoint_id = $1", true, now, id)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteWebhook implements memstore.WebhookStorage.
func (db *DB) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = memstore.ErrNoWebhook(id)
	}
	return wrap(err, "delete webhook endpoint %s", id)
}

const deliveryColumns = "d.endpoint_id, d.event_id, d.workspace_id, d.type, d.store_id, d.memory_id, d.version_id, d.event_at, d.state, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status, d.last_error, d.dream_id"

func scanDelivery(r row, more ...any) (*memstore.WebhookDelivery, error) {
	var d memstore.WebhookDelivery
	var at, next, last int64
	e := &d.Event
	if err := r.Scan(append([]any{&d.EndpointID, &e.ID, &e.WorkspaceID, &e.Type, &e.StoreID, &e.MemoryID, &e.VersionID, &at,
		&d.State, &d.Attempts, &next, &last, &d.LastStatus, &d.LastError, &e.DreamID}, more...)...); err != nil {
		return nil, err
	}
	e.CreatedAt, d.NextAttemptAt = keyset.Time(at), keyset.Time(next)
	if last != 0 {
		t := keyset.Time(last)
		d.LastAttemptAt = &t
	}
	return &d, nil
}

// ClaimWebhookDeliveries implements memstore.WebhookDeliveryStorage.
func (db *DB) ClaimWebhookDeliveries(ctx context.Context, c memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	var out []memstore.WebhookDelivery
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		var err error
		out, err = claimDeliveries(ctx, tx, c)
		return err
	})
	return out, wrap(err, "claim webhook deliveries")
}

// claimDeliveries leases the due deliveries c asks for, in one
// statement, and then pulls from the feeds into the room left. The
// oldest due rows of the endpoints and workspaces with room are locked
// with SKIP LOCKED, so that the deliverers of several replicas claim
// different deliveries (PostgreSQL's alone: SQLite has no replicas, and
// its writer runs one claim at a time); of those, a window over each
// endpoint's keeps what fits its room (the most attempted first, so that the one probe
// of a paused endpoint is the delivery nearest to failing), and a window
// over each workspace's, which takes each endpoint's first before any
// second, keeps what fits the workspace's room and orders the claim so
// that each workspace gets its first before any gets its second (a
// window cannot share a query level with FOR UPDATE).
func claimDeliveries(ctx context.Context, tx pgx.Tx, c memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	endpoints, rooms := columns(c.EndpointRooms())
	workspaces, spaces := columns(c.WorkspaceRooms())
	rows, err := tx.Query(ctx, `WITH due AS (
			SELECT d.endpoint_id, d.event_id, d.workspace_id, d.next_attempt_at, d.attempts, coalesce(r.n, $4) AS room, coalesce(s.n, $8) AS space
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
				LEFT JOIN unnest($5::text[], $6::integer[]) AS r (endpoint, n) ON r.endpoint = d.endpoint_id
				LEFT JOIN unnest($9::text[], $10::integer[]) AS s (workspace, n) ON s.workspace = d.workspace_id
			WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND e.state = 'enabled' AND coalesce(r.n, $4) > 0 AND coalesce(s.n, $8) > 0
			ORDER BY d.next_attempt_at LIMIT $7 FOR UPDATE OF d SKIP LOCKED),
		numbered AS (
			SELECT *, row_number() OVER (PARTITION BY endpoint_id ORDER BY attempts DESC, next_attempt_at, event_id) AS nth FROM due),
		c AS (
			SELECT endpoint_id, event_id FROM (
				SELECT endpoint_id, event_id, next_attempt_at, space,
					row_number() OVER (PARTITION BY workspace_id ORDER BY nth, next_attempt_at, event_id) AS wnth
				FROM numbered WHERE nth <= room) w
			WHERE wnth <= space ORDER BY wnth, next_attempt_at LIMIT $3)
		UPDATE webhook_deliveries d SET next_attempt_at = $2 FROM c, webhook_endpoints e
		WHERE d.endpoint_id = c.endpoint_id AND d.event_id = c.event_id AND e.id = d.endpoint_id
		RETURNING `+deliveryColumns+`, e.url, e.secret`, keyset.Nanos(c.Now), keyset.Nanos(c.Until), c.N, c.PerEndpoint, endpoints, rooms, c.Scan(),
		c.WorkspaceCap(), workspaces, spaces)
	if err != nil {
		return nil, err
	}
	out, err := collect(rows, func(r row) (*memstore.WebhookDelivery, error) {
		var url, secret string
		d, err := scanDelivery(r, &url, &secret)
		if err == nil {
			d.URL, d.Secret, d.Lease = url, secret, d.NextAttemptAt
		}
		return d, err
	})
	if err != nil {
		return nil, err
	}
	return pullFeeds(ctx, tx, c, out)
}

// columns is m as two arrays, of its keys and of their values.
func columns(m map[string]int) ([]string, []int32) {
	keys, values := make([]string, 0, len(m)), make([]int32, 0, len(m))
	for k, v := range m {
		keys, values = append(keys, k), append(values, int32(v))
	}
	return keys, values
}

// pullFeeds adds to claimed, in the claim's room, deliveries of the
// events past the cursors of the feeds c names, and moves the cursors
// past what it read. The cursors are locked with SKIP LOCKED, so that
// another replica's claim passes over those this one moves, and their
// endpoints' rows too (KEY SHARE, which the deliveries' foreign key takes
// anyway): a claim that locked a cursor and then waited for its endpoint
// would deadlock with the endpoint's deletion, which deletes the cursor.
// The endpoints without room are left out, so that their cursors stay
// free for the replicas that have some. The cursor whose next event is
// the oldest is served first, so that a feed that grows faster than the
// claims take does not hold back the events of the others, and the room
// is shared fairly among workspaces and endpoints
// (memstore.FeedFill.Pull).
func pullFeeds(ctx context.Context, tx pgx.Tx, c memstore.WebhookClaim, claimed []memstore.WebhookDelivery) ([]memstore.WebhookDelivery, error) {
	fill := c.Fill(claimed)
	if fill.Done() {
		return claimed, nil
	}
	q := newQuery(fill.Full()) // never nil, which would be NULL and match nothing
	where := cursorsClaimed + " AND w.id <> ALL ($1)"
	if !c.AllFeeds {
		where += " AND c.store_id = ANY (" + q.Arg(c.Changed) + ")"
	}
	cursors, err := feedCursors(ctx, tx, where, `ORDER BY (SELECT e.created_at FROM events e WHERE e.store_id = c.store_id AND e.seq > c.seq ORDER BY e.seq LIMIT 1)
		FOR UPDATE OF c SKIP LOCKED FOR KEY SHARE OF w SKIP LOCKED`, q.Args...)
	if err != nil {
		return nil, err
	}
	keys := make([]memstore.FeedCursor, len(cursors))
	for i, cur := range cursors {
		keys[i] = memstore.FeedCursor{Endpoint: cur.w.ID, Workspace: cur.w.WorkspaceID}
	}
	err = fill.Pull(keys, func(i, n int) ([]memstore.WebhookDelivery, bool, error) {
		pulled, done, err := cursors[i].pull(ctx, tx, n, c.Until)
		return pulled, !done, err
	})
	if err != nil {
		return nil, err
	}
	return fill.Claimed, nil
}

// flushFeed makes every delivery, due at now, that the cursors in store
// storeID's feed have still to make (drainCursors): before the store's
// deletion takes its feed with it. The caller holds the store's row
// locked, so that no event is added meanwhile, and has made those of
// the feed as it stood before (drainFeed), so that only the events added
// since are left. The endpoints of the workspace are locked first
// (lockEndpoints).
func flushFeed(ctx context.Context, tx pgx.Tx, workspaceID, storeID string, now time.Time) error {
	if err := lockEndpoints(ctx, tx, workspaceID); err != nil {
		return err
	}
	_, err := drainCursors(ctx, tx, cursorsToPass+" AND c.store_id = $1", false, now, storeID)
	return err
}

// drainFeed makes the deliveries, due at once, that the cursors in store
// storeID's feed have to make up to the feed's end as it stands, a page
// per transaction: before the store's deletion, whose transaction then
// has only the events added since to make (flushFeed), so that no
// transaction grows with the backlog. The store's row is not locked, so
// that its writers go on meanwhile.
func (db *DB) drainFeed(ctx context.Context, workspaceID, storeID string) error {
	var end int64
	if err := db.pool.QueryRow(ctx, `SELECT webhook_feed_end($1)`, storeID).Scan(&end); err != nil {
		return err
	}
	now := db.now()
	for more := true; more; {
		err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
			if err := lockEndpoints(ctx, tx, workspaceID); err != nil {
				return err
			}
			more, err = drainCursors(ctx, tx, cursorsToPass+" AND c.store_id = $1 AND c.seq < $2 AND w.workspace_id = $3", true, now, storeID, end, workspaceID)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// lockEndpoints locks the endpoints of a workspace (KEY SHARE, which the
// deliveries' foreign key takes anyway) before a drain of a store's
// cursors locks them, waiting for the claims that hold them: in that
// order, the deletion or change of an endpoint, which locks its row and
// then its cursors, waits for the drain or the drain for it, and neither
// deadlocks.
func lockEndpoints(ctx context.Context, tx pgx.Tx, workspaceID string) error {
	_, err := tx.Exec(ctx, `SELECT FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY id FOR KEY SHARE`, workspaceID)
	return err
}

// The cursors with events to pass: those that the claims move, of
// enabled endpoints that ask for memstore's own events, and those owed
// events, which are passed up to where they are owed.
const (
	cursorsClaimed = `(w.state = 'enabled' AND webhook_asks_feed(w.enabled_events)
		AND EXISTS (SELECT 1 FROM events e WHERE e.store_id = c.store_id AND e.seq > c.seq))`
	cursorsOwed   = `c.owed_to IS NOT NULL`
	cursorsToPass = "(" + cursorsClaimed + " OR " + cursorsOwed + ")"
)

// drainCursors makes the deliveries, due at now, of the events that the
// cursors matching where have to pass, and moves the cursors past them:
// all of them, or when paged, a page (memstore.DrainCursors). It reports
// whether it found a cursor to move. The caller has locked the cursors'
// endpoints (KEY SHARE) first; the cursors are locked in one order,
// waiting for the claims that hold them.
func drainCursors(ctx context.Context, tx pgx.Tx, where string, paged bool, now time.Time, args ...any) (bool, error) {
	tail, pulls := "ORDER BY c.endpoint_id, c.store_id", -1
	if paged {
		tail, pulls = tail+" LIMIT "+strconv.Itoa(memstore.DrainCursors), 1
	}
	cursors, err := feedCursors(ctx, tx, where, tail+" FOR UPDATE OF c", args...)
	if err != nil {
		return false, err
	}
	for _, cur := range cursors {
		for i, done := 0, false; !done && i != pulls; i++ {
			if _, done, err = cur.pull(ctx, tx, memstore.FeedScan, now); err != nil {
				return false, err
			}
		}
	}
	return len(cursors) > 0, nil
}

// A feedCursor is an endpoint's cursor in a store's feed.
type feedCursor struct {
	w      *memstore.WebhookEndpoint
	store  string
	seq    int64
	owedTo *int64 // nil when nothing is owed
}

// feedCursors returns the cursors matching where, with their endpoints
// (w); tail orders, limits and locks them.
func feedCursors(ctx context.Context, tx pgx.Tx, where, tail string, args ...any) ([]*feedCursor, error) {
	rows, err := tx.Query(ctx, `SELECT `+sqlrow.Prefixed("w.", sqlrow.WebhookColumns)+`, c.store_id, c.seq, c.owed_to FROM webhook_cursors c
		JOIN webhook_endpoints w ON w.id = c.endpoint_id
		WHERE `+where+` `+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlrow.CollectRefs(rows, func(r row) (cur *feedCursor, err error) {
		cur = &feedCursor{}
		cur.w, err = sqlrow.ScanWebhook(sqlrow.Extra(r, &cur.store, &cur.seq, &cur.owedTo))
		return cur, err
	})
}

// pull makes the deliveries, claimed until until, of up to n events past
// the cursor that its endpoint asks for, by the types it asks for now,
// reading at most memstore.FeedScan events, and moves the cursor past
// what it read: the deliveries and the cursor's move go in one round
// trip. A cursor owed events reads no further than where they are owed.
// Pull reports whether the cursor passed all it had to; an owed cursor
// then owes nothing more.
func (cur *feedCursor) pull(ctx context.Context, tx pgx.Tx, n int, until time.Time) ([]memstore.WebhookDelivery, bool, error) {
	last := int64(math.MaxInt64)
	if cur.owedTo != nil {
		last = *cur.owedTo
	}
	rows, err := tx.Query(ctx, `SELECT e.seq, e.type, coalesce(v.memory_id, ''), coalesce(e.version_id, ''), e.created_at
		FROM events e LEFT JOIN versions v ON v.id = e.version_id
		WHERE e.store_id = $1 AND e.seq > $2 AND e.seq <= $3 ORDER BY e.seq LIMIT $4`, cur.store, cur.seq, last, memstore.FeedScan)
	if err != nil {
		return nil, false, err
	}
	var out []memstore.WebhookDelivery
	seq, read, full := cur.seq, 0, false
	for rows.Next() {
		if full = len(out) >= n; full {
			break
		}
		read++
		e := memstore.Event{StoreID: cur.store}
		var typ string
		var at int64
		if err := rows.Scan(&e.Seq, &typ, &e.MemoryID, &e.VersionID, &at); err != nil {
			rows.Close()
			return nil, false, err
		}
		e.Type, e.CreatedAt = memstore.EventType(typ), keyset.Time(at)
		if d, ok := memstore.FeedDelivery(cur.w, cur.w.WorkspaceID, &e, ids.FeedEvent(e.StoreID, e.Seq, e.CreatedAt), until); ok {
			out = append(out, d)
		}
		seq = e.Seq
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	done := seq == last || !full && read < memstore.FeedScan
	owed := cur.owedTo
	if done && owed != nil {
		seq, owed = max(seq, *owed), nil
	}
	var b pgx.Batch
	for i := range out {
		b.Queue(deliveryInsert, deliveryArgs(&out[i])...)
	}
	b.Queue(`UPDATE webhook_cursors SET seq = $1, owed_to = $2 WHERE endpoint_id = $3 AND store_id = $4`, seq, owed, cur.w.ID, cur.store)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, false, err
	}
	cur.seq, cur.owedTo = seq, owed
	return out, done, nil
}

// deliveryInsert is the statement that adds a delivery as it stands, of
// deliveryArgs.
var deliveryInsert = `INSERT INTO webhook_deliveries (` + strings.ReplaceAll(deliveryColumns, "d.", "") + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`

// deliveryArgs are d's columns, in deliveryColumns' order.
func deliveryArgs(d *memstore.WebhookDelivery) []any {
	var last int64
	if d.LastAttemptAt != nil {
		last = keyset.Nanos(*d.LastAttemptAt)
	}
	e := &d.Event
	return []any{d.EndpointID, e.ID, e.WorkspaceID, e.Type, e.StoreID, e.MemoryID, e.VersionID, keyset.Nanos(e.CreatedAt),
		string(d.State), d.Attempts, keyset.Nanos(d.NextAttemptAt), last, d.LastStatus, d.LastError, e.DreamID}
}

// RecordWebhookAttempts implements memstore.WebhookDeliveryStorage: one
// statement records every attempt, given as arrays of columns.
func (db *DB) RecordWebhookAttempts(ctx context.Context, attempts []memstore.WebhookAttempt, now time.Time, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	n := len(attempts)
	var (
		states, errs, endpoints, events = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tries, statuses                 = make([]int32, n), make([]int32, n)
		nextAt, last, leases            = make([]int64, n), make([]int64, n), make([]int64, n)
	)
	for i, a := range attempts {
		d := a.Delivery
		if d.LastAttemptAt != nil {
			last[i] = keyset.Nanos(*d.LastAttemptAt)
		}
		states[i], tries[i], nextAt[i], statuses[i], errs[i] = string(d.State), int32(d.Attempts), keyset.Nanos(d.NextAttemptAt), int32(d.LastStatus), d.LastError
		endpoints[i], events[i], leases[i] = d.EndpointID, d.Event.ID, keyset.Nanos(d.Lease)
	}
	var claimed []memstore.WebhookDelivery
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		claimed = nil // a retried transaction starts again
		// Only deliveries still pending under their claim are recorded
		// (memstore.WebhookDelivery.Lease); those are returned.
		rows, err := tx.Query(ctx, `UPDATE webhook_deliveries d SET state = u.state, attempts = u.attempts, next_attempt_at = u.next,
				last_attempt_at = u.last, last_status = u.status, last_error = u.error
			FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::bigint[])
				AS u (state, attempts, next, last, status, error, endpoint, event, lease)
			WHERE d.endpoint_id = u.endpoint AND d.event_id = u.event AND d.state = 'pending' AND d.next_attempt_at = u.lease
			RETURNING d.endpoint_id, d.event_id`,
			states, tries, nextAt, last, statuses, errs, endpoints, events, leases)
		if err != nil {
			return err
		}
		recorded := map[[2]string]bool{}
		for rows.Next() {
			var k [2]string
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				rows.Close()
				return err
			}
			recorded[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, a := range attempts {
			if a.Disable == "" || !recorded[[2]string{a.Delivery.EndpointID, a.Delivery.Event.ID}] {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = $1, updated_at = $2 WHERE id = $3 AND state = 'enabled'`,
				a.Disable, keyset.Nanos(now), a.Delivery.EndpointID); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		claimed, err = claimDeliveries(ctx, tx, *next)
		return err
	})
	return claimed, wrap(err, "record webhook deliveries")
}

// WebhookDeliveries implements memstore.WebhookDeliveryStorage.
func (db *DB) WebhookDeliveries(ctx context.Context, workspaceID, endpointID string, n int) ([]memstore.WebhookDelivery, error) {
	var out []memstore.WebhookDelivery
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		var found string
		err := tx.QueryRow(ctx, `SELECT id FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, workspaceID, endpointID).Scan(&found)
		if err != nil {
			return notFound(err, memstore.ErrNoWebhook(endpointID))
		}
		rows, err := tx.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d WHERE d.endpoint_id = $1 ORDER BY d.event_id DESC LIMIT $2`, endpointID, n)
		if err != nil {
			return err
		}
		out, err = collect(rows, func(r row) (*memstore.WebhookDelivery, error) { return scanDelivery(r) })
		return err
	})
	return out, wrap(err, "list the deliveries of %s", endpointID)
}

// PruneWebhookDeliveries implements memstore.WebhookDeliveryStorage.
func (db *DB) PruneWebhookDeliveries(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE event_at < $1 AND (state <> 'pending' OR endpoint_id IN (SELECT id FROM webhook_endpoints WHERE state <> 'enabled'))`, keyset.Nanos(before))
	return tag.RowsAffected(), wrap(err, "prune webhook deliveries")
}
