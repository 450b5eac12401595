package postgres

import (
	"context"

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
