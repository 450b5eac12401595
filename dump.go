package memstore

import "context"

// A whole database can be copied to another, of the same backend or not,
// record by record: a Dumper reads every record of one, a Restorer writes
// them into another, and neither knows the other's backend. They are an
// operator's tool, like KeyService: they bypass the Core and copy what is
// stored exactly as it is, IDs, times, hashes of secrets and redactions
// included, so that every credential and every ID a client holds stays
// valid on the copy.

// A RecordKind is one kind of record of a database.
type RecordKind string

// The kinds of record, in the order of RecordKinds.
const (
	KindWorkspaces    RecordKind = "workspaces"
	KindAPIKeys       RecordKind = "keys"
	KindUsers         RecordKind = "users"
	KindSignIns       RecordKind = "sign_ins"
	KindStores        RecordKind = "stores"
	KindMemories      RecordKind = "memories"
	KindVersions      RecordKind = "versions"
	KindEvents        RecordKind = "events"
	KindSessions      RecordKind = "sessions"
	KindSessionTokens RecordKind = "tokens"
	KindSessionEvents RecordKind = "session_events"
	KindWebhooks      RecordKind = "webhooks"
	KindCursors       RecordKind = "webhook_cursors"
	KindDeliveries    RecordKind = "deliveries"
	KindDreams        RecordKind = "dreams"
)

// RecordKinds is the order in which a Dumper hands the kinds over and a
// Restorer takes them: each kind refers only to kinds before it. Console
// users come with their password hashes and roles, and their sign-ins
// (console sessions and one-time links) with them, so that everyone signs
// in to the copy as before. Webhook
// endpoints come after the stores, memories and events, so that restoring
// those makes no webhook events. The events are copied as they are, so
// that a feed's consumer resumes on the copy from the cursor it holds.
var RecordKinds = []RecordKind{KindWorkspaces, KindAPIKeys, KindUsers, KindSignIns, KindStores, KindMemories, KindVersions, KindEvents, KindSessions, KindSessionTokens, KindSessionEvents, KindDreams, KindWebhooks, KindCursors, KindDeliveries}

// DumpPage is how many records a Dumper reads from its database at a
// time: with MaxContentBytes of content each at most, a page of memories
// or versions stays around ten megabytes, whatever the database's size.
const DumpPage = 100

// An APIKeyRecord is an API key as a database keeps it: with the hash of
// its secret (HashSecret), by which the key authenticates.
type APIKeyRecord struct {
	APIKey
	SecretSHA256 string
}

// A SessionTokenRecord is a session token as a database keeps it: with
// the hash of its secret.
type SessionTokenRecord struct {
	SessionToken
	SecretSHA256 string
}

// A RecordSink takes the records of a whole database, kind by kind in the
// order of RecordKinds, each kind announced by Begin (even when it has no
// record). Any error stops the copy.
type RecordSink interface {
	// Begin announces the records of kind that follow: total of them.
	Begin(kind RecordKind, total int64) error
	Workspace(*Workspace) error
	APIKey(*APIKeyRecord) error
	// User takes a console user with its password hash and role.
	User(*User) error
	// SignIn takes a user's console session or one-time sign-in link, as
	// kept: the hash of its secret, and its times.
	SignIn(*SignIn) error
	// Store takes a store, archived or not, with its metadata.
	Store(*Store) error
	// Memory takes a live memory with its content.
	Memory(*Memory) error
	// Version takes a version with its content, unless it has none (a
	// deletion, or a redacted version, which has no path either).
	Version(*Version) error
	// Event takes an event of a store's feed as it is kept: its store,
	// number, type, version, actor and time (its path and hash are its
	// version's).
	Event(*Event) error
	// Session takes a session with its attachments, in their order.
	Session(*Session) error
	SessionToken(*SessionTokenRecord) error
	// Dream takes a dream as it stands, its lease included.
	Dream(*Dream) error
	// SessionEvent takes an event of a session's transcript as it is
	// kept: its ID, session, number, type, body and time.
	SessionEvent(*SessionEvent) error
	// Webhook takes a webhook endpoint with its signing secret and
	// state.
	Webhook(*WebhookEndpoint) error
	// WebhookCursor takes where an endpoint stands in a store's feed.
	WebhookCursor(*WebhookCursor) error
	// WebhookDelivery takes a delivery of the endpoints' logs, pending
	// ones included, as it stands (without URL and secret).
	WebhookDelivery(*WebhookDelivery) error
}

// A Dumper reads a whole database.
type Dumper interface {
	// Dump hands every record of the database to sink, in one snapshot
	// of it, DumpPage records held at a time. It returns the first
	// error, from the database or from sink.
	Dump(ctx context.Context, sink RecordSink) error
}

// A Restorer fills an empty database.
type Restorer interface {
	// Restore runs fill in one transaction of the database, handing it
	// the sink that writes the records it is given, as they are, once
	// each passed CheckRecords; they must come in the order of
	// RecordKinds. A database that already
	// holds a workspace, API key, store or session is refused
	// (ErrNotEmpty) and fill is not called. Unless fill and every write
	// succeed, nothing of it is kept: the database stays empty.
	Restore(ctx context.Context, fill func(RecordSink) error) error
}

// ErrNotEmpty is a Restorer's refusal of a database that holds data.
func ErrNotEmpty() *Error {
	return Errorf(EConflict, "the database is not empty (it holds workspaces, API keys, stores or sessions); give an empty one")
}
