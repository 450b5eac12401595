package sqlread

import (
	"errors"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// The statements of the reads that always read alike, with PostgreSQL's
// placeholders, made in a dialect's once (Dialect.SQL).
var (
	storeQuery   = `SELECT ` + sqlrow.StoreColumns + ` FROM stores WHERE id = $1 AND workspace_id = $2`
	sessionQuery = `SELECT ` + sqlrow.SessionColumns + ` FROM sessions s WHERE s.id = $1 AND s.workspace_id = $2`
	memoryQuery  = `SELECT ` + sqlrow.Prefixed("m.", sqlrow.MemoryColumns(true, "")) + `
		FROM memories m JOIN stores s ON s.id = m.store_id
		WHERE m.id = $1 AND m.store_id = $2 AND s.workspace_id = $3`
	// The version's store, always the event's, lets SQLite read
	// versions by its (store_id, id) key.
	eventsQuery = `SELECT ` + sqlrow.EventColumns + `
		FROM events e LEFT JOIN versions v ON v.store_id = e.store_id AND v.id = e.version_id
		WHERE e.store_id = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3`
)

// Store reads a store of the workspace (ENotFound); lock, when set,
// ends the statement (FOR UPDATE, FOR SHARE, ...).
func Store(tx Tx, d *Dialect, workspaceID, id, lock string) (*memstore.Store, error) {
	s, err := sqlrow.ScanStore(tx.QueryRow(d.SQL(storeQuery+lockClause(lock)), id, workspaceID))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrStoreNotFound(id))
	}
	return s, nil
}

func lockClause(lock string) string {
	if lock == "" {
		return ""
	}
	return " " + lock
}

// Stores lists the stores of a workspace with keyset pagination on
// (created_at DESC, id DESC), served by stores_by_workspace.
func Stores(read Read, d *Dialect, workspaceID string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	return storeList.page(read, d, workspaceID, f.Limit, f.Page, func(q *Query) (where []string) {
		if !f.IncludeArchived {
			where = append(where, "archived_at IS NULL")
		}
		if f.CreatedAtGTE != nil {
			where = append(where, "created_at >= "+q.Arg(keyset.Nanos(*f.CreatedAtGTE)))
		}
		if f.CreatedAtLTE != nil {
			where = append(where, "created_at <= "+q.Arg(keyset.Nanos(*f.CreatedAtLTE)))
		}
		return where
	})
}

var storeList = newestFirst[memstore.Store]{
	table: "stores", columns: sqlrow.StoreColumns, kind: keyset.Stores, scan: sqlrow.ScanStore,
	key: func(s *memstore.Store) (time.Time, string) { return s.CreatedAt, s.ID },
}

// A newestFirst is a list of a workspace's rows of one table, newest
// first, with keyset pagination on (created_at, id): one range of the
// table's (workspace_id, created_at, id) index per page.
type newestFirst[T any] struct {
	table, columns, kind string
	scan                 func(sqlrow.Row) (*T, error)
	key                  func(*T) (time.Time, string)
}

// page reads a page of the workspace's rows from cursor page ("" for
// the first): filter returns the list's own conditions, their arguments
// added to q.
func (l newestFirst[T]) page(read Read, d *Dialect, workspaceID string, limit int, page string, filter func(q *Query) []string) (memstore.Page[T], error) {
	n, err := memstore.PageSize(limit, false)
	if err != nil {
		return memstore.Page[T]{}, err
	}
	cur, err := keyset.Parse(page, l.kind)
	if err != nil {
		return memstore.Page[T]{}, err
	}
	q := d.Query(workspaceID)
	where := append([]string{"workspace_id = " + d.Param(1)}, filter(q)...)
	if cur != nil {
		where = append(where, "(created_at, id) < ("+q.Arg(cur.Time)+", "+q.Arg(cur.Key)+")")
	}
	var items []T
	err = read(func(tx Tx) error {
		rows, err := tx.Query(`SELECT `+l.columns+` FROM `+l.table+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY created_at DESC, id DESC LIMIT `+q.Arg(n+1), q.Args...)
		items, err = collect(rows, err, l.scan)
		return err
	})
	if err != nil {
		return memstore.Page[T]{}, err
	}
	return keyset.ByTime(items, n, l.kind, l.key), nil
}

// Memories lists the memories of a store: the walk of the list
// (keyset.MemoryWalk) over the (store_id, path) index, in one read.
func Memories(read Read, d *Dialect, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	w, err := keyset.NewMemoryWalk(f)
	if err != nil {
		return memstore.Page[memstore.ListItem]{}, err
	}
	var page memstore.Page[memstore.ListItem]
	err = read(func(tx Tx) error {
		page, err = w.Walk(func(r keyset.MemoryRange, yield func(*memstore.Memory) bool) error {
			q, after := d.Query(storeID, r.From), " > "
			if r.Inclusive {
				after = " >= "
			}
			where := "store_id = " + d.Param(1) + " AND path" + after + d.Param(2)
			if r.To != "" {
				where += " AND path < " + q.Arg(r.To)
			}
			rows, err := tx.Query(`SELECT `+sqlrow.MemoryColumns(f.Full, d.EmptyContent)+` FROM memories WHERE `+where+` ORDER BY path LIMIT `+q.Arg(r.Want), q.Args...)
			return eachMemory(rows, err, func(m *memstore.Memory) (bool, error) { return yield(m), nil })
		})
		return err
	})
	if err != nil {
		return memstore.Page[memstore.ListItem]{}, err
	}
	return page, nil
}

// Events lists the events of a store after f.After, joined to their
// versions for the path and hash, in one read.
func Events(read Read, d *Dialect, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return memstore.EventPage{}, err
	}
	after, known, err := keyset.EventsAfter(f.After, storeID)
	if err != nil {
		return memstore.EventPage{}, err
	}
	var events []memstore.Event
	err = read(func(tx Tx) error {
		if !known {
			if err := tx.QueryRow(d.SQL(`SELECT coalesce((SELECT seq FROM events WHERE store_id = $1 ORDER BY seq DESC LIMIT 1), 0)`), storeID).Scan(&after); err != nil {
				return err
			}
		}
		rows, err := tx.Query(d.SQL(eventsQuery), storeID, after, n+1)
		events, err = collect(rows, err, sqlrow.ScanEvent)
		return err
	})
	if err != nil {
		return memstore.EventPage{}, err
	}
	return keyset.EventsPage(storeID, after, events, n), nil
}

// Session reads a session of the workspace with its attachments
// (ENotFound); lock, when set, ends the statement.
func Session(tx Tx, d *Dialect, workspaceID, id, lock string) (*memstore.Session, error) {
	s, err := sqlrow.ScanSession(tx.QueryRow(d.SQL(sessionQuery+lockClause(lock)), id, workspaceID))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrSessionNotFound(id))
	}
	return s, Attach(tx, d, []*memstore.Session{s})
}

// sessionExists fails with ENotFound unless the workspace has session id:
// a list of a session's rows is not an empty page of another
// workspace's session.
func sessionExists(tx Tx, d *Dialect, workspaceID, id string) error {
	var one int
	err := tx.QueryRow(d.SQL(`SELECT 1 FROM sessions WHERE id = $1 AND workspace_id = $2`), id, workspaceID).Scan(&one)
	return d.notFound(err, memstore.ErrSessionNotFound(id))
}

// Attach loads the attachments of sessions, in their order, in one
// statement whatever their number.
func Attach(tx Tx, d *Dialect, sessions []*memstore.Session) error {
	if len(sessions) == 0 {
		return nil
	}
	byID := make(map[string]*memstore.Session, len(sessions))
	idList := make([]string, len(sessions))
	for i, s := range sessions {
		byID[s.ID], idList[i] = s, s.ID
	}
	q := d.Query()
	rows, err := tx.Query(`SELECT `+sqlrow.AttachmentColumns+` FROM `+sqlrow.SessionStores.Name+
		` WHERE `+d.OneOf(q, "session_id", idList)+` ORDER BY session_id, position`, q.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		sid, a, err := sqlrow.ScanAttachment(rows)
		if err != nil {
			return err
		}
		if s := byID[sid]; s != nil {
			s.Attachments = append(s.Attachments, a)
		}
	}
	return rows.Err()
}

// Sessions lists the sessions of a workspace (archived ones only with
// f.IncludeArchived), with keyset pagination on (created_at, id), newest
// first unless f.Ascending: served by sessions_by_workspace, or by
// session_stores_by_store for the sessions of one store.
func Sessions(read Read, d *Dialect, workspaceID string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	var page memstore.Page[memstore.Session]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	kind, dir, after := keyset.Sessions, "DESC", "<"
	if f.Ascending {
		kind, dir, after = keyset.SessionsAsc, "ASC", ">"
	}
	cur, err := keyset.Parse(f.Page, kind)
	if err != nil {
		return page, err
	}
	// The store's attachments hold the sessions' created_at, so both
	// lists keep their keyset in one index.
	from, at, id := `sessions s`, `s.created_at`, `s.id`
	q := d.Query(workspaceID)
	where := []string{"s.workspace_id = " + d.Param(1)}
	if f.StoreID != "" {
		from, at, id = `session_stores a JOIN sessions s ON s.id = a.session_id`, `a.created_at`, `a.session_id`
		where = append(where, "a.store_id = "+q.Arg(f.StoreID))
	}
	switch {
	case f.ArchivedOnly:
		where = append(where, "s.archived_at IS NOT NULL")
	case !f.IncludeArchived:
		where = append(where, "s.archived_at IS NULL")
	}
	if f.AgentID != "" {
		where = append(where, d.AgentID("s.fields")+` = `+q.Arg(f.AgentID))
	}
	for _, b := range []struct {
		op string
		t  *time.Time
	}{{">", f.CreatedAtGT}, {">=", f.CreatedAtGTE}, {"<", f.CreatedAtLT}, {"<=", f.CreatedAtLTE}} {
		if b.t != nil {
			where = append(where, at+" "+b.op+" "+q.Arg(keyset.Nanos(*b.t)))
		}
	}
	if cur != nil {
		where = append(where, "("+at+", "+id+") "+after+" ("+q.Arg(cur.Time)+", "+q.Arg(cur.Key)+")")
	}
	var (
		items []*memstore.Session
		more  bool
	)
	err = read(func(tx Tx) error {
		rows, err := tx.Query(`SELECT `+sqlrow.SessionColumns+` FROM `+from+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY `+at+` `+dir+`, `+id+` `+dir+` LIMIT `+q.Arg(n+1), q.Args...)
		got, err := collect(rows, err, sqlrow.ScanSession)
		if err != nil {
			return err
		}
		items = items[:0]
		for i := range got {
			items = append(items, &got[i])
		}
		if more = len(items) > n; more {
			items = items[:n]
		}
		return Attach(tx, d, items)
	})
	if err != nil {
		return memstore.Page[memstore.Session]{}, err
	}
	for _, s := range items {
		page.Items = append(page.Items, *s)
	}
	if more {
		last := items[n-1]
		page.Next = keyset.Cursor{Kind: kind, Time: keyset.Nanos(last.CreatedAt), Key: last.ID}.String()
	}
	return page, nil
}

// SessionTokens lists the tokens of a session with keyset pagination on
// (created_at, id): one range of session_tokens_by_session per page.
func SessionTokens(read Read, d *Dialect, workspaceID, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	var page memstore.Page[memstore.SessionToken]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	cur, err := keyset.Parse(f.Page, keyset.Tokens)
	if err != nil {
		return page, err
	}
	q := d.Query(sessionID)
	where := `session_id = ` + d.Param(1)
	if cur != nil {
		where += ` AND (created_at, id) > (` + q.Arg(cur.Time) + `, ` + q.Arg(cur.Key) + `)`
	}
	err = read(func(tx Tx) error {
		if err := sessionExists(tx, d, workspaceID, sessionID); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT `+sqlrow.TokenColumns+` FROM session_tokens WHERE `+where+` ORDER BY created_at, id LIMIT `+q.Arg(n+1), q.Args...)
		page.Items, err = collect(rows, err, sqlrow.ScanToken)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, err
	}
	return keyset.ByTime(page.Items, n, keyset.Tokens, func(t *memstore.SessionToken) (time.Time, string) { return t.CreatedAt, t.ID }), nil
}

// SessionToken reads a token of the workspace (ENotFound).
func SessionToken(tx Tx, d *Dialect, workspaceID, id string) (*memstore.SessionToken, error) {
	t, err := sqlrow.ScanToken(tx.QueryRow(d.SQL(`SELECT `+sqlrow.TokenColumns+` FROM session_tokens WHERE id = $1 AND workspace_id = $2`), id, workspaceID))
	if err != nil {
		return nil, d.notFound(err, memstore.ErrTokenNotFound(id))
	}
	return t, nil
}

// TokenBySecret reads the token whose secret has the hash secretHash
// (one indexed lookup), then its session, in the read of tx.
func TokenBySecret(tx Tx, d *Dialect, secretHash string) (*memstore.SessionToken, *memstore.Session, error) {
	t, err := sqlrow.ScanToken(tx.QueryRow(d.SQL(`SELECT `+sqlrow.TokenColumns+` FROM session_tokens WHERE secret_sha256 = $1`), secretHash))
	if err != nil {
		return nil, nil, d.notFound(err, memstore.ErrUnknownSecret("session token"))
	}
	s, err := Session(tx, d, t.WorkspaceID, t.SessionID, "")
	if err != nil {
		return nil, nil, err
	}
	return t, s, nil
}

// Memory reads a memory in one statement, the store's workspace checked
// by the join: the hot path of every client.
func Memory(tx Tx, d *Dialect, workspaceID, storeID, id string) (*memstore.Memory, error) {
	m, err := sqlrow.ScanMemory(tx.QueryRow(d.SQL(memoryQuery), id, storeID, workspaceID))
	if err != nil {
		return nil, MemoryMissing(tx, d, err, workspaceID, storeID, id)
	}
	return m, nil
}

// MemoryMissing turns the failure err of a lookup of a memory into the
// error to report, saying whether the store or the memory is missing.
func MemoryMissing(tx Tx, d *Dialect, err error, workspaceID, storeID, id string) error {
	if !errors.Is(err, d.NoRows) {
		return err
	}
	var one int
	if err := tx.QueryRow(d.SQL(`SELECT 1 FROM stores WHERE id = $1 AND workspace_id = $2`), storeID, workspaceID).Scan(&one); err != nil {
		return d.notFound(err, memstore.ErrStoreNotFound(storeID))
	}
	return memstore.ErrMemoryNotFound(id)
}

// MemoryUnlessAt reads a memory unless its version is version, when it
// returns nil: version reads the memory's version alone (d.NoRows when
// it is missing), which costs less than the memory, and the memory is
// read only when that is not version.
func MemoryUnlessAt(tx Tx, d *Dialect, workspaceID, storeID, id, version string, current func() (string, error)) (*memstore.Memory, error) {
	if version != "" {
		v, err := current()
		switch {
		case err != nil:
			return nil, MemoryMissing(tx, d, err, workspaceID, storeID, id)
		case v == version:
			return nil, nil
		}
	}
	return Memory(tx, d, workspaceID, storeID, id)
}
