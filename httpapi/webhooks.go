package httpapi

import (
	"net/http"

	"github.com/memstore/memstore"
)

// BetaWebhooks is the beta the SDKs send with the webhook routes.
const BetaWebhooks = "webhooks-2026-10-07"

// routeWebhooks adds the SDKs' /v1/organizations/webhooks routes, scoped
// to the caller's workspace (the webhooks service decides who may).
func (s *Server) routeWebhooks() {
	const (
		hooks = "/v1/organizations/webhooks"
		hook  = hooks + "/{webhook_endpoint_id}"
	)
	s.handle("POST "+hooks, s.createWebhook)
	s.handle("GET "+hooks, s.listWebhooks)
	s.handle("GET "+hook, s.getWebhook)
	s.handle("POST "+hook, s.updateWebhook)
	s.handle("DELETE "+hook, s.deleteWebhook)
	s.handle("POST "+hook+"/regenerate_signing_secret", s.regenerateWebhookSecret)
	s.handle("GET "+hook+"/deliveries", s.listWebhookDeliveries) // memstore's own
}

// WebhookEndpointJSON is a webhook endpoint; SigningSecret is set only
// in the answers to create.
type WebhookEndpointJSON struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	CreatedAt      Timestamp `json:"created_at"`
	UpdatedAt      Timestamp `json:"updated_at"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	URL            string    `json:"url"`
	EnabledEvents  []string  `json:"enabled_events"`
	State          string    `json:"state"`
	DisabledReason string    `json:"disabled_reason"`
	SigningSecret  string    `json:"signing_secret,omitempty"`
}

// typeWebhookEndpoint is the type of an endpoint's object.
const typeWebhookEndpoint = "webhook_endpoint"

// NewWebhookEndpointJSON is w on the wire, with its secret when it has
// one (create).
func NewWebhookEndpointJSON(w *memstore.WebhookEndpoint) WebhookEndpointJSON {
	return WebhookEndpointJSON{
		ID: w.ID, Type: typeWebhookEndpoint, CreatedAt: Timestamp(w.CreatedAt), UpdatedAt: Timestamp(w.UpdatedAt),
		Name: w.Name, Description: w.Description, URL: w.URL, EnabledEvents: w.EnabledEvents,
		State: string(w.State), DisabledReason: w.DisabledReason, SigningSecret: w.Secret,
	}
}

// WebhookListJSON is a page of endpoints, as the SDKs page them.
type WebhookListJSON struct {
	Data    []WebhookEndpointJSON `json:"data"`
	HasMore bool                  `json:"has_more"`
	FirstID *string               `json:"first_id"`
	LastID  *string               `json:"last_id"`
}

// webhookBody is the body of a create or an update: every field a
// pointer, so that an absent or null field is left as it is.
type webhookBody struct {
	URL           *string   `json:"url"`
	EnabledEvents *[]string `json:"enabled_events"`
	Name          *string   `json:"name"`
	Description   *string   `json:"description"`
	State         *string   `json:"state"`
}

func (s *Server) createWebhook(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var b webhookBody
	if err := s.decodeBody(w, r, &b); err != nil {
		return err
	}
	switch {
	case b.URL == nil:
		return invalid("url is required")
	case b.EnabledEvents == nil:
		return invalid("enabled_events is required")
	case b.State != nil:
		return invalid("state cannot be set at creation: an endpoint starts enabled")
	}
	wh, err := s.webhooks.CreateWebhook(r.Context(), c, memstore.WebhookCreate{
		URL: *b.URL, EnabledEvents: *b.EnabledEvents, Name: deref(b.Name), Description: deref(b.Description)})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewWebhookEndpointJSON(wh))
	return nil
}

func (s *Server) getWebhook(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	wh, err := s.webhooks.Webhook(r.Context(), c, r.PathValue("webhook_endpoint_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewWebhookEndpointJSON(wh))
	return nil
}

func (s *Server) updateWebhook(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var b webhookBody
	if err := s.decodeBody(w, r, &b); err != nil {
		return err
	}
	u := memstore.WebhookUpdate{URL: b.URL, Name: b.Name, Description: b.Description}
	if b.EnabledEvents != nil {
		u.EnabledEvents = append([]string{}, *b.EnabledEvents...) // set, even when empty (refused)
	}
	if b.State != nil {
		st := memstore.WebhookState(*b.State)
		u.State = &st
	}
	wh, err := s.webhooks.UpdateWebhook(r.Context(), c, r.PathValue("webhook_endpoint_id"), u)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewWebhookEndpointJSON(wh))
	return nil
}

func (s *Server) listWebhooks(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	f := memstore.WebhookFilter{AfterID: p.get("after_id"), BeforeID: p.get("before_id"), Limit: p.count("limit", memstore.DefaultPageSize, memstore.MaxPageSize)}
	f.Asc = p.ascending(false)
	if p.err != nil {
		return p.err
	}
	items, more, err := s.webhooks.Webhooks(r.Context(), c, f)
	if err != nil {
		return err
	}
	out := WebhookListJSON{Data: make([]WebhookEndpointJSON, len(items)), HasMore: more}
	for i := range items {
		out.Data[i] = NewWebhookEndpointJSON(&items[i])
	}
	if n := len(items); n > 0 {
		out.FirstID, out.LastID = &items[0].ID, &items[n-1].ID
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteWebhook(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	id := r.PathValue("webhook_endpoint_id")
	if err := s.webhooks.DeleteWebhook(r.Context(), c, id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, DeletedJSON{Type: typeWebhookDeleted, ID: id})
	return nil
}

// typeWebhookDeleted is the type of the answer to a deletion.
const typeWebhookDeleted = "webhook_endpoint_deleted"

func (s *Server) regenerateWebhookSecret(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	secret, err := s.webhooks.RegenerateWebhookSecret(r.Context(), c, r.PathValue("webhook_endpoint_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, struct {
		SigningSecret string `json:"signing_secret"`
	}{secret})
	return nil
}

// WebhookDeliveryJSON is one delivery of an endpoint's log (memstore's
// own object). NextAttemptAt is set while it is pending.
type WebhookDeliveryJSON struct {
	Type            string     `json:"type"`
	EventID         string     `json:"event_id"`
	EventType       string     `json:"event_type"`
	EventCreatedAt  Timestamp  `json:"event_created_at"`
	MemoryStoreID   string     `json:"memory_store_id"`
	MemoryID        string     `json:"memory_id,omitempty"`
	MemoryVersionID string     `json:"memory_version_id,omitempty"`
	State           string     `json:"state"`
	Attempts        int        `json:"attempts"`
	LastAttemptAt   *Timestamp `json:"last_attempt_at"`
	LastStatusCode  int        `json:"last_status_code"`
	LastError       string     `json:"last_error"`
	NextAttemptAt   *Timestamp `json:"next_attempt_at"`
}

// NewWebhookDeliveryJSON is d on the wire.
func NewWebhookDeliveryJSON(d *memstore.WebhookDelivery) WebhookDeliveryJSON {
	j := WebhookDeliveryJSON{
		Type: "webhook_delivery", EventID: d.Event.ID, EventType: d.Event.Type, EventCreatedAt: Timestamp(d.Event.CreatedAt),
		MemoryStoreID: d.Event.StoreID, MemoryID: d.Event.MemoryID, MemoryVersionID: d.Event.VersionID,
		State: string(d.State), Attempts: d.Attempts, LastAttemptAt: timestampPtr(d.LastAttemptAt),
		LastStatusCode: d.LastStatus, LastError: d.LastError,
	}
	if d.State == memstore.DeliveryPending {
		j.NextAttemptAt = timestampPtr(&d.NextAttemptAt)
	}
	return j
}

// listWebhookDeliveries serves an endpoint's delivery log, newest event
// first: the latest limit deliveries.
func (s *Server) listWebhookDeliveries(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	limit := p.count("limit", memstore.DefaultPageSize, memstore.MaxPageSize)
	if p.err != nil {
		return p.err
	}
	ds, err := s.webhooks.WebhookDeliveries(r.Context(), c, r.PathValue("webhook_endpoint_id"), limit)
	if err != nil {
		return err
	}
	out := struct {
		Data []WebhookDeliveryJSON `json:"data"`
	}{Data: make([]WebhookDeliveryJSON, len(ds))}
	for i := range ds {
		out.Data[i] = NewWebhookDeliveryJSON(&ds[i])
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
