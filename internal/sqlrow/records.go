package sqlrow

import (
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// Users and webhook endpoints are read and written by the backends' own
// statements too, with the columns, scan and values of their kinds here:
// each of their rows is described once, for the API and for a copy.

// UserColumns are the columns of a user's row, in the order ScanUser
// reads them and UserValues gives them.
var UserColumns = users.table.Columns

// ScanUser scans a row of UserColumns.
func ScanUser(r Row) (*memstore.User, error) { return users.scan(r) }

// UserValues are the values of u's row, in UserColumns' order.
func UserValues(u *memstore.User) []any { return must(users.values(u)) }

// WebhookColumns are the columns of a webhook endpoint's row, in the
// order ScanWebhook reads them and WebhookValues gives them.
var WebhookColumns = webhooks.table.Columns

// ScanWebhook scans a row of WebhookColumns.
func ScanWebhook(r Row) (*memstore.WebhookEndpoint, error) { return webhooks.scan(r) }

// WebhookValues are the values of w's row, in WebhookColumns' order.
func WebhookValues(w *memstore.WebhookEndpoint) []any { return must(webhooks.values(w)) }

// must is values that cannot fail: the fields of users and webhook
// endpoints are all of types that value takes (TestRecordValues).
func must(values []any, err error) []any {
	if err != nil {
		panic(err)
	}
	return values
}

// Prefixed is the comma-separated columns cols, each with prefix (a
// table's alias and a dot).
func Prefixed(prefix, cols string) string {
	return prefix + strings.ReplaceAll(cols, ", ", ", "+prefix)
}

// VersionColumns are the columns of a version's row, in the order
// ScanVersion reads them; when full is false, null (NULL of the content
// column's type in the backend's dialect) stands in for the content,
// which a list reads only when asked.
func VersionColumns(full bool, null string) string {
	if full {
		return versions.table.Columns
	}
	return strings.Replace(versions.table.Columns, ", content,", ", "+null+",", 1)
}

// ScanVersion scans a row of VersionColumns.
func ScanVersion(r Row) (*memstore.Version, error) { return versions.scan(r) }

// SignInColumns are the columns of a sign-in (s) and of its user (u), in
// the order ScanSignIn reads them.
var SignInColumns = Prefixed("s.", signIns.table.Columns) + ", " + Prefixed("u.", users.table.Columns)

// ScanSignIn scans a row of SignInColumns.
func ScanSignIn(r Row) (*memstore.SignIn, *memstore.User, error) {
	var (
		s memstore.SignIn
		u memstore.User
	)
	if err := r.Scan(append(signInFields(&s), userFields(&u)...)...); err != nil {
		return nil, nil, err
	}
	return &s, &u, nil
}

// InsertSignIn is the statement that inserts a sign-in's row
// (SignInValues), given the placeholder of the nth value in the
// backend's dialect.
func InsertSignIn(param func(n int) string) string { return signIns.table.Insert(param) }

// SignInValues are the values of s's row.
func SignInValues(s *memstore.SignIn) []any { return must(signIns.values(s)) }

// EventColumns are the columns of an event as the API lists it, with
// the memory, path and hash of its version (events e LEFT JOIN versions
// v), in the order ScanEvent reads them.
const EventColumns = `e.seq, e.type, coalesce(v.memory_id, ''), coalesce(e.version_id, ''), coalesce(v.path, ''), coalesce(v.sha256, ''),
	e.actor_type, e.actor_id, e.created_at`

// ScanEvent scans a row of EventColumns.
func ScanEvent(r Row) (*memstore.Event, error) {
	var e memstore.Event
	err := r.Scan(&e.Seq, enum(&e.Type), &e.MemoryID, &e.VersionID, &e.Path, &e.ContentSHA256, enum(&e.Actor.Type), &e.Actor.ID, nanos{&e.CreatedAt})
	return &e, err
}

// StoreColumns are the columns of a store's row, its counts of memories
// and content included, in the order ScanStore reads them.
var StoreColumns = stores.table.Select()

// ScanStore scans a row of StoreColumns.
func ScanStore(r Row) (*memstore.Store, error) { return stores.scan(r) }

// InsertStore is the statement that inserts a new store's row
// (StoreValues), given the placeholder of the nth value in the
// backend's dialect.
func InsertStore(param func(n int) string) string { return stores.table.Insert(param) }

// StoreValues are the values of s's row.
func StoreValues(s *memstore.Store) []any { return must(stores.values(s)) }

// MemoryColumns are the columns of a memory's row, in the order
// ScanMemory reads them; when full is false, empty (the empty value of
// the content column's type in the backend's dialect) stands in for the
// content, which a list reads only when asked.
func MemoryColumns(full bool, empty string) string {
	if full {
		return memories.table.Columns
	}
	return strings.Replace(memories.table.Columns, ", content,", ", "+empty+",", 1)
}

// ScanMemory scans a row of MemoryColumns.
func ScanMemory(r Row) (*memstore.Memory, error) { return memories.scan(r) }

// SessionColumns are the columns of a session's row, of the sessions
// table named s, in the order ScanSession reads them.
var SessionColumns = Prefixed("s.", sessions.table.Columns)

// ScanSession scans a row of SessionColumns, without its attachments.
func ScanSession(r Row) (*memstore.Session, error) { return sessions.scan(r) }

// TokenColumns are the columns of a session token as the API reads it,
// without the hash of its secret, in the order ScanToken reads them.
const TokenColumns = tokenColumns

// ScanToken scans a row of TokenColumns.
func ScanToken(r Row) (*memstore.SessionToken, error) {
	var t memstore.SessionToken
	return &t, r.Scan(tokenFields(&t)...)
}

// AttachmentColumns are the columns of an attachment's row, of the
// table SessionStores, in the order ScanAttachment reads them.
const AttachmentColumns = "session_id, store_id, access, instructions, name, description, mount_path"

// ScanAttachment scans a row of AttachmentColumns: the attachment and
// the ID of its session.
func ScanAttachment(r Row) (sessionID string, a memstore.Attachment, err error) {
	err = r.Scan(&sessionID, &a.StoreID, enum(&a.Access), byteText{&a.Instructions}, &a.Name, byteText{&a.Description}, &a.MountPath)
	return sessionID, a, err
}

// UpdateStore is the statement that keeps a store's name, description,
// metadata and time of update (UpdateStoreValues), given the
// placeholder of the nth value in the backend's dialect.
func UpdateStore(param func(n int) string) string {
	return `UPDATE stores SET name = ` + param(1) + `, description = ` + param(2) + `, metadata = ` + param(3) +
		`, updated_at = ` + param(4) + ` WHERE id = ` + param(5)
}

// UpdateStoreValues are the values of UpdateStore for s.
func UpdateStoreValues(s *memstore.Store) ([]any, error) {
	meta, err := jsonMap[string]{&s.Metadata}.Value()
	if err != nil {
		return nil, err
	}
	return []any{s.Name, text(s.Description), meta, keyset.Nanos(s.UpdatedAt), s.ID}, nil
}

// InsertSession is the statement that inserts a new session's row
// (SessionValues), given the placeholder of the nth value in the
// backend's dialect; its attachments are rows of their own
// (InsertAttachment).
func InsertSession(param func(n int) string) string { return sessions.table.Insert(param) }

// SessionValues are the values of s's row: an error when its fields
// do not encode.
func SessionValues(s *memstore.Session) ([]any, error) { return sessions.values(s) }

// UpdateSession is the statement that keeps a session's title,
// metadata, fields and times of update and archive
// (UpdateSessionValues).
func UpdateSession(param func(n int) string) string {
	return `UPDATE sessions SET title = ` + param(1) + `, metadata = ` + param(2) + `, fields = ` + param(3) + `, updated_at = ` + param(4) +
		`, archived_at = ` + param(5) + ` WHERE id = ` + param(6) + ` AND workspace_id = ` + param(7)
}

// UpdateSessionValues are the values of UpdateSession for s: those of
// its row, in the statement's order.
func UpdateSessionValues(s *memstore.Session) ([]any, error) {
	v, err := sessions.values(s) // id, workspace_id, title, metadata, fields, created_at, updated_at, archived_at
	if err != nil {
		return nil, err
	}
	return []any{v[2], v[3], v[4], v[6], v[7], v[0], v[1]}, nil
}

// InsertAttachment is the statement that inserts the row of an
// attachment of a session (AttachmentValues).
func InsertAttachment(param func(n int) string) string { return SessionStores.Insert(param) }

// AttachmentValues are the values of the row of attachment i of s, at
// its position i and with the session's creation time, by which a
// store's sessions are listed.
func AttachmentValues(s *memstore.Session, i int) []any { return attachmentValues(s, i) }

// InsertToken is the statement that inserts a new session token's row
// (TokenValues).
func InsertToken(param func(n int) string) string { return sessionTokens.table.Insert(param) }

// TokenValues are the values of the row of t, whose secret has the hash
// secretHash.
func TokenValues(t *memstore.SessionToken, secretHash string) []any {
	return must(sessionTokens.values(&memstore.SessionTokenRecord{SessionToken: *t, SecretSHA256: secretHash}))
}

// An Exec runs one statement in a backend's write transaction.
type Exec func(query string, args ...any) error

// WriteSession inserts the session s (a new one with its attachments) or,
// with update, updates its row and, with attachments, replaces its
// attachments by deleting them all and inserting those of s; in the
// dialect whose placeholders param spells.
func WriteSession(exec Exec, param func(n int) string, s *memstore.Session, update, attachments bool) error {
	query, values := InsertSession(param), SessionValues
	if update {
		query, values = UpdateSession(param), UpdateSessionValues
	}
	v, err := values(s)
	if err == nil {
		err = exec(query, v...)
	}
	if err != nil || !attachments {
		return err
	}
	if update {
		if err := exec(`DELETE FROM session_stores WHERE session_id = `+param(1), s.ID); err != nil {
			return err
		}
	}
	for i := range s.Attachments {
		if err := exec(InsertAttachment(param), AttachmentValues(s, i)...); err != nil {
			return err
		}
	}
	return nil
}

// DreamColumns are the columns of a dream's row, in the order ScanDream
// reads them.
var DreamColumns = dreams.table.Columns

// ScanDream scans a row of DreamColumns.
func ScanDream(r Row) (*memstore.Dream, error) { return dreams.scan(r) }

// InsertDream is the statement that inserts a new dream's row
// (DreamValues), given the placeholder of the nth value in the
// backend's dialect.
func InsertDream(param func(n int) string) string { return dreams.table.Insert(param) }

// DreamValues are the values of d's row.
func DreamValues(d *memstore.Dream) ([]any, error) { return dreams.values(d) }

// UpdateDream is the statement that keeps every column of a dream's row
// but its ID and workspace, with the values of DreamValues in their
// order, the ID and workspace last.
func UpdateDream(param func(n int) string) string {
	cols := strings.Split(dreams.table.Columns, ", ")
	set := make([]string, 0, len(cols))
	for i, c := range cols[2:] {
		set = append(set, c+" = "+param(i+1))
	}
	n := len(set)
	return `UPDATE dreams SET ` + strings.Join(set, ", ") + ` WHERE id = ` + param(n+1) + ` AND workspace_id = ` + param(n+2)
}

// UpdateDreamValues are the values of UpdateDream for d.
func UpdateDreamValues(d *memstore.Dream) ([]any, error) {
	v, err := dreams.values(d)
	if err != nil {
		return nil, err
	}
	return append(v[2:], v[0], v[1]), nil
}

// SessionEventColumns are the columns of a session event's row, in the
// order ScanSessionEvent reads them and SessionEventValues gives them.
var SessionEventColumns = sessionEvents.table.Columns

// ScanSessionEvent scans a row of SessionEventColumns.
func ScanSessionEvent(r Row) (*memstore.SessionEvent, error) { return sessionEvents.scan(r) }

// SessionEventValues are the values of e's row, in SessionEventColumns'
// order.
func SessionEventValues(e *memstore.SessionEvent) []any { return must(sessionEvents.values(e)) }

// InsertSessionEvent is the statement that inserts a session event's row
// (SessionEventValues), given the placeholder of the nth value.
func InsertSessionEvent(param func(n int) string) string { return sessionEvents.table.Insert(param) }
