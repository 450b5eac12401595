package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/memstore/memstore"
)

// The client's side of the administration routes (API keys, users) and
// of the webhook routes: the server decides who may call them.

var (
	_ memstore.APIKeyService  = clientKeys{}
	_ memstore.UserService    = (*Client)(nil)
	_ memstore.WebhookService = (*Client)(nil)
)

// clientAdminPath is the path of the object id below list, or ENotFound
// without a request for an empty ID, which would name the list itself.
func clientAdminPath(list, what, id string) (string, error) {
	if id == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no %s with an empty ID", what)
	}
	return list + "/" + url.PathEscape(id), nil
}

func apiKeyIn(j *APIKeyJSON, _ string) *memstore.APIKey { return j.APIKey() }

// Keys returns the API keys of the client's workspace, as the server
// lets its credential manage them. (They are not methods of Client,
// whose APIKey is its credential.)
func (c *Client) Keys() memstore.APIKeyService { return clientKeys{c} }

// clientKeys is the APIKeyService of a client.
type clientKeys struct{ c *Client }

// CreateAPIKey implements memstore.APIKeyService (POST
// /v1/memstore/api_keys): it returns the new key's secret, which the
// server keeps no copy of.
func (k clientKeys) CreateAPIKey(ctx context.Context, caller *memstore.Caller, name string) (*memstore.APIKey, string, error) {
	var secret string
	key, err := call(ctx, k.c, caller, clientRequest{method: http.MethodPost, path: apiKeysPath, body: map[string]string{"name": name},
		err: clientCheckText("name", name)},
		func(j *APIKeyJSON, ws string) *memstore.APIKey {
			secret = j.Secret
			return j.APIKey()
		})
	return key, secret, err
}

// APIKeys implements memstore.APIKeyService (GET /v1/memstore/api_keys).
func (k clientKeys) APIKeys(ctx context.Context, caller *memstore.Caller, page string, limit int) (memstore.Page[memstore.APIKey], error) {
	return call(ctx, k.c, caller, clientRequest{method: http.MethodGet, path: apiKeysPath, query: clientListQuery(limit, page, false)},
		pageIn(func(j *APIKeyJSON, ws string) memstore.APIKey { return *j.APIKey() }))
}

// APIKey implements memstore.APIKeyService (GET
// /v1/memstore/api_keys/{id}).
func (k clientKeys) APIKey(ctx context.Context, caller *memstore.Caller, id string) (*memstore.APIKey, error) {
	p, err := clientAdminPath(apiKeysPath, "API key", id)
	return call(ctx, k.c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, apiKeyIn)
}

// RevokeAPIKey implements memstore.APIKeyService (POST
// /v1/memstore/api_keys/{id}/revoke).
func (k clientKeys) RevokeAPIKey(ctx context.Context, caller *memstore.Caller, id string) (*memstore.APIKey, error) {
	p, err := clientAdminPath(apiKeysPath, "API key", id)
	return call(ctx, k.c, caller, clientRequest{method: http.MethodPost, path: p + "/revoke", err: err}, apiKeyIn)
}

func userIn(j *UserJSON, _ string) *memstore.User { return j.User() }

// CreateUser implements memstore.UserService (POST /v1/memstore/users).
// The password, when there is one, travels in the body: use https.
func (c *Client) CreateUser(ctx context.Context, caller *memstore.Caller, uc memstore.UserCreate) (*memstore.User, error) {
	body := map[string]string{"name": uc.Name, "role": string(uc.Role)}
	if uc.Password != "" {
		body["password"] = uc.Password
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: usersPath, body: body,
		err: clientCheckText("name", uc.Name, "role", string(uc.Role), "password", uc.Password)}, userIn)
}

// User implements memstore.UserService (GET /v1/memstore/users/{user}).
func (c *Client) User(ctx context.Context, caller *memstore.Caller, idOrName string) (*memstore.User, error) {
	p, err := clientAdminPath(usersPath, "user", idOrName)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, userIn)
}

// Users implements memstore.UserService (GET /v1/memstore/users).
func (c *Client) Users(ctx context.Context, caller *memstore.Caller, f memstore.UserFilter) (memstore.Page[memstore.User], error) {
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: usersPath, query: clientListQuery(f.Limit, f.Page, false)},
		pageIn(func(j *UserJSON, ws string) memstore.User { return *j.User() }))
}

// DeleteUser implements memstore.UserService (DELETE
// /v1/memstore/users/{user}).
func (c *Client) DeleteUser(ctx context.Context, caller *memstore.Caller, idOrName string) error {
	p, err := clientAdminPath(usersPath, "user", idOrName)
	_, err = call(ctx, c, caller, clientRequest{method: http.MethodDelete, path: p, err: err}, deletedIn)
	return err
}

// SetPassword implements memstore.UserService (POST
// /v1/memstore/users/{user}/password).
func (c *Client) SetPassword(ctx context.Context, caller *memstore.Caller, idOrName, password string) (*memstore.User, error) {
	p, err := clientAdminPath(usersPath, "user", idOrName)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/password", body: map[string]string{"password": password},
		err: cmp.Or(err, clientCheckText("password", password))}, userIn)
}

// CreateSignInLink implements memstore.UserService (POST
// /v1/memstore/users/{user}/sign_in_link): the link's secret, shown once,
// and when it stops working.
func (c *Client) CreateSignInLink(ctx context.Context, caller *memstore.Caller, idOrName string) (string, time.Time, error) {
	p, err := clientAdminPath(usersPath, "user", idOrName)
	var expires time.Time
	secret, err := call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/sign_in_link", err: err},
		func(j *SignInLinkJSON, _ string) string {
			expires = time.Time(j.ExpiresAt)
			return j.Secret
		})
	return secret, expires, err
}

// webhooksPath is where the SDKs reach a workspace's webhook endpoints.
const webhooksPath = "/v1/organizations/webhooks"

// WebhookEndpoint is the endpoint j stands for, with its secret when j
// has one (create).
func (j *WebhookEndpointJSON) WebhookEndpoint(workspaceID string) *memstore.WebhookEndpoint {
	return &memstore.WebhookEndpoint{ID: j.ID, WorkspaceID: workspaceID, Name: j.Name, Description: j.Description, URL: j.URL,
		EnabledEvents: j.EnabledEvents, State: memstore.WebhookState(j.State), DisabledReason: j.DisabledReason,
		Secret: j.SigningSecret, CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.UpdatedAt)}
}

func webhookIn(j *WebhookEndpointJSON, ws string) *memstore.WebhookEndpoint {
	return j.WebhookEndpoint(ws)
}

// CreateWebhook implements memstore.WebhookService (POST
// /v1/organizations/webhooks): the endpoint with its signing secret.
func (c *Client) CreateWebhook(ctx context.Context, caller *memstore.Caller, wc memstore.WebhookCreate) (*memstore.WebhookEndpoint, error) {
	events := wc.EnabledEvents
	if events == nil {
		events = []string{} // sent, so that the server says what is missing
	}
	body := map[string]any{"url": wc.URL, "enabled_events": events}
	if wc.Name != "" {
		body["name"] = wc.Name
	}
	if wc.Description != "" {
		body["description"] = wc.Description
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: webhooksPath, body: body,
		err: clientCheckText("url", wc.URL, "name", wc.Name, "description", wc.Description)}, webhookIn)
}

// Webhook implements memstore.WebhookService (GET
// /v1/organizations/webhooks/{id}).
func (c *Client) Webhook(ctx context.Context, caller *memstore.Caller, id string) (*memstore.WebhookEndpoint, error) {
	p, err := clientAdminPath(webhooksPath, "webhook endpoint", id)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, webhookIn)
}

// Webhooks implements memstore.WebhookService (GET
// /v1/organizations/webhooks).
func (c *Client) Webhooks(ctx context.Context, caller *memstore.Caller, f memstore.WebhookFilter) ([]memstore.WebhookEndpoint, bool, error) {
	q := url.Values{}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.AfterID != "" {
		q.Set("after_id", f.AfterID)
	}
	if f.BeforeID != "" {
		q.Set("before_id", f.BeforeID)
	}
	if f.Asc {
		q.Set("order", "asc")
	}
	var more bool
	items, err := call(ctx, c, caller, clientRequest{method: http.MethodGet, path: webhooksPath, query: q},
		func(j *WebhookListJSON, ws string) []memstore.WebhookEndpoint {
			more = j.HasMore
			out := make([]memstore.WebhookEndpoint, len(j.Data))
			for i := range j.Data {
				out[i] = *j.Data[i].WebhookEndpoint(ws)
			}
			return out
		})
	return items, more, err
}

// UpdateWebhook implements memstore.WebhookService (POST
// /v1/organizations/webhooks/{id}): the fields of u that are set.
func (c *Client) UpdateWebhook(ctx context.Context, caller *memstore.Caller, id string, u memstore.WebhookUpdate) (*memstore.WebhookEndpoint, error) {
	p, err := clientAdminPath(webhooksPath, "webhook endpoint", id)
	body := map[string]any{}
	if u.URL != nil {
		body["url"] = *u.URL
	}
	if u.EnabledEvents != nil {
		body["enabled_events"] = u.EnabledEvents
	}
	if u.Name != nil {
		body["name"] = *u.Name
	}
	if u.Description != nil {
		body["description"] = *u.Description
	}
	if u.State != nil {
		body["state"] = string(*u.State)
	}
	var text []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"url", u.URL}, {"name", u.Name}, {"description", u.Description}} {
		if f.v != nil {
			text = append(text, f.name, *f.v)
		}
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, body: body,
		err: cmp.Or(err, clientCheckText(text...))}, webhookIn)
}

// RegenerateWebhookSecret implements memstore.WebhookService (POST
// /v1/organizations/webhooks/{id}/regenerate_signing_secret).
func (c *Client) RegenerateWebhookSecret(ctx context.Context, caller *memstore.Caller, id string) (string, error) {
	p, err := clientAdminPath(webhooksPath, "webhook endpoint", id)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/regenerate_signing_secret", err: err},
		func(j *struct {
			SigningSecret string `json:"signing_secret"`
		}, _ string) string {
			return j.SigningSecret
		})
}

// DeleteWebhook implements memstore.WebhookService (DELETE
// /v1/organizations/webhooks/{id}).
func (c *Client) DeleteWebhook(ctx context.Context, caller *memstore.Caller, id string) error {
	p, err := clientAdminPath(webhooksPath, "webhook endpoint", id)
	_, err = call(ctx, c, caller, clientRequest{method: http.MethodDelete, path: p, err: err}, deletedIn)
	return err
}

// WebhookDeliveries implements memstore.WebhookService (GET
// /v1/organizations/webhooks/{id}/deliveries): the latest limit
// deliveries, newest first.
func (c *Client) WebhookDeliveries(ctx context.Context, caller *memstore.Caller, endpointID string, limit int) ([]memstore.WebhookDelivery, error) {
	p, err := clientAdminPath(webhooksPath, "webhook endpoint", endpointID)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/deliveries", query: clientListQuery(limit, "", false), err: err},
		func(j *struct {
			Data []WebhookDeliveryJSON `json:"data"`
		}, ws string) []memstore.WebhookDelivery {
			out := make([]memstore.WebhookDelivery, len(j.Data))
			for i, d := range j.Data {
				out[i] = memstore.WebhookDelivery{
					EndpointID: endpointID,
					Event: memstore.WebhookEvent{ID: d.EventID, Type: d.EventType, WorkspaceID: ws, StoreID: d.MemoryStoreID,
						MemoryID: d.MemoryID, VersionID: d.MemoryVersionID, CreatedAt: time.Time(d.EventCreatedAt)},
					State: memstore.DeliveryState(d.State), Attempts: d.Attempts, LastAttemptAt: timePtr(d.LastAttemptAt),
					LastStatus: d.LastStatusCode, LastError: d.LastError,
				}
				if d.NextAttemptAt != nil {
					out[i].NextAttemptAt = time.Time(*d.NextAttemptAt)
				}
			}
			return out
		})
}
