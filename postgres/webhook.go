package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
)

var _ memstore.WebhookStorage = (*DB)(nil)

const webhookColumns = "id, workspace_id, name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at"

func scanWebhook(r row) (*memstore.WebhookEndpoint, error) {
	var w memstore.WebhookEndpoint
	var created, updated int64
	if err := r.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.URL, &w.EnabledEvents, &w.State, &w.DisabledReason, &w.Secret, &created, &updated); err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = keyset.Time(created), keyset.Time(updated)
	return &w, nil
}

func noWebhook(id string) *memstore.Error {
	return memstore.Errorf(memstore.ENotFound, "no webhook endpoint %q in this workspace", id)
}

// webhookArgs are w's columns but its ID and workspace, in
// webhookColumns' order.
func webhookArgs(w *memstore.WebhookEndpoint) []any {
	return []any{w.Name, w.Description, w.URL, w.EnabledEvents, string(w.State), w.DisabledReason, w.Secret, keyset.Nanos(w.CreatedAt), keyset.Nanos(w.UpdatedAt)}
}

// CreateWebhook implements memstore.WebhookStorage. The workspace's row
// is locked while its endpoints are counted, so that concurrent creates
// cannot pass the limit together.
func (db *DB) CreateWebhook(ctx context.Context, workspaceID string, w memstore.WebhookEndpoint, max int) (*memstore.WebhookEndpoint, error) {
	w.ID, w.WorkspaceID = db.ids.New(ids.Webhook, w.CreatedAt), workspaceID
	w.CreatedAt, w.UpdatedAt = keyset.Time(keyset.Nanos(w.CreatedAt)), keyset.Time(keyset.Nanos(w.UpdatedAt))
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var found string
		err := tx.QueryRow(ctx, `SELECT id FROM workspaces WHERE id = $1 FOR UPDATE`, workspaceID).Scan(&found)
		if err != nil {
			return notFound(err, memstore.Errorf(memstore.ENotFound, "no workspace %q", workspaceID))
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE workspace_id = $1`, workspaceID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return memstore.Errorf(memstore.EInvalid, "this workspace has %d webhook endpoints, its limit; delete one before creating another", n)
		}
		_, err = tx.Exec(ctx, `INSERT INTO webhook_endpoints (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			append([]any{w.ID, w.WorkspaceID}, webhookArgs(&w)...)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "create webhook endpoint")
	}
	return &w, nil
}

// Webhook implements memstore.WebhookStorage.
func (db *DB) Webhook(ctx context.Context, workspaceID, id string) (*memstore.WebhookEndpoint, error) {
	w, err := scanWebhook(db.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return nil, wrap(notFound(err, noWebhook(id)), "get webhook endpoint %s", id)
	}
	return w, nil
}

// Webhooks implements memstore.WebhookStorage.
func (db *DB) Webhooks(ctx context.Context, workspaceID string) ([]memstore.WebhookEndpoint, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY id`, workspaceID)
	if err != nil {
		return nil, wrap(err, "list webhook endpoints")
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
	return out, wrap(rows.Err(), "list webhook endpoints")
}

// ChangeWebhook implements memstore.WebhookStorage, with the endpoint's
// row locked from its read to its write.
func (db *DB) ChangeWebhook(ctx context.Context, workspaceID, id string, apply func(*memstore.WebhookEndpoint) error) (*memstore.WebhookEndpoint, error) {
	var w *memstore.WebhookEndpoint
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		w, err = scanWebhook(tx.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, workspaceID, id))
		if err != nil {
			return notFound(err, noWebhook(id))
		}
		if err := apply(w); err != nil {
			return err
		}
		w.UpdatedAt = keyset.Time(keyset.Nanos(w.UpdatedAt))
		_, err = tx.Exec(ctx, `UPDATE webhook_endpoints SET (name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at) = ($1, $2, $3, $4, $5, $6, $7, $8, $9) WHERE id = $10`,
			append(webhookArgs(w), id)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "change webhook endpoint %s", id)
	}
	return w, nil
}

// DeleteWebhook implements memstore.WebhookStorage.
func (db *DB) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = noWebhook(id)
	}
	return wrap(err, "delete webhook endpoint %s", id)
}

var _ memstore.WebhookDeliveryStorage = (*DB)(nil)

const deliveryColumns = "d.endpoint_id, d.event_id, d.workspace_id, d.type, d.store_id, d.memory_id, d.version_id, d.event_at, d.state, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status, d.last_error"

func scanDelivery(r row, more ...any) (*memstore.WebhookDelivery, error) {
	var d memstore.WebhookDelivery
	var at, next, last int64
	e := &d.Event
	if err := r.Scan(append([]any{&d.EndpointID, &e.ID, &e.WorkspaceID, &e.Type, &e.StoreID, &e.MemoryID, &e.VersionID, &at,
		&d.State, &d.Attempts, &next, &last, &d.LastStatus, &d.LastError}, more...)...); err != nil {
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
	out, err := claimDeliveries(ctx, db.pool, c)
	return out, wrap(err, "claim webhook deliveries")
}

// claimDeliveries is one statement that leases the deliveries c asks for
// and returns them. The oldest due rows are locked with SKIP LOCKED, so
// that the deliverers of several replicas claim different deliveries;
// of those, a window over each endpoint's keeps what fits its room (a
// window cannot share a query level with FOR UPDATE).
func claimDeliveries(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, c memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	held, counts := make([]string, 0, len(c.Holds)), make([]int32, 0, len(c.Holds))
	for id, n := range c.Holds {
		held, counts = append(held, id), append(counts, int32(n))
	}
	rows, err := q.Query(ctx, `WITH due AS (
			SELECT d.endpoint_id, d.event_id, d.next_attempt_at, coalesce(h.n, 0) AS held
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
				LEFT JOIN unnest($5::text[], $6::integer[]) AS h (endpoint, n) ON h.endpoint = d.endpoint_id
			WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND e.state = 'enabled' AND coalesce(h.n, 0) < $4
			ORDER BY d.next_attempt_at LIMIT $7 FOR UPDATE OF d SKIP LOCKED),
		c AS (
			SELECT endpoint_id, event_id FROM (
				SELECT endpoint_id, event_id, next_attempt_at, held + row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, event_id) AS nth FROM due) w
			WHERE nth <= $4 ORDER BY next_attempt_at LIMIT $3)
		UPDATE webhook_deliveries d SET next_attempt_at = $2 FROM c, webhook_endpoints e
		WHERE d.endpoint_id = c.endpoint_id AND d.event_id = c.event_id AND e.id = d.endpoint_id
		RETURNING `+deliveryColumns+`, e.url, e.secret`, keyset.Nanos(c.Now), keyset.Nanos(c.Until), c.N, c.PerEndpoint, held, counts, c.Scan())
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r row) (*memstore.WebhookDelivery, error) {
		var url, secret string
		d, err := scanDelivery(r, &url, &secret)
		if err == nil {
			d.URL, d.Secret, d.Lease = url, secret, d.NextAttemptAt
		}
		return d, err
	})
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
			return notFound(err, noWebhook(endpointID))
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
