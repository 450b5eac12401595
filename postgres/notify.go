package postgres

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
)

// Revocations between processes. A revocation made through a DB is told
// at once to the listeners of this process (memstore.Revocations), then
// to every other process on the database by a NOTIFY on
// revocationChannel, after its commit. A DB listens on that channel from
// its first NotifyRevocations on (a short-lived command never does), on a
// connection of its own, and tells its listeners of what it hears: a
// server drops a revoked credential from its authentication cache within
// milliseconds, whichever replica revoked it. A notice can be lost while
// the listening connection is down (after a restart of PostgreSQL, say):
// it tries again every relistenDelay, and once it listens again it tells
// its listeners that notices went unheard, so that they read every
// caller afresh. A revocation committed while it was down thus takes
// effect here at most relistenDelay after the database is back. This is
// PostgreSQL's alone: SQLite has no notices between processes, and polls
// a table instead (the sqlite package's revoke.go).

//
// New events travel the same way, on eventChannel, and so does a store's
// deletion, which its streams learn by reading its feed (gone): a write
// tells this process's listeners of its store at once, and a goroutine tells the
// other processes of the stores written since it last did, in one
// statement, so that notices cost one statement per burst of writes
// rather than one per write. A notice only wakes a reader, which reads
// the feed from its own cursor; one lost while a connection is down
// costs a reader the wait for its next periodic read.

// The channels of the notices.
const (
	revocationChannel = "memstore_revocations"
	eventChannel      = "memstore_events" // payload: origin, a space, store ID
)

// relistenDelay spaces the attempts to listen again after a failure:
// short, as it bounds how long a revocation made meanwhile goes unheard.
// A failed attempt is cheap (a refused connection) and logged only when
// listening stops and when it starts again.
const relistenDelay = 250 * time.Millisecond

// listening is the state of a DB's listening connection.
type listening struct {
	// origin tells this DB's notices from others', which its listeners
	// have heard already.
	origin string
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{} // closed when the listening goroutine ends
}

// A notice is what goes on the channel.
type notice struct {
	Origin     string              `json:"origin"`
	Revocation memstore.Revocation `json:"revocation"`
}

// sending is the state of the goroutine that tells the other processes
// of new events.
type sending struct {
	once    sync.Once
	mu      sync.Mutex
	pending map[string]bool // the stores to tell of
	wake    chan struct{}   // one buffered signal: pending is not empty
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine ends
}

// NotifyEvents implements memstore.EventNotifier: f hears of the stores
// with new events through this DB at once, and through other processes
// within moments of their commit.
func (db *DB) NotifyEvents(f func(storeID string)) (stop func()) {
	db.listen.once.Do(db.startListening)
	return db.Notices.NotifyEvents(f)
}

// evented tells of new events of store storeID, just committed: this
// process's listeners, then, soon, the other processes.
func (db *DB) evented(storeID string) {
	db.Notify(storeID)
	db.indexSoon(storeID)
	db.send.once.Do(db.startSending)
	db.send.mu.Lock()
	if db.send.pending != nil {
		db.send.pending[storeID] = true
	}
	db.send.mu.Unlock()
	select {
	case db.send.wake <- struct{}{}:
	default:
	}
}

// startSending starts the goroutine that sends the pending notices,
// until Close.
func (db *DB) startSending() {
	ctx, cancel := context.WithCancel(context.Background())
	db.send.cancel, db.send.done = cancel, make(chan struct{})
	db.send.mu.Lock()
	db.send.pending, db.send.wake = map[string]bool{}, make(chan struct{}, 1)
	db.send.mu.Unlock()
	go func() {
		defer close(db.send.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-db.send.wake:
			}
			db.send.mu.Lock()
			payloads := make([]string, 0, len(db.send.pending))
			for id := range db.send.pending {
				payloads = append(payloads, db.listen.origin+" "+id)
			}
			clear(db.send.pending)
			db.send.mu.Unlock()
			if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) p`, eventChannel, payloads); err != nil && ctx.Err() == nil {
				db.log.LogAttrs(ctx, slog.LevelWarn, "could not tell the other processes of new events; their streams will read them in their own time", slog.String("error", err.Error()))
			}
		}
	}()
}

// stopSending ends the sending goroutine, if one was started, and waits
// for it.
func (db *DB) stopSending() {
	db.send.once.Do(func() {}) // none may start from now on
	if db.send.cancel != nil {
		db.send.cancel()
		<-db.send.done
	}
}

// NotifyRevocations implements memstore.RevocationNotifier: f hears of the
// revocations made by every process on the database, through this DB at
// once and through others within moments of their commit.
func (db *DB) NotifyRevocations(f func(memstore.Revocation)) (stop func()) {
	db.listen.once.Do(db.startListening)
	return db.Revocations.NotifyRevocations(f)
}

// revoked tells of r, just committed: this process's listeners, then the
// other processes. A failed notice is logged; the others' caches then
// expire the credential in their own time.
func (db *DB) revoked(ctx context.Context, r memstore.Revocation) {
	db.Revoked(r)
	payload, err := json.Marshal(notice{Origin: db.listen.origin, Revocation: r})
	if err == nil {
		_, err = db.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_notify($1, $2)`, revocationChannel, string(payload))
	}
	if err != nil {
		db.log.LogAttrs(ctx, slog.LevelWarn, "could not tell the other processes of a revocation; their caches will expire it", slog.String("error", err.Error()))
	}
}

// startListening listens on the channel before it returns, when it can,
// so that every revocation committed afterwards is heard, and then hears
// notices in a goroutine until Close.
func (db *DB) startListening() {
	ctx, cancel := context.WithCancel(context.Background())
	db.listen.cancel, db.listen.done = cancel, make(chan struct{})
	conn, err := db.listenConn(ctx)
	go func() {
		defer close(db.listen.done)
		for {
			if err == nil {
				err = db.hear(ctx, conn)
				conn.Close(context.Background())
			}
			if ctx.Err() != nil {
				return
			}
			db.log.LogAttrs(ctx, slog.LevelWarn, "not hearing other processes' revocations; listening again", slog.String("error", err.Error()))
			for err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(relistenDelay):
				}
				conn, err = db.listenConn(ctx)
			}
			db.log.LogAttrs(ctx, slog.LevelInfo, "hearing other processes' revocations again")
			db.Revoked(memstore.Revocation{Unheard: true})
		}
	}()
}

// listenConn opens a connection of its own, outside the pool, and listens
// on it.
func (db *DB) listenConn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+revocationChannel+`; LISTEN `+eventChannel); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// hear tells this process's listeners of each notice until conn fails or
// ctx ends. A notice of this DB's own, or that is not one, is ignored.
func (db *DB) hear(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel == eventChannel {
			origin, store, ok := strings.Cut(n.Payload, " ")
			if ok && origin != db.listen.origin {
				db.Notify(store)
			}
			continue
		}
		var nt notice
		if json.Unmarshal([]byte(n.Payload), &nt) == nil && nt.Origin != db.listen.origin {
			db.Revoked(nt.Revocation)
		}
	}
}

// stopListening ends the listening goroutine, if one was started, and
// waits for it.
func (db *DB) stopListening() {
	db.listen.once.Do(func() {}) // none may start from now on
	if db.listen.cancel != nil {
		db.listen.cancel()
		<-db.listen.done
	}
}
