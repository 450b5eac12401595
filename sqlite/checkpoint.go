package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointer copies the write-ahead log back into the database file
// beside the writer. Left to SQLite alone, the commit that crosses the
// checkpoint threshold copies the whole log back and syncs, holding the
// write lock, and every request queued behind it waits. A PASSIVE
// checkpoint on a connection of its own takes no writer lock, so writes go
// on meanwhile. It cannot finish while writes keep coming, and only a
// finished checkpoint lets the log start over; so the writer keeps an
// automatic checkpoint at a higher threshold (writerCheckpointPages),
// which then finds little left to copy and bounds the log's size.
type checkpointer struct {
	conn *sql.DB
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// owed counts the erasures (eraseLater) that could not empty the log
	// when asked: the checkpointer empties it instead of its passive
	// checkpoint until it has.
	owed atomic.Int64
}

// checkpointEvery spaces background checkpoints: one per interval at most
// while writes go on, each covering all the commits since the last.
const checkpointEvery = 50 * time.Millisecond

// writerCheckpointPages is the writer's own automatic checkpoint
// threshold, in pages (4 KiB): the log's size is bounded near 40 MiB.
const writerCheckpointPages = 10000

func startCheckpointer(conn *sql.DB) *checkpointer {
	c := &checkpointer{conn: conn, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed tells the checkpointer that the log grew; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-c.kick:
		case <-c.stop:
			return
		}
		// A failed checkpoint is retried after the next commit; the
		// writer's own checkpoints bound the log meanwhile. An owed
		// erasure is tried again, every eraseRetry, until it succeeds.
		wait := checkpointEvery
		if owed := c.owed.Load(); owed > 0 {
			if c.tryErase(ctx) {
				c.owed.Add(-owed)
			} else {
				wait = eraseRetry
				c.committed()
			}
		} else {
			c.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-c.stop:
			return
		}
	}
}

// eraseRetry spaces the background attempts to empty the log that an
// erasure owes (eraseLater), and eraseRetryWait bounds how long each
// waits for the others' readers, holding new writes back meanwhile (as
// every checkpoint that empties the log does): the attempts of a log
// that stays busy hold the writes back for a twentieth of the time.
const (
	eraseRetry     = time.Second
	eraseRetryWait = 50 * time.Millisecond
)

// tryErase empties the log as erase does, but waits for the others' locks
// for eraseRetryWait only, and says whether it did.
func (c *checkpointer) tryErase(ctx context.Context) bool {
	conn, err := c.conn.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", eraseRetryWait.Milliseconds())); err != nil {
		return false
	}
	defer conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
	var busy, logged, done int
	err = conn.QueryRowContext(ctx, "PRAGMA main.wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
	return err == nil && busy == 0
}

// close stops the checkpointer; SQLite checkpoints the whole log when the
// last connection closes. Closing again does nothing.
func (c *checkpointer) close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return c.conn.Close()
}

// erase copies the whole write-ahead log back into the database file and
// empties the log (truncateLog).
func (c *checkpointer) erase(ctx context.Context) error { return truncateLog(ctx, c.conn) }

// eraseLater has the checkpointer empty the log in the background, as
// erase does, as soon as others let it: for an erasure whose own erase
// found the log busy.
func (c *checkpointer) eraseLater() {
	c.owed.Add(1)
	c.committed()
}

// errLogBusy is truncateLog's failure when others kept the log in use.
var errLogBusy = errors.New("the write-ahead log stayed in use by other connections")

// truncateLog copies every page of the write-ahead log of conn's main
// database back into the file and then truncates the log to nothing. A
// page's older images stay in the log until then, after secure_delete
// zeroed what a write removed from the page itself: this is what takes
// erased text out of every file. It waits for the readers and the writer
// of the file, in this process or another, for up to busyTimeout.
func truncateLog(ctx context.Context, conn *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		// busy is 1 when another connection was checkpointing, or the
		// readers and writer did not let go within busy_timeout.
		var busy, logged, done int
		err := conn.QueryRowContext(ctx, "PRAGMA main.wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
		switch {
		case err != nil:
			return err
		case busy == 0:
			return nil
		case time.Now().After(deadline):
			return errLogBusy
		}
		select {
		case <-time.After(checkpointEvery):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// eraseDeleted empties the write-ahead log after a deletion has
// committed, so that the log no longer holds the pages as they were before
// secure_delete zeroed what it deleted. A deletion stands even if the
// log stays busy: it is then emptied in the background, as soon as the
// others let it (checkpointer.eraseLater), and the log says so.
func (db *DB) eraseDeleted(ctx context.Context, what slog.Attr) {
	if err := db.ck.erase(ctx); err != nil {
		db.ck.eraseLater()
		db.log.LogAttrs(ctx, slog.LevelWarn, "a deletion could not empty the write-ahead log yet; it will be emptied in the background", what, slog.String("error", err.Error()))
	}
}
