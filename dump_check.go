package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A dump comes from a database file or a server that anyone may have
// written to, not only through memstore: a crafted file can hold a path
// such as /../../etc/cron.d/x that no API write lets through, and which
// an export or a directory sync would later take for a file name. So a
// Restorer checks every record it is handed with the rules the API's
// writes keep (CheckRecords), whatever the source, and the first record
// that breaks one stops the restore, which then keeps nothing.

// A RecordError is a record that CheckRecords refused: its kind, the
// record (its ID, and its path or name where it has one), and what is
// wrong with it. It unwraps to an EInvalid *Error.
type RecordError struct {
	Kind  RecordKind
	Where string
	Err   error
}

func (e *RecordError) Error() string {
	return recordNames[e.Kind] + " " + e.Where + ": " + ErrorMessage(e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// recordNames names one record of each kind in messages.
var recordNames = map[RecordKind]string{
	KindWorkspaces: "workspace", KindAPIKeys: "API key", KindUsers: "user", KindSignIns: "sign-in",
	KindStores: "store", KindMemories: "memory", KindVersions: "version", KindEvents: "event",
	KindSessions: "session", KindSessionTokens: "session token", KindSessionEvents: "session event", KindWebhooks: "webhook endpoint",
	KindCursors: "webhook cursor", KindDeliveries: "webhook delivery",
}

// CheckRecords returns a sink that checks each record it is handed, then
// passes it on to sink: the kinds must come in the order of RecordKinds,
// each announced by Begin, and each record must be one the API could
// have written (valid IDs of its kind, the Validate functions' rules on
// names, paths, content, metadata and fields, a content hash and size
// that match the content, known types, states and roles). A record that
// is not is refused with a *RecordError, and sink never sees it.
func CheckRecords(sink RecordSink) RecordSink {
	return &checkedSink{next: sink, kind: -1}
}

type checkedSink struct {
	next RecordSink
	kind int // index in RecordKinds of the kind announced last
}

// Begin checks that kind comes next in the order of RecordKinds: a kind
// may be left out, never repeated or taken out of turn.
func (c *checkedSink) Begin(kind RecordKind, total int64) error {
	i := slices.Index(RecordKinds, kind)
	switch {
	case i < 0:
		return Errorf(EInvalid, "the dump holds records of an unknown kind %q", kind)
	case i <= c.kind:
		return Errorf(EInvalid, "the dump hands over the %s after the %s; the order is %v", kind, RecordKinds[c.kind], RecordKinds)
	case total < 0:
		return Errorf(EInvalid, "the dump announces %d %s", total, kind)
	}
	c.kind = i
	return c.next.Begin(kind, total)
}

// check refuses a record of kind, at where, with the first error of errs,
// and one whose kind was not announced.
func (c *checkedSink) check(kind RecordKind, where string, errs ...error) error {
	if c.kind < 0 || RecordKinds[c.kind] != kind {
		return &RecordError{kind, where, Errorf(EInvalid, "it comes outside the %s of the dump (the order is %v)", kind, RecordKinds)}
	}
	for _, err := range errs {
		if err != nil {
			return &RecordError{kind, where, err}
		}
	}
	return nil
}

func (c *checkedSink) Workspace(w *Workspace) error {
	if err := c.check(KindWorkspaces, w.ID+" ("+w.Name+")",
		validateIDOf("id", WorkspaceIDPrefix, w.ID), ValidateWorkspaceName(w.Name)); err != nil {
		return err
	}
	return c.next.Workspace(w)
}

func (c *checkedSink) APIKey(k *APIKeyRecord) error {
	if err := c.check(KindAPIKeys, k.ID,
		validateIDOf("id", APIKeyIDPrefix, k.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, k.WorkspaceID), ValidateKeyName(k.Name),
		checkSecretHash(k.SecretSHA256), checkHint(k.Hint)); err != nil {
		return err
	}
	return c.next.APIKey(k)
}

func (c *checkedSink) User(u *User) error {
	if err := c.check(KindUsers, u.ID+" ("+u.Name+")",
		validateIDOf("id", UserIDPrefix, u.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, u.WorkspaceID), ValidateUserName(u.Name),
		ValidateRole(u.Role), ValidatePasswordHash(u.PasswordHash)); err != nil {
		return err
	}
	return c.next.User(u)
}

func (c *checkedSink) SignIn(s *SignIn) error {
	if err := c.check(KindSignIns, "of user "+s.UserID,
		checkSecretHash(s.SecretHash), validateIDOf("user_id", UserIDPrefix, s.UserID), validateIDOf("workspace_id", WorkspaceIDPrefix, s.WorkspaceID)); err != nil {
		return err
	}
	return c.next.SignIn(s)
}

func (c *checkedSink) Store(s *Store) error {
	if err := c.check(KindStores, s.ID,
		validateIDOf("id", StoreIDPrefix, s.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, s.WorkspaceID),
		ValidateStoreName(s.Name), ValidateStoreDescription(s.Description), ValidateMetadata(s.Metadata)); err != nil {
		return err
	}
	return c.next.Store(s)
}

func (c *checkedSink) Memory(m *Memory) error {
	if err := c.check(KindMemories, m.ID+" at "+quoteIfOdd(m.Path)+" in store "+m.StoreID,
		validateIDOf("id", MemoryIDPrefix, m.ID), validateIDOf("store_id", StoreIDPrefix, m.StoreID), validateIDOf("version_id", VersionIDPrefix, m.VersionID),
		ValidatePath(m.Path), checkContent(m.Content, m.ContentSHA256, m.ContentSize)); err != nil {
		return err
	}
	return c.next.Memory(m)
}

func (c *checkedSink) Version(v *Version) error {
	where := v.ID + " of memory " + v.MemoryID + " in store " + v.StoreID
	if v.Path != "" {
		where = v.ID + " at " + quoteIfOdd(v.Path) + " in store " + v.StoreID
	}
	if err := c.check(KindVersions, where,
		validateIDOf("id", VersionIDPrefix, v.ID), validateIDOf("store_id", StoreIDPrefix, v.StoreID), validateIDOf("memory_id", MemoryIDPrefix, v.MemoryID),
		checkActor("created_by", v.CreatedBy), checkVersionState(v)); err != nil {
		return err
	}
	return c.next.Version(v)
}

// checkVersionState checks what a version holds for its operation: a
// redacted one neither path nor content, a deletion a path only, any
// other a path and its content.
func checkVersionState(v *Version) error {
	switch v.Operation {
	case OpCreated, OpModified, OpDeleted:
	default:
		return Errorf(EInvalid, "operation %q is not created, modified or deleted", v.Operation)
	}
	if v.Redacted() {
		if v.Path != "" || v.HasContent {
			return Errorf(EInvalid, "it is redacted but keeps its path or content")
		}
		if v.RedactedBy == nil {
			return Errorf(EInvalid, "it is redacted by nobody")
		}
		return checkActor("redacted_by", *v.RedactedBy)
	}
	if v.RedactedBy != nil {
		return Errorf(EInvalid, "it names who redacted it but is not redacted")
	}
	if err := ValidatePath(v.Path); err != nil {
		return err
	}
	if v.HasContent == (v.Operation == OpDeleted) {
		return Errorf(EInvalid, "a version of operation %s must have content unless it is a deletion", v.Operation)
	}
	if v.HasContent {
		return checkContent(v.Content, v.ContentSHA256, v.ContentSize)
	}
	return nil
}

func (c *checkedSink) Event(e *Event) error {
	err := c.check(KindEvents, fmt.Sprintf("%d of store %s", e.Seq, e.StoreID),
		validateIDOf("store_id", StoreIDPrefix, e.StoreID), checkActor("actor", e.Actor), checkEvent(e))
	if err != nil {
		return err
	}
	return c.next.Event(e)
}

// checkEvent checks an event's number, type and version.
func checkEvent(e *Event) error {
	if e.Seq < 1 {
		return Errorf(EInvalid, "its number %d is not positive", e.Seq)
	}
	switch e.Type {
	case EventStoreArchived:
		if e.VersionID != "" {
			return Errorf(EInvalid, "a %s event names version %q", e.Type, e.VersionID)
		}
		return nil
	case EventMemoryCreated, EventMemoryModified, EventMemoryRenamed, EventMemoryDeleted, EventVersionRedacted:
		return validateIDOf("version_id", VersionIDPrefix, e.VersionID)
	}
	return Errorf(EInvalid, "type %q is not an event type", e.Type)
}

func (c *checkedSink) Session(s *Session) error {
	if err := c.check(KindSessions, s.ID,
		validateIDOf("id", SessionIDPrefix, s.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, s.WorkspaceID),
		validateTitle(s.Title), ValidateMetadata(s.Metadata), validateSessionFields(s.Fields), checkAttachments(s.Attachments)); err != nil {
		return err
	}
	return c.next.Session(s)
}

// checkAttachments checks a session's stores as CreateSession leaves
// them: at most MaxSessionStores, each store once, an access that is
// set, the store's name and description, and a mount path of its own
// below MountRoot.
func checkAttachments(atts []Attachment) error {
	if len(atts) > MaxSessionStores {
		return Errorf(EInvalid, "it attaches %d stores; the limit is %d", len(atts), MaxSessionStores)
	}
	stores, mounts := map[string]bool{}, map[string]bool{}
	for i, a := range atts {
		what := fmt.Sprintf("resources[%d]", i)
		if a.Access == "" {
			return Errorf(EInvalid, "%s.access is not set", what)
		}
		for _, err := range []error{validateIDOf(what+".memory_store_id", StoreIDPrefix, a.StoreID), validateAttachment(what, &a.Access, &a.Instructions),
			ValidateStoreName(a.Name), ValidateStoreDescription(a.Description)} {
			if err != nil {
				return err
			}
		}
		slug, ok := strings.CutPrefix(a.MountPath, MountRoot)
		if !ok || slug == "" || Slug(slug) != slug {
			return Errorf(EInvalid, "%s.mount_path %q is not %s and a name", what, a.MountPath, MountRoot)
		}
		if stores[a.StoreID] || mounts[a.MountPath] {
			return Errorf(EInvalid, "%s attaches store %s at %s again", what, a.StoreID, a.MountPath)
		}
		stores[a.StoreID], mounts[a.MountPath] = true, true
	}
	return nil
}

func (c *checkedSink) SessionToken(t *SessionTokenRecord) error {
	if err := c.check(KindSessionTokens, t.ID,
		validateIDOf("id", SessionTokenIDPrefix, t.ID), validateIDOf("session_id", SessionIDPrefix, t.SessionID), validateIDOf("workspace_id", WorkspaceIDPrefix, t.WorkspaceID),
		checkSecretHash(t.SecretSHA256), checkHint(t.Hint)); err != nil {
		return err
	}
	return c.next.SessionToken(t)
}

func (c *checkedSink) Dream(d *Dream) error {
	if err := c.check(KindDreams, d.ID,
		validateIDOf("id", DreamIDPrefix, d.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, d.WorkspaceID), checkDream(d)); err != nil {
		return err
	}
	return c.next.Dream(d)
}

// checkDream checks a copied dream as the core leaves it: its inputs as
// a create takes them, a known status, and a store and session only
// where the dream's life makes them.
func checkDream(d *Dream) error {
	dc := DreamCreate{Inputs: []DreamInput{{Type: DreamInputMemoryStore, MemoryStoreID: d.InputStoreID}, {Type: DreamInputSessions, SessionIDs: d.SessionIDs}},
		Model: d.Model, OutputBehavior: d.OutputBehavior}
	if d.Instructions != "" {
		dc.Instructions = &d.Instructions
	}
	if d.OutputBehavior == OutputUpdateExisting {
		dc.OutputStoreID = d.OutputStoreID
	}
	if _, err := ValidateDreamCreate(dc); err != nil {
		return err
	}
	switch {
	case !slices.Contains(DreamStatuses, d.Status):
		return Errorf(EInvalid, "status %q is not a dream's status", d.Status)
	case d.Status == DreamFailed && d.Error == nil:
		return Errorf(EInvalid, "a failed dream has no error")
	case d.Error != nil && d.Status != DreamFailed:
		return Errorf(EInvalid, "only a failed dream has an error")
	case d.Error != nil && checkText("error.type", d.Error.Type, MaxDreamError) != nil:
		return checkText("error.type", d.Error.Type, MaxDreamError)
	case d.Error != nil && checkText("error.message", d.Error.Message, MaxDreamError) != nil:
		return checkText("error.message", d.Error.Message, MaxDreamError)
	case d.Attempts < 0 || d.Usage.InputTokens < 0 || d.Usage.OutputTokens < 0 || d.Usage.CacheCreationInputTokens < 0 || d.Usage.CacheReadInputTokens < 0:
		return Errorf(EInvalid, "its attempts and token counts must not be negative")
	case checkText("owner", d.Owner, maxIDLength) != nil:
		return checkText("owner", d.Owner, maxIDLength)
	case d.Status.Final() != (d.EndedAt != nil):
		return Errorf(EInvalid, "ended_at is set exactly when the status is final")
	case d.OutputStoreID != "" && validateIDOf("output_store_id", StoreIDPrefix, d.OutputStoreID) != nil:
		return validateIDOf("output_store_id", StoreIDPrefix, d.OutputStoreID)
	case d.SessionID != "" && validateIDOf("session_id", SessionIDPrefix, d.SessionID) != nil:
		return validateIDOf("session_id", SessionIDPrefix, d.SessionID)
	}
	return nil
}

func (c *checkedSink) SessionEvent(e *SessionEvent) error {
	if err := c.check(KindSessionEvents, e.ID,
		validateIDOf("id", SessionEventIDPrefix, e.ID), validateIDOf("session_id", SessionIDPrefix, e.SessionID), validateIDOf("workspace_id", WorkspaceIDPrefix, e.WorkspaceID),
		checkSessionEvent(e)); err != nil {
		return err
	}
	return c.next.SessionEvent(e)
}

// checkSessionEvent checks an event as an append leaves it: a number
// from 1, a type, and a JSON object of that type within
// MaxSessionEventBytes.
func checkSessionEvent(e *SessionEvent) error {
	var body struct {
		Type string `json:"type"`
	}
	switch {
	case e.Seq < 1:
		return Errorf(EInvalid, "seq %d is not a sequence number: they start at 1", e.Seq)
	case len(e.Body) > MaxSessionEventBytes:
		return Errorf(EInvalid, "the event is %d bytes; the limit is %d", len(e.Body), MaxSessionEventBytes)
	case json.Unmarshal(e.Body, &body) != nil:
		return Errorf(EInvalid, "the event's body is not a JSON object")
	case body.Type != e.Type || e.Type == "":
		return Errorf(EInvalid, "the event's type %q is not its body's %q", e.Type, body.Type)
	}
	return ValidateJSONText("the event's body", e.Body)
}

func (c *checkedSink) Webhook(w *WebhookEndpoint) error {
	if err := c.check(KindWebhooks, w.ID,
		validateIDOf("id", WebhookIDPrefix, w.ID), validateIDOf("workspace_id", WorkspaceIDPrefix, w.WorkspaceID), checkWebhook(w)); err != nil {
		return err
	}
	return c.next.Webhook(w)
}

// checkWebhook checks an endpoint as CreateWebhook and UpdateWebhook
// leave it. Its URL is checked as far as it can be without resolving its
// host (http included, as a server that allows private addresses takes
// it): a delivery checks the address it dials.
func checkWebhook(w *WebhookEndpoint) error {
	if err := NewWebhooks(nil, WebhooksAllowPrivate(true)).CheckURL(context.Background(), w.URL); err != nil {
		return err
	}
	events, err := validateWebhookEvents(w.EnabledEvents)
	if err != nil {
		return err
	}
	if len(events) != len(w.EnabledEvents) {
		return Errorf(EInvalid, "enabled_events names an event type twice")
	}
	if err := validateWebhookText(w.Name, w.Description, w.URL); err != nil {
		return err
	}
	if w.State != WebhookEnabled && w.State != WebhookDisabled {
		return Errorf(EInvalid, "state %q is not one of enabled, disabled", w.State)
	}
	if err := checkText("disabled_reason", w.DisabledReason, MaxDeliveryError); err != nil {
		return err
	}
	key, ok := strings.CutPrefix(w.Secret, WebhookSecretPrefix)
	if b, err := base64.StdEncoding.DecodeString(key); !ok || err != nil || len(b) < 16 {
		return Errorf(EInvalid, "the signing secret is not %s and base64 of 16 bytes or more", WebhookSecretPrefix)
	}
	return nil
}

func (c *checkedSink) WebhookCursor(wc *WebhookCursor) error {
	var bad error
	if wc.Seq < 0 || wc.OwedTo < 0 {
		bad = Errorf(EInvalid, "its numbers %d and %d are negative", wc.Seq, wc.OwedTo)
	}
	if err := c.check(KindCursors, "of endpoint "+wc.EndpointID+" in store "+wc.StoreID,
		validateIDOf("endpoint_id", WebhookIDPrefix, wc.EndpointID), validateIDOf("store_id", StoreIDPrefix, wc.StoreID), bad); err != nil {
		return err
	}
	return c.next.WebhookCursor(wc)
}

func (c *checkedSink) WebhookDelivery(d *WebhookDelivery) error {
	if err := c.check(KindDeliveries, d.Event.ID+" to endpoint "+d.EndpointID,
		validateIDOf("endpoint_id", WebhookIDPrefix, d.EndpointID), checkDelivery(d)); err != nil {
		return err
	}
	return c.next.WebhookDelivery(d)
}

// checkDelivery checks a delivery's event, state and log.
func checkDelivery(d *WebhookDelivery) error {
	ev := d.Event
	for _, err := range []error{validateIDOf("event.id", WebhookEventIDPrefix, ev.ID), validateIDOf("event.workspace_id", WorkspaceIDPrefix, ev.WorkspaceID),
		validateIDOf("event.store_id", StoreIDPrefix, ev.StoreID), optionalID("event.memory_id", MemoryIDPrefix, ev.MemoryID),
		optionalID("event.version_id", VersionIDPrefix, ev.VersionID), optionalID("event.dream_id", DreamIDPrefix, ev.DreamID), checkText("last_error", d.LastError, MaxDeliveryError)} {
		if err != nil {
			return err
		}
	}
	switch {
	case !slices.Contains(WebhookEventTypes, ev.Type):
		return Errorf(EInvalid, "event type %q is not one of %s", ev.Type, strings.Join(WebhookEventTypes, ", "))
	case d.State != DeliveryPending && d.State != DeliveryDelivered && d.State != DeliveryFailed:
		return Errorf(EInvalid, "state %q is not pending, delivered or failed", d.State)
	case d.Attempts < 0:
		return Errorf(EInvalid, "attempts %d is negative", d.Attempts)
	case d.LastStatus != 0 && (d.LastStatus < 100 || d.LastStatus > 599):
		return Errorf(EInvalid, "last status %d is not an HTTP status", d.LastStatus)
	}
	return nil
}

// optionalID is validateIDOf of an ID that may be "".
func optionalID(field, prefix, id string) error {
	if id == "" {
		return nil
	}
	return validateIDOf(field, prefix, id)
}

// checkActor checks an actor: a known type and an ID of that type.
func checkActor(field string, a Actor) error {
	prefix, ok := actorIDPrefixes[a.Type]
	if !ok {
		return Errorf(EInvalid, "%s type %q is not one of %v", field, a.Type, ActorTypes)
	}
	return validateIDOf(field+" id", prefix, a.ID)
}

// checkContent checks content and that its hash and size are its own:
// preconditions (if_content_sha256) and quotas rely on them.
func checkContent(content, sum string, size int64) error {
	if err := ValidateContent(content); err != nil {
		return err
	}
	h := sha256.Sum256([]byte(content))
	if want := hex.EncodeToString(h[:]); sum != want {
		return Errorf(EInvalid, "content_sha256 %q is not the content's (%s)", sum, want)
	}
	if size != int64(len(content)) {
		return Errorf(EInvalid, "content size %d is not the content's (%d bytes)", size, len(content))
	}
	return nil
}

// checkSecretHash checks the hash of a secret, as HashSecret makes it.
func checkSecretHash(h string) error {
	if _, err := hex.DecodeString(h); err != nil || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
		return Errorf(EInvalid, "the secret's hash is not a lowercase hex SHA-256")
	}
	return nil
}

// checkHint checks the hint of a secret (SecretHint): a few printable
// ASCII characters.
func checkHint(h string) error {
	if len(h) > 16 || strings.ContainsFunc(h, func(r rune) bool { return r < ' ' || r > '~' }) {
		return Errorf(EInvalid, "hint %q is not the end of a secret", h)
	}
	return nil
}

// checkText checks a text field kept from elsewhere: valid UTF-8 without
// NUL, at most max bytes.
func checkText(field, s string, max int) error {
	if err := ValidateText(field, s); err != nil {
		return err
	}
	if len(s) > max {
		return Errorf(EInvalid, "%s is %d bytes; the limit is %d", field, len(s), max)
	}
	return nil
}

// quoteIfOdd is a path as a message shows it: quoted when it is not a
// valid one, so that what is wrong with it shows.
func quoteIfOdd(p string) string {
	if ValidatePath(p) != nil {
		return fmt.Sprintf("%q", p)
	}
	return p
}
