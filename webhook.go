package memstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Webhooks: endpoints of a workspace to which memstore posts its events,
// as the hosted API's /v1/organizations/webhooks keeps them. An endpoint
// is managed by API keys and admin users of its workspace (never by a
// session token), and its signing secret is shown twice only: when it is
// made and when it is regenerated.

// A WebhookEndpoint is where a workspace's events are posted.
type WebhookEndpoint struct {
	ID            string // webhook_...
	WorkspaceID   string
	Name          string // "" when none was given
	Description   string // "" when none was given
	URL           string
	EnabledEvents []string // the event types delivered, of WebhookEventTypes
	State         WebhookState
	// DisabledReason says why memstore disabled the endpoint itself: ""
	// while it is enabled, or when a caller disabled it.
	DisabledReason string
	// Secret signs the deliveries ("whsec_" and base64). It is kept so
	// that memstore can sign, and a service returns it only from
	// CreateWebhook and RegenerateWebhookSecret.
	Secret    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WebhookState says whether deliveries are sent to an endpoint.
type WebhookState string

// The states of an endpoint.
const (
	WebhookEnabled  WebhookState = "enabled"
	WebhookDisabled WebhookState = "disabled"
)

// The event types an endpoint may ask for: the hosted API's, of memory
// stores, and memstore's own, of memories, named under "memstore." so
// that they never collide with a hosted type.
const (
	WebhookStoreCreated    = "memory_store.created"
	WebhookStoreArchived   = "memory_store.archived"
	WebhookStoreDeleted    = "memory_store.deleted"
	WebhookMemoryCreated   = WebhookOwnPrefix + string(EventMemoryCreated)
	WebhookMemoryModified  = WebhookOwnPrefix + string(EventMemoryModified)
	WebhookMemoryRenamed   = WebhookOwnPrefix + string(EventMemoryRenamed)
	WebhookMemoryDeleted   = WebhookOwnPrefix + string(EventMemoryDeleted)
	WebhookVersionRedacted = WebhookOwnPrefix + string(EventVersionRedacted)
	WebhookDreamCompleted  = WebhookOwnPrefix + "dream.completed"
	WebhookDreamFailed     = WebhookOwnPrefix + "dream.failed"
)

// WebhookOwnPrefix begins the names of memstore's own event types.
const WebhookOwnPrefix = "memstore."

// WebhookEventTypes lists every event type an endpoint may ask for.
var WebhookEventTypes = []string{
	WebhookStoreCreated, WebhookStoreArchived, WebhookStoreDeleted,
	WebhookMemoryCreated, WebhookMemoryModified, WebhookMemoryRenamed, WebhookMemoryDeleted, WebhookVersionRedacted,
	WebhookDreamCompleted, WebhookDreamFailed,
}

// The limits of webhook endpoints.
const (
	MaxWebhookEndpoints      = 20   // per workspace
	MaxWebhookURLLength      = 2048 // bytes
	MaxWebhookNameLength     = 256  // characters
	MaxWebhookDescriptionLen = 1024 // characters
)

// WebhookSecretPrefix begins every signing secret, as the Standard
// Webhooks scheme that the SDKs' unwrap verifies expects.
const WebhookSecretPrefix = "whsec_"

// NewWebhookSecret returns a new signing secret: WebhookSecretPrefix and
// 256 random bits in standard base64.
func NewWebhookSecret() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// WebhookCreate is a new endpoint.
type WebhookCreate struct {
	URL           string
	EnabledEvents []string
	Name          string
	Description   string
}

// WebhookUpdate changes the fields that are set (non-nil).
type WebhookUpdate struct {
	URL           *string
	EnabledEvents []string // nil: unchanged
	Name          *string
	Description   *string
	State         *WebhookState
}

// WebhookFilter selects a page of a workspace's endpoints, newest first
// unless Asc, as the hosted API lists them.
type WebhookFilter struct {
	AfterID  string // the page after this ID
	BeforeID string // the first Limit endpoints before this ID in list order, as the hosted API pages (not with AfterID)
	Limit    int    // 1-100; 0 for DefaultPageSize
	Asc      bool   // oldest first
}

// WebhookStorage keeps webhook endpoints, with their secrets. Like the
// other storage it trusts its caller: only Webhooks calls it.
type WebhookStorage interface {
	// CreateWebhook stores w, giving it an ID, unless the workspace does
	// not exist (ENotFound) or q refuses its endpoints' count (Quota).
	CreateWebhook(ctx context.Context, workspaceID string, w WebhookEndpoint, q Quota) (*WebhookEndpoint, error)
	// Webhook returns an endpoint of the workspace (ENotFound).
	Webhook(ctx context.Context, workspaceID, id string) (*WebhookEndpoint, error)
	// Webhooks returns all the workspace's endpoints (at most
	// MaxWebhookEndpoints), by ID.
	Webhooks(ctx context.Context, workspaceID string) ([]WebhookEndpoint, error)
	// ChangeWebhook reads an endpoint, calls apply on it and stores what
	// apply made of it, in one transaction (ENotFound, or apply's error,
	// which changes nothing).
	ChangeWebhook(ctx context.Context, workspaceID, id string, apply func(*WebhookEndpoint) error) (*WebhookEndpoint, error)
	// DeleteWebhook removes an endpoint (ENotFound).
	DeleteWebhook(ctx context.Context, workspaceID, id string) error
}

// WebhookService manages the webhook endpoints of the caller's
// workspace: Webhooks implements it, and the HTTP API serves it.
type WebhookService interface {
	CreateWebhook(ctx context.Context, c *Caller, wc WebhookCreate) (*WebhookEndpoint, error)
	Webhook(ctx context.Context, c *Caller, id string) (*WebhookEndpoint, error)
	Webhooks(ctx context.Context, c *Caller, f WebhookFilter) (items []WebhookEndpoint, more bool, err error)
	UpdateWebhook(ctx context.Context, c *Caller, id string, u WebhookUpdate) (*WebhookEndpoint, error)
	RegenerateWebhookSecret(ctx context.Context, c *Caller, id string) (string, error)
	DeleteWebhook(ctx context.Context, c *Caller, id string) error
	WebhookDeliveries(ctx context.Context, c *Caller, endpointID string, limit int) ([]WebhookDelivery, error)
}

var _ WebhookService = (*Webhooks)(nil)

// Webhooks manages the webhook endpoints of callers' workspaces over a
// WebhookStorage.
type Webhooks struct {
	s            WebhookStorage
	now          func() time.Time
	allowPrivate bool
}

// A WebhooksOption configures Webhooks.
type WebhooksOption func(*Webhooks)

// WebhooksAllowPrivate lets endpoints' URLs reach loopback, link-local
// and private addresses, and use plain http: for tests and closed
// networks only.
func WebhooksAllowPrivate(allow bool) WebhooksOption {
	return func(w *Webhooks) { w.allowPrivate = allow }
}

// WebhooksClock sets the clock of UpdatedAt and CreatedAt.
func WebhooksClock(now func() time.Time) WebhooksOption {
	return func(w *Webhooks) { w.now = now }
}

// NewWebhooks returns the webhook endpoints over s.
func NewWebhooks(s WebhookStorage, opts ...WebhooksOption) *Webhooks {
	w := &Webhooks{s: s, now: time.Now}
	for _, o := range opts {
		o(w)
	}
	return w
}

// withoutSecret is w as a service returns it, but from create and
// regenerate.
func withoutSecret(w *WebhookEndpoint) *WebhookEndpoint {
	if w != nil {
		w.Secret = ""
	}
	return w
}

// CreateWebhook makes an endpoint and returns it with its secret, which
// is shown this once.
func (ws *Webhooks) CreateWebhook(ctx context.Context, c *Caller, wc WebhookCreate) (*WebhookEndpoint, error) {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return nil, err
	}
	events, err := validateWebhookEvents(wc.EnabledEvents)
	if err != nil {
		return nil, err
	}
	if err := validateWebhookText(wc.Name, wc.Description, wc.URL); err != nil {
		return nil, err
	}
	if err := ws.CheckURL(ctx, wc.URL); err != nil {
		return nil, err
	}
	now := ws.now()
	return ws.s.CreateWebhook(ctx, c.WorkspaceID, WebhookEndpoint{
		Name: wc.Name, Description: wc.Description, URL: wc.URL, EnabledEvents: events,
		State: WebhookEnabled, Secret: NewWebhookSecret(), CreatedAt: now, UpdatedAt: now,
	}, webhookQuota(c.WorkspaceID))
}

// Webhook returns an endpoint of the caller's workspace, without its
// secret (ENotFound).
func (ws *Webhooks) Webhook(ctx context.Context, c *Caller, id string) (*WebhookEndpoint, error) {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return nil, err
	}
	if err := ValidateID(webhookIDField, id); err != nil {
		return nil, err
	}
	w, err := ws.s.Webhook(ctx, c.WorkspaceID, id)
	return withoutSecret(w), err
}

// Webhooks returns a page of the caller's workspace's endpoints, without
// their secrets, and whether more follow.
func (ws *Webhooks) Webhooks(ctx context.Context, c *Caller, f WebhookFilter) (items []WebhookEndpoint, more bool, err error) {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return nil, false, err
	}
	n, err := PageSize(f.Limit, false)
	if err != nil {
		return nil, false, err
	}
	if f.AfterID != "" && f.BeforeID != "" {
		return nil, false, Errorf(EInvalid, "give after_id or before_id, not both")
	}
	if err := validateIDs("after_id", f.AfterID, "before_id", f.BeforeID); err != nil {
		return nil, false, err
	}
	all, err := ws.s.Webhooks(ctx, c.WorkspaceID)
	if err != nil {
		return nil, false, err
	}
	if !f.Asc {
		slices.Reverse(all)
	}
	// before is whether ID a comes before ID b in the page's order.
	before := func(a, b string) bool {
		if f.Asc {
			return a < b
		}
		return a > b
	}
	var out []WebhookEndpoint
	switch {
	case f.AfterID != "":
		for _, w := range all {
			if before(f.AfterID, w.ID) {
				out = append(out, w)
			}
		}
	case f.BeforeID != "":
		for _, w := range all {
			if before(w.ID, f.BeforeID) {
				out = append(out, w)
			}
		}
	default:
		out = all
	}
	if len(out) > n {
		out, more = out[:n], true
	}
	for i := range out {
		out[i].Secret = ""
	}
	if out == nil {
		out = []WebhookEndpoint{}
	}
	return out, more, nil
}

// UpdateWebhook changes the fields of u that are set. Enabling an
// endpoint clears the reason memstore disabled it for.
func (ws *Webhooks) UpdateWebhook(ctx context.Context, c *Caller, id string, u WebhookUpdate) (*WebhookEndpoint, error) {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return nil, err
	}
	if err := ValidateID(webhookIDField, id); err != nil {
		return nil, err
	}
	var events []string
	if u.EnabledEvents != nil {
		var err error
		if events, err = validateWebhookEvents(u.EnabledEvents); err != nil {
			return nil, err
		}
	}
	if err := validateWebhookText(deref(u.Name), deref(u.Description), deref(u.URL)); err != nil {
		return nil, err
	}
	if u.State != nil && *u.State != WebhookEnabled && *u.State != WebhookDisabled {
		return nil, Errorf(EInvalid, "state %q is not one of enabled, disabled", *u.State)
	}
	if u.URL != nil {
		if err := ws.CheckURL(ctx, *u.URL); err != nil {
			return nil, err
		}
	}
	now := ws.now()
	w, err := ws.s.ChangeWebhook(ctx, c.WorkspaceID, id, func(w *WebhookEndpoint) error {
		if u.URL != nil {
			w.URL = *u.URL
		}
		if events != nil {
			w.EnabledEvents = events
		}
		if u.Name != nil {
			w.Name = *u.Name
		}
		if u.Description != nil {
			w.Description = *u.Description
		}
		if u.State != nil {
			w.State, w.DisabledReason = *u.State, ""
		}
		w.UpdatedAt = now
		return nil
	})
	return withoutSecret(w), err
}

// RegenerateWebhookSecret gives an endpoint a new signing secret, which
// it returns (shown this once); the old one stops signing at once.
func (ws *Webhooks) RegenerateWebhookSecret(ctx context.Context, c *Caller, id string) (string, error) {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return "", err
	}
	if err := ValidateID(webhookIDField, id); err != nil {
		return "", err
	}
	secret, now := NewWebhookSecret(), ws.now()
	_, err := ws.s.ChangeWebhook(ctx, c.WorkspaceID, id, func(w *WebhookEndpoint) error {
		w.Secret, w.UpdatedAt = secret, now
		return nil
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// DeleteWebhook removes an endpoint with its deliveries (ENotFound).
func (ws *Webhooks) DeleteWebhook(ctx context.Context, c *Caller, id string) error {
	if err := c.CanAdminister(ManageWebhooks); err != nil {
		return err
	}
	if err := ValidateID(webhookIDField, id); err != nil {
		return err
	}
	return ws.s.DeleteWebhook(ctx, c.WorkspaceID, id)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// validateWebhookEvents checks that events names at least one type, all
// of WebhookEventTypes, and returns them without repeats, in order.
func validateWebhookEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, Errorf(EInvalid, "enabled_events must list at least one event type, of %s", strings.Join(WebhookEventTypes, ", "))
	}
	var out []string
	for _, e := range events {
		if !slices.Contains(WebhookEventTypes, e) {
			return nil, Errorf(EInvalid, "enabled_events: %q is not an event type; the types are %s", e, strings.Join(WebhookEventTypes, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// webhookIDField names an endpoint's ID in messages, as the API does.
const webhookIDField = "webhook_endpoint_id"

// validateWebhookText checks an endpoint's name, description and URL
// ("" when not given) as text (ValidateText), and the lengths of the
// name and description; CheckURL checks the rest of the URL.
func validateWebhookText(name, description, url string) error {
	for _, f := range [][2]string{{"name", name}, {"description", description}, {"url", url}} {
		if err := ValidateText(f[0], f[1]); err != nil {
			return err
		}
	}
	switch {
	case utf8.RuneCountInString(name) > MaxWebhookNameLength:
		return Errorf(EInvalid, "name must be at most %d characters", MaxWebhookNameLength)
	case utf8.RuneCountInString(description) > MaxWebhookDescriptionLen:
		return Errorf(EInvalid, "description must be at most %d characters", MaxWebhookDescriptionLen)
	}
	return nil
}

// CheckURL checks that raw may receive deliveries, as far as can be
// known without DNS, so that an endpoint may be made before its name
// resolves: an absolute https URL (http too when private addresses are
// allowed) without credentials, of a valid port, whose host is a name
// or an address, unless private ones are allowed, a public address
// (CheckWebhookAddr), written in the standard form, and no name under
// localhost (EInvalid). A name is checked on every connection a
// delivery makes, by the address it dials, since it may resolve
// anywhere, and otherwise later.
func (ws *Webhooks) CheckURL(ctx context.Context, raw string) error {
	if len(raw) > MaxWebhookURLLength {
		return Errorf(EInvalid, "url is longer than %d bytes", MaxWebhookURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" || u.Hostname() == "" {
		return Errorf(EInvalid, "url %q is not an absolute URL such as https://example.com/hooks", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && ws.allowPrivate:
	default:
		return Errorf(EInvalid, "url must use https, not %q", u.Scheme)
	}
	if u.User != nil {
		return Errorf(EInvalid, "url must not hold a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Errorf(EInvalid, "url's port %q is not a port from 1 to 65535", p)
		}
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if ws.allowPrivate {
			return nil
		}
		if err := CheckWebhookAddr(a); err != nil {
			return Errorf(EInvalid, "url's host %q %s", host, err.Error())
		}
		return nil
	}
	if err := checkHostName(host); err != nil {
		return err
	}
	if ws.allowPrivate {
		return nil
	}
	if name := strings.ToLower(strings.TrimSuffix(host, ".")); name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return Errorf(EInvalid, "url's host %q is a localhost name, which always reaches this machine; webhooks may not reach it", host)
	}
	return nil
}

// checkHostName checks that host, not an IP address, is a name a
// delivery could resolve: labels of letters, digits, hyphens and
// underscores (or, in an internationalized name, other letters), none
// empty nor longer than 63 bytes nor beginning or ending with a hyphen,
// 253 bytes in all, and the last not a number, which a URL parser reads
// as an IPv4 address in another form (2130706433, 0x7f.1, 127.1 are
// 127.0.0.1 to many receivers' libraries, but not to memstore's check).
func checkHostName(host string) error {
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return Errorf(EInvalid, "url's host %q is not a valid host name", host)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		ok := l != "" && len(l) <= 63 && l[0] != '-' && l[len(l)-1] != '-' && utf8.ValidString(l)
		for _, r := range l {
			ok = ok && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > unicode.MaxASCII && unicode.IsPrint(r))
		}
		if !ok {
			return Errorf(EInvalid, "url's host %q is not a valid host name: each label is letters, digits and hyphens, 1 to 63 bytes", host)
		}
	}
	if last := strings.ToLower(labels[len(labels)-1]); isNumber(last) {
		return Errorf(EInvalid, "url's host %q reads as an IPv4 address in a form other than dotted decimal; write the address as four decimal numbers, such as 93.184.215.14", host)
	}
	return nil
}

// isNumber reports whether a host's label is a number as the URL
// standard's IPv4 parser takes one: decimal digits, or 0x and hex
// digits.
func isNumber(label string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		label, digits = rest, "0123456789abcdef"
		if label == "" {
			return true
		}
	}
	return label != "" && strings.Trim(label, digits) == ""
}

// CheckWebhookAddr refuses an address that a delivery must not reach
// without WebhooksAllowPrivate: loopback, link-local, private,
// unspecified, multicast or reserved, and an IPv6 address that carries
// such an IPv4 address to a translator or tunnel: IPv4-mapped
// (::ffff:0:0/96), IPv4-compatible (::/96), IPv4-translated
// (::ffff:0:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and ISATAP
// (an interface identifier of 0:5efe or 200:5efe). Teredo (2001::/32)
// and local-use NAT64 (64:ff9b:1::/48), whose IPv4 address cannot be
// told for sure, are refused whatever they carry (EInvalid).
func CheckWebhookAddr(a netip.Addr) error {
	a = a.Unmap()
	inner := a
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a), ipv4Compatible.Contains(a), ipv4Translated.Contains(a):
			inner = netip.AddrFrom4([4]byte(b[12:16]))
		case sixToFour.Contains(a):
			inner = netip.AddrFrom4([4]byte(b[2:6]))
		case (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe: // ISATAP
			inner = netip.AddrFrom4([4]byte(b[12:16]))
		}
	}
	for _, x := range []netip.Addr{a, inner} {
		if x.IsLoopback() || x.IsLinkLocalUnicast() || x.IsLinkLocalMulticast() || x.IsPrivate() ||
			x.IsUnspecified() || x.IsMulticast() || x.IsInterfaceLocalMulticast() || inReserved(x) {
			return Errorf(EInvalid, "resolves to %s, a loopback, link-local, private or reserved address, which webhooks may not reach", a)
		}
	}
	return nil
}

// The IPv6 prefixes whose addresses carry an IPv4 address, checked as
// that address.
var (
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// reserved are ranges neither private nor public by the standard
// library's tests that a delivery must not reach: shared address space
// (carrier-grade NAT), "this network", IETF protocol assignments,
// benchmarking, the former class E, local-use NAT64, Teredo tunnels,
// discard-only and documentation IPv6 ranges, and the deprecated
// site-local IPv6 range.
var reserved = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, p := range []string{"100.64.0.0/10", "0.0.0.0/8", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4",
		"64:ff9b:1::/48", "2001::/32", "100::/64", "2001:db8::/32", "fec0::/10"} {
		ps = append(ps, netip.MustParsePrefix(p))
	}
	return ps
}()

func inReserved(a netip.Addr) bool {
	for _, p := range reserved {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
