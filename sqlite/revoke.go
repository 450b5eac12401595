package sqlite

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/tick"
)

// Revocations between processes. SQLite has no notices from one process
// to another, so a revocation leaves a row in the revocations table,
// in its own transaction, and a DB that has listeners
// (a server: NotifyRevocations; a short-lived command never has) reads
// the rows added since it last looked, every revocationPoll, on its read
// pool: one indexed read of nothing, most of the time, off the path of
// every request. It tells its listeners of the rows of other handles
// (its own were told at their commit), so that a key revoked by
// 'memstore keys revoke --db' ends the server's streams and MCP sessions
// of that key within revocationPoll, as the server's own revocations do.
//
// Only the newest keptRevocations rows are kept. Rows are numbered
// without gaps, so a reader that finds a gap after the last row it read
// missed some (it fell that far behind): it tells its listeners that
// notices went unheard (memstore.Revocation.Unheard), and they read
// every caller they hold afresh. So does a reader whose reads failed for
// a while, once they work again.

// revocationPoll spaces the reads of the revocations table: it bounds how
// long a credential revoked by another process goes on working here.
const revocationPoll = 500 * time.Millisecond

// keptRevocations bounds the revocations table; a reader that fell
// further behind reads every caller again instead.
var keptRevocations = 1000

// revocationPage bounds the rows one read of the table takes.
const revocationPage = 100

// polling is the state of a DB's reader of the revocations table.
type polling struct {
	// origin tells this DB's rows from others', which its listeners
	// have heard already.
	origin string
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine ends
}

// noteRevocation adds r to the revocations table in tx, the transaction
// that revokes, for the other processes on the file, and drops the rows
// beyond the newest keptRevocations.
func (db *DB) noteRevocation(ctx context.Context, tx *txn, r memstore.Revocation) error {
	refresh := 0
	if r.Refresh {
		refresh = 1
	}
	if _, err := tx.exec(ctx, `INSERT INTO revocations (origin, api_key_id, session_id, token_id, refresh) VALUES (?, ?, ?, ?, ?)`,
		db.poll.origin, r.APIKeyID, r.SessionID, r.TokenID, refresh); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `DELETE FROM revocations WHERE seq <= (SELECT max(seq) FROM revocations) - ?`, keptRevocations)
	return err
}

// NotifyRevocations implements memstore.RevocationNotifier: f hears of the
// revocations made through this DB at once, and of those of every other
// process on the file within revocationPoll.
func (db *DB) NotifyRevocations(f func(memstore.Revocation)) (stop func()) {
	db.poll.once.Do(db.startPolling)
	return db.Revocations.NotifyRevocations(f)
}

// startPolling reads where the table ends before it returns, so that
// every revocation committed afterwards is heard, and then reads the rows
// after it in a goroutine until Close.
func (db *DB) startPolling() {
	ctx, cancel := context.WithCancel(context.Background())
	db.poll.cancel, db.poll.done = cancel, make(chan struct{})
	var last int64
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM revocations`).Scan(&last)
	go func() {
		defer close(db.poll.done)
		unheard := err != nil // from where, then, is not known
		tick.Every(ctx, revocationPoll, func() bool {
			if unheard {
				// Once the table can be read, its end is where this
				// reader starts, and what came before went unheard.
				if err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM revocations`).Scan(&last); err != nil {
					return true
				}
				unheard = false
				db.log.LogAttrs(ctx, slog.LevelInfo, "reading other processes' revocations again")
				db.Revoked(memstore.Revocation{Unheard: true})
			}
			var err error
			if last, err = db.readRevocations(ctx, last); err != nil && ctx.Err() == nil {
				db.log.LogAttrs(ctx, slog.LevelWarn, "could not read other processes' revocations; reading them again", slog.String("error", err.Error()))
				unheard = true
			}
			return true
		})
	}()
}

// readRevocations tells this process's listeners of the rows of other
// handles after row last, and returns the last row read.
func (db *DB) readRevocations(ctx context.Context, last int64) (int64, error) {
	for {
		rows, err := db.r.QueryContext(ctx, `SELECT seq, origin, api_key_id, session_id, token_id, refresh FROM revocations WHERE seq > ? ORDER BY seq LIMIT ?`, last, revocationPage)
		if err != nil {
			return last, err
		}
		n := 0
		for rows.Next() {
			var (
				seq     int64
				origin  string
				r       memstore.Revocation
				refresh int
			)
			if err := rows.Scan(&seq, &origin, &r.APIKeyID, &r.SessionID, &r.TokenID, &refresh); err != nil {
				rows.Close()
				return last, err
			}
			if seq != last+1 {
				// Rows this reader never saw were dropped.
				db.Revoked(memstore.Revocation{Unheard: true})
			}
			r.Refresh = refresh == 1
			if origin != db.poll.origin {
				db.Revoked(r)
			}
			last = seq
			n++
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return last, err
		}
		if err := rows.Close(); err != nil || n < revocationPage {
			return last, err
		}
	}
}

// stopPolling ends the reading goroutine, if one was started, and waits
// for it.
func (db *DB) stopPolling() {
	db.poll.once.Do(func() {}) // none may start from now on
	if db.poll.cancel != nil {
		db.poll.cancel()
		<-db.poll.done
	}
}

// newOrigin names a DB among the handles on its file.
func newOrigin() string { return rand.Text() }
