package console

import (
	"net/http"
	"net/url"

	"github.com/memstore/memstore"
)

// The webhooks pages: the workspace's endpoints, each with its settings
// and its delivery log, for those the core lets manage webhooks (the
// same check as the API's). The signing secret is shown once, when it
// is made or regenerated.

// maxDeliveryLog is how many of an endpoint's deliveries its page lists,
// newest first: the core's largest page.
const maxDeliveryLog = memstore.MaxPageSize

// webhookURL is an endpoint's page; done names a notice to show there.
func webhookURL(id, done string) string {
	return withNotice(Prefix+"webhooks/"+url.PathEscape(id), done)
}

func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request, s *signedIn) {
	// Every endpoint on one page: a workspace has at most
	// MaxWebhookEndpoints.
	items, _, err := h.cfg.Webhooks.Webhooks(r.Context(), s.caller, memstore.WebhookFilter{Limit: memstore.MaxWebhookEndpoints, Asc: true})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "webhooks", s, view{Title: "Webhooks", Notice: notice(r), Data: map[string]any{
		"Endpoints": items, "Max": memstore.MaxWebhookEndpoints,
	}})
}

// webhookForm is what the form of an endpoint shows: its fields, and the
// event types to choose from.
type webhookForm struct {
	ID, Name, Description, URL string
	Events                     map[string]bool
	Types                      []string
}

func formOf(e *memstore.WebhookEndpoint) webhookForm {
	f := webhookForm{ID: e.ID, Name: e.Name, Description: e.Description, URL: e.URL, Events: map[string]bool{}, Types: memstore.WebhookEventTypes}
	for _, t := range e.EnabledEvents {
		f.Events[t] = true
	}
	return f
}

// postedEndpoint is the endpoint a form posted.
func postedEndpoint(r *http.Request) *memstore.WebhookEndpoint {
	return &memstore.WebhookEndpoint{Name: r.PostFormValue("name"), Description: r.PostFormValue("description"),
		URL: r.PostFormValue("url"), EnabledEvents: r.PostForm["events"]}
}

func (h *Handler) newWebhookPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := s.caller.CanAdminister(memstore.ManageWebhooks); err != nil {
		h.failErr(w, r, s, err)
		return
	}
	// Every event type, checked, to begin with.
	h.render(w, r, http.StatusOK, "webhooknew", s, view{Title: "New webhook endpoint",
		Data: map[string]any{"Form": formOf(&memstore.WebhookEndpoint{EnabledEvents: memstore.WebhookEventTypes})}})
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, s *signedIn) {
	e := postedEndpoint(r)
	made, err := h.cfg.Webhooks.CreateWebhook(r.Context(), s.caller, memstore.WebhookCreate{
		URL: e.URL, EnabledEvents: e.EnabledEvents, Name: e.Name, Description: e.Description})
	if err != nil {
		if status, ok := fixable(err); ok {
			h.render(w, r, status, "webhooknew", s, view{Title: "New webhook endpoint", Error: memstore.ErrorMessage(err), Data: map[string]any{"Form": formOf(e)}})
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	h.showSecret(w, r, s, made, made.Secret, "made")
}

// showSecret is the page that shows an endpoint's new signing secret,
// this once.
func (h *Handler) showSecret(w http.ResponseWriter, r *http.Request, s *signedIn, e *memstore.WebhookEndpoint, secret, what string) {
	h.render(w, r, http.StatusOK, "webhooksecret", s, view{Title: "Signing secret", Data: map[string]any{
		"Endpoint": e, "Secret": secret, "What": what,
	}})
}

// webhook is an endpoint's page: its settings, to change, and its
// delivery log.
func (h *Handler) webhook(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderWebhook(w, r, s, http.StatusOK, "", nil)
}

// renderWebhook shows an endpoint's page; msg is why a change of it was
// refused, and posted what the refused form held.
func (h *Handler) renderWebhook(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string, posted *memstore.WebhookEndpoint) {
	ctx, id := r.Context(), r.PathValue("webhook")
	e, err := h.cfg.Webhooks.Webhook(ctx, s.caller, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	log, err := h.cfg.Webhooks.WebhookDeliveries(ctx, s.caller, id, maxDeliveryLog)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	form := formOf(e)
	if posted != nil {
		posted.ID = e.ID
		form = formOf(posted)
	}
	title := e.Name
	if title == "" {
		title = e.ID
	}
	h.render(w, r, status, "webhook", s, view{Title: title, Error: msg, Notice: notice(r), Data: map[string]any{
		"Endpoint": e, "Form": form, "Log": log, "Max": maxDeliveryLog,
	}})
}

func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request, s *signedIn) {
	e := postedEndpoint(r)
	_, err := h.cfg.Webhooks.UpdateWebhook(r.Context(), s.caller, r.PathValue("webhook"), memstore.WebhookUpdate{
		URL: &e.URL, Name: &e.Name, Description: &e.Description, EnabledEvents: nonNil(e.EnabledEvents)})
	if status, ok := fixable(err); ok {
		h.renderWebhook(w, r, s, status, memstore.ErrorMessage(err), e)
		return
	}
	h.finish(w, r, s, err, webhookURL(r.PathValue("webhook"), "saved"))
}

// nonNil is events, empty rather than nil when none was checked: the
// core then says that one is needed, where nil would leave them as they
// were.
func nonNil(events []string) []string {
	if events == nil {
		return []string{}
	}
	return events
}

// setWebhookState enables or disables an endpoint.
func (h *Handler) setWebhookState(w http.ResponseWriter, r *http.Request, s *signedIn) {
	state := memstore.WebhookState(r.PostFormValue("state"))
	_, err := h.cfg.Webhooks.UpdateWebhook(r.Context(), s.caller, r.PathValue("webhook"), memstore.WebhookUpdate{State: &state})
	h.finish(w, r, s, err, webhookURL(r.PathValue("webhook"), string(state)))
}

func (h *Handler) regenerateWebhookSecret(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx, id := r.Context(), r.PathValue("webhook")
	secret, err := h.cfg.Webhooks.RegenerateWebhookSecret(ctx, s.caller, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	e, err := h.cfg.Webhooks.Webhook(ctx, s.caller, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.showSecret(w, r, s, e, secret, "regenerated")
}

// deleteWebhookPage asks before an endpoint is deleted.
func (h *Handler) deleteWebhookPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	e, err := h.cfg.Webhooks.Webhook(r.Context(), s.caller, r.PathValue("webhook"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "webhookdelete", s, view{Title: "Delete " + e.URL, Data: e})
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, s *signedIn) {
	err := h.cfg.Webhooks.DeleteWebhook(r.Context(), s.caller, r.PathValue("webhook"))
	h.finish(w, r, s, err, Prefix+"webhooks?done=deleted")
}
