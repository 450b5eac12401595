package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/storetest"
)

// openAdminClients opens the conformance suite's clients (openClients)
// and the administration services of Clients in front of the same
// servers, each call made with the credential of its caller.
func openAdminClients(t *testing.T) (storetest.Services, storetest.Admin) {
	b := openClients(t, memstore.Limits{}, nil).(*clientServices)
	a := adminClients{b.clients}
	return b, storetest.Admin{Keys: adminKeys{a}, Users: a, Webhooks: a}
}

// adminClients calls each administration service on client(caller).
type adminClients struct{ clients }

// adminKeys calls the API key service of client(caller).
type adminKeys struct{ adminClients }

func (a adminKeys) CreateAPIKey(ctx context.Context, c *memstore.Caller, name string) (*memstore.APIKey, string, error) {
	return a.client(c).Keys().CreateAPIKey(ctx, c, name)
}

func (a adminKeys) APIKeys(ctx context.Context, c *memstore.Caller, page string, limit int) (memstore.Page[memstore.APIKey], error) {
	return a.client(c).Keys().APIKeys(ctx, c, page, limit)
}

func (a adminKeys) APIKey(ctx context.Context, c *memstore.Caller, id string) (*memstore.APIKey, error) {
	return a.client(c).Keys().APIKey(ctx, c, id)
}

func (a adminKeys) RevokeAPIKey(ctx context.Context, c *memstore.Caller, id string) (*memstore.APIKey, error) {
	return a.client(c).Keys().RevokeAPIKey(ctx, c, id)
}

func (a adminClients) CreateUser(ctx context.Context, c *memstore.Caller, uc memstore.UserCreate) (*memstore.User, error) {
	return a.client(c).CreateUser(ctx, c, uc)
}

func (a adminClients) User(ctx context.Context, c *memstore.Caller, idOrName string) (*memstore.User, error) {
	return a.client(c).User(ctx, c, idOrName)
}

func (a adminClients) Users(ctx context.Context, c *memstore.Caller, f memstore.UserFilter) (memstore.Page[memstore.User], error) {
	return a.client(c).Users(ctx, c, f)
}

func (a adminClients) DeleteUser(ctx context.Context, c *memstore.Caller, idOrName string) error {
	return a.client(c).DeleteUser(ctx, c, idOrName)
}

func (a adminClients) SetPassword(ctx context.Context, c *memstore.Caller, idOrName, password string) (*memstore.User, error) {
	return a.client(c).SetPassword(ctx, c, idOrName, password)
}

func (a adminClients) CreateSignInLink(ctx context.Context, c *memstore.Caller, idOrName string) (string, time.Time, error) {
	return a.client(c).CreateSignInLink(ctx, c, idOrName)
}

func (a adminClients) CreateWebhook(ctx context.Context, c *memstore.Caller, wc memstore.WebhookCreate) (*memstore.WebhookEndpoint, error) {
	return a.client(c).CreateWebhook(ctx, c, wc)
}

func (a adminClients) Webhook(ctx context.Context, c *memstore.Caller, id string) (*memstore.WebhookEndpoint, error) {
	return a.client(c).Webhook(ctx, c, id)
}

func (a adminClients) Webhooks(ctx context.Context, c *memstore.Caller, f memstore.WebhookFilter) ([]memstore.WebhookEndpoint, bool, error) {
	return a.client(c).Webhooks(ctx, c, f)
}

func (a adminClients) UpdateWebhook(ctx context.Context, c *memstore.Caller, id string, u memstore.WebhookUpdate) (*memstore.WebhookEndpoint, error) {
	return a.client(c).UpdateWebhook(ctx, c, id, u)
}

func (a adminClients) RegenerateWebhookSecret(ctx context.Context, c *memstore.Caller, id string) (string, error) {
	return a.client(c).RegenerateWebhookSecret(ctx, c, id)
}

func (a adminClients) DeleteWebhook(ctx context.Context, c *memstore.Caller, id string) error {
	return a.client(c).DeleteWebhook(ctx, c, id)
}

func (a adminClients) WebhookDeliveries(ctx context.Context, c *memstore.Caller, endpointID string, limit int) ([]memstore.WebhookDelivery, error) {
	return a.client(c).WebhookDeliveries(ctx, c, endpointID, limit)
}
