package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
)

var _ memstore.WebhookStorage = (*DB)(nil)

const webhookColumns = "id, workspace_id, name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at"

func scanWebhook(row interface{ Scan(...any) error }) (*memstore.WebhookEndpoint, error) {
	var w memstore.WebhookEndpoint
	var events string
	var created, updated int64
	if err := row.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.URL, &events, &w.State, &w.DisabledReason, &w.Secret, &created, &updated); err != nil {
		return nil, err
	}
	w.EnabledEvents = strings.Split(events, ",")
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &w, nil
}

func noWebhook(id string) error {
	return memstore.Errorf(memstore.ENotFound, "no webhook endpoint %q in this workspace", id)
}

// webhookArgs are w's columns but its ID and workspace, in
// webhookColumns' order.
func webhookArgs(w *memstore.WebhookEndpoint) []any {
	return []any{w.Name, w.Description, w.URL, strings.Join(w.EnabledEvents, ","), string(w.State), w.DisabledReason, w.Secret, nanos(w.CreatedAt), nanos(w.UpdatedAt)}
}

// CreateWebhook implements memstore.WebhookStorage.
func (db *DB) CreateWebhook(ctx context.Context, workspaceID string, w memstore.WebhookEndpoint, max int) (*memstore.WebhookEndpoint, error) {
	w.ID, w.WorkspaceID = db.ids.New(ids.Webhook, w.CreatedAt), workspaceID
	w.CreatedAt, w.UpdatedAt = fromNanos(nanos(w.CreatedAt)), fromNanos(nanos(w.UpdatedAt))
	err := db.write(ctx, func(tx *txn) error {
		var ws, n int
		if err := tx.queryRow(ctx, "SELECT (SELECT count(*) FROM workspaces WHERE id = ?1), (SELECT count(*) FROM webhook_endpoints WHERE workspace_id = ?1)",
			workspaceID).Scan(&ws, &n); err != nil {
			return err
		}
		switch {
		case ws == 0:
			return memstore.Errorf(memstore.ENotFound, "no workspace %q", workspaceID)
		case n >= max:
			return memstore.Errorf(memstore.EInvalid, "this workspace has %d webhook endpoints, its limit; delete one before creating another", n)
		}
		_, err := tx.exec(ctx, "INSERT INTO webhook_endpoints ("+webhookColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
	w, err := scanWebhook(db.rs.queryRow(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noWebhook(id)
	}
	return w, wrap(translate(err), "get webhook endpoint %s", id)
}

// Webhooks implements memstore.WebhookStorage.
func (db *DB) Webhooks(ctx context.Context, workspaceID string) ([]memstore.WebhookEndpoint, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? ORDER BY id", workspaceID)
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

// ChangeWebhook implements memstore.WebhookStorage.
func (db *DB) ChangeWebhook(ctx context.Context, workspaceID, id string, apply func(*memstore.WebhookEndpoint) error) (*memstore.WebhookEndpoint, error) {
	var w *memstore.WebhookEndpoint
	err := db.write(ctx, func(tx *txn) error {
		var err error
		w, err = scanWebhook(tx.queryRow(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return noWebhook(id)
		}
		if err != nil {
			return err
		}
		if err := apply(w); err != nil {
			return err
		}
		w.UpdatedAt = fromNanos(nanos(w.UpdatedAt))
		_, err = tx.exec(ctx, "UPDATE webhook_endpoints SET (name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at) = (?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE id = ?",
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
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "DELETE FROM webhook_endpoints WHERE workspace_id = ? AND id = ?", workspaceID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return noWebhook(id)
		}
		return nil
	})
	return wrap(err, "delete webhook endpoint %s", id)
}
