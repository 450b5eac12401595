package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/memstore/memstore"
)

const migrateHelp = `Usage: memstore migrate --from SOURCE --to TARGET [--snapshot] [--json]

Copies a whole memstore database into an empty one: a database file into
PostgreSQL, PostgreSQL into a file, or a file into another. SOURCE and
TARGET are each the path of a database file or a postgres:// URL.

Everything is copied as it is: workspaces, API keys, console users (with
their password hashes and roles) and their sign-ins (console sessions
and one-time links), stores (archived ones too), memories, every version
(redacted ones stay redacted), the stores' change feeds, sessions and
their tokens, webhook endpoints (with their signing secrets, so that
their receivers verify deliveries as before, and their states) and their
delivery logs, with their IDs and times. The API keys, session tokens,
passwords and console sign-ins that worked on SOURCE work on TARGET, and
every ID a client holds still names the same thing. Deliveries still
pending are copied with their attempts and next attempt: a server on
TARGET makes them, under the same webhook-id.

Every record is checked as the API checks what it is sent (IDs, paths,
names, content and its hash and size, metadata, types and states): the
first that fails stops the copy, naming its kind, its ID or path, and what
is wrong.

All or nothing: TARGET is written in one transaction, so it gets
everything or, should anything fail or the command be interrupted,
nothing (a new database file is left empty; run the command again).

SOURCE is read in one consistent snapshot (one read transaction of a
file, a REPEATABLE READ one on PostgreSQL), then read again before TARGET
is committed: if anything was written to SOURCE meanwhile, by a server
still running on it, nothing is kept and the command says so. Stop the
servers on SOURCE first. With --snapshot, the snapshot is kept instead:
TARGET holds SOURCE as it stood when the copy began, without what was
written since, and the command says when that was.

TARGET must be empty: a database that holds any workspace, key, store or
session is refused and left as it is. A missing TARGET file is made.
On a file, the memories are indexed for search before the command ends.

Progress goes to stderr, and a summary of what was copied to stdout
(with --json: {"workspaces", "keys", "users", "sign_ins", "stores",
"memories", "versions", "events", "sessions", "tokens", "webhooks",
"webhook_cursors", "deliveries"}, each a count).
`

// migrateProgressEvery bounds the progress lines: one a second at most.
const migrateProgressEvery = time.Second

// errSourceChanged is a copy whose source changed while it was read.
var errSourceChanged = errors.New("the source changed while it was copied")

func runMigrate(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "migrate", migrateHelp)
	from := fs.String("from", "", "the database to copy: a database file or a postgres:// URL")
	to := fs.String("to", "", "the empty database to copy into: a database file (made if missing) or a postgres:// URL")
	snapshot := fs.Bool("snapshot", false, "keep the snapshot of SOURCE taken when the copy began, even if it was written to since")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError(e, "memstore migrate: unexpected argument %q; the databases are given with --from and --to", fs.Arg(0))
	case *from == "" || *to == "":
		return usageError(e, "memstore migrate: give both --from SOURCE and --to TARGET; run 'memstore migrate --help' for more")
	case *from == *to:
		return usageError(e, "memstore migrate: --from and --to name the same database; give an empty one as --to")
	}
	srcName, dstName := databaseName(*from), databaseName(*to)

	src, err := openDatabase(ctx, *from, dbOptions{})
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	dst, err := openDatabase(ctx, *to, dbOptions{create: true})
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()

	t := newTally(e.stderr)
	var dumpErr error
	began := time.Now()
	err = dst.Restore(ctx, func(sink memstore.RecordSink) error {
		t.RecordSink = sink
		if dumpErr = src.Dump(ctx, t); dumpErr != nil || *snapshot {
			return dumpErr
		}
		// Read SOURCE again before TARGET commits: a record written,
		// changed or removed since the snapshot changes the sum.
		fmt.Fprintf(e.stderr, "checking that %s did not change during the copy\n", srcName)
		again := newTally(io.Discard)
		if dumpErr = src.Dump(ctx, again); dumpErr != nil {
			return dumpErr
		}
		if !bytes.Equal(again.sum.Sum(nil), t.sum.Sum(nil)) {
			return errSourceChanged
		}
		return nil
	})
	var bad *memstore.RecordError
	switch {
	case err == nil:
	case t.RecordSink == nil: // refused before the copy began
		return fmt.Errorf("%s: %w", dstName, err)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted; %s is left as it was, empty", dstName)
	case errors.As(err, &bad):
		return fmt.Errorf("%s holds a record that memstore refuses: %v. Nothing was copied: %s is left as it was, empty", srcName, bad, dstName)
	case errors.Is(err, errSourceChanged):
		return fmt.Errorf("%s was written to while it was copied (is a server still running on it?). Nothing was copied: %s is left as it was, empty. "+
			"Stop every server on %s and run the command again, or add --snapshot to copy %s as it stood when the copy began", srcName, dstName, srcName, srcName)
	case dumpErr != nil && t.writeErr == nil:
		return fmt.Errorf("cannot read %s: %w; %s is left as it was, empty", srcName, err, dstName)
	default:
		return fmt.Errorf("cannot write to %s: %w; it is left as it was, empty", dstName, err)
	}
	if *snapshot {
		fmt.Fprintf(e.stderr, "copied %s as it stood at %s: what was written to it since is not in %s\n", srcName, fmtTime(began), dstName)
	}

	// A file's search indexes are built beside the writer: waiting for
	// them here spares the first search of a server the wait.
	if ix, ok := dst.(interface{ WaitSearchIndex(context.Context) error }); ok && t.counts[memstore.KindMemories] > 0 {
		fmt.Fprintf(e.stderr, "indexing %s for search\n", plural(int(t.counts[memstore.KindMemories]), "memory", "memories"))
		if err := ix.WaitSearchIndex(ctx); err != nil {
			// The copy is whole and committed: a server finishes the
			// indexing by itself.
			fmt.Fprintf(e.stderr, "warning: %s holds the whole copy, but indexing it for search stopped (%v); a server on it indexes the rest by itself\n", dstName, err)
		}
	}
	if *asJSON {
		return printJSON(e.stdout, t.counts)
	}
	parts := make([]string, len(memstore.RecordKinds))
	for i, k := range memstore.RecordKinds {
		parts[i] = fmt.Sprintf("%s %d", k, t.counts[k])
	}
	fmt.Fprintf(e.stdout, "copied from %s to %s: %s\n", srcName, dstName, strings.Join(parts, ", "))
	return nil
}

// tally passes the records of a copy on to the target's sink, counting
// them by kind, summing them (each record's kind and JSON), and reporting
// its progress on w.
type tally struct {
	memstore.RecordSink // the target's; nil to sum only
	w                   io.Writer
	kind                memstore.RecordKind
	p                   *progress
	counts              map[memstore.RecordKind]int64
	sum                 hash.Hash
	// writeErr is the target's first error, which tells it apart from
	// the source's.
	writeErr error
}

func newTally(w io.Writer) *tally {
	return &tally{w: w, counts: map[memstore.RecordKind]int64{}, sum: sha256.New()}
}

func (t *tally) Begin(kind memstore.RecordKind, total int64) error {
	t.kind, t.counts[kind] = kind, 0
	t.p = newProgress(t.w, "copied "+string(kind), int(total))
	t.p.interval = migrateProgressEvery
	fmt.Fprintf(t.sum, "begin %s %d\n", kind, total)
	if t.RecordSink == nil {
		return nil
	}
	return t.wrote(t.RecordSink.Begin(kind, total), false)
}

// put sums record r, has write pass it to the target, and counts it
// unless the target refused it.
func put[R any](t *tally, r *R, write func(*R) error) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Fprintf(t.sum, "%s %d\n", t.kind, len(b))
	t.sum.Write(b)
	if t.RecordSink == nil {
		return t.wrote(nil, true)
	}
	return t.wrote(write(r), true)
}

// wrote counts a record written, unless the target refused it.
func (t *tally) wrote(err error, record bool) error {
	if err != nil {
		t.writeErr = err
		return err
	}
	if record {
		t.counts[t.kind]++
		t.p.step()
	}
	return nil
}

func (t *tally) Workspace(r *memstore.Workspace) error {
	return put(t, r, func(r *memstore.Workspace) error { return t.RecordSink.Workspace(r) })
}

func (t *tally) APIKey(r *memstore.APIKeyRecord) error {
	return put(t, r, func(r *memstore.APIKeyRecord) error { return t.RecordSink.APIKey(r) })
}

func (t *tally) User(r *memstore.User) error {
	return put(t, r, func(r *memstore.User) error { return t.RecordSink.User(r) })
}

func (t *tally) SignIn(r *memstore.SignIn) error {
	return put(t, r, func(r *memstore.SignIn) error { return t.RecordSink.SignIn(r) })
}

func (t *tally) Store(r *memstore.Store) error {
	return put(t, r, func(r *memstore.Store) error { return t.RecordSink.Store(r) })
}

func (t *tally) Memory(r *memstore.Memory) error {
	return put(t, r, func(r *memstore.Memory) error { return t.RecordSink.Memory(r) })
}

func (t *tally) Version(r *memstore.Version) error {
	return put(t, r, func(r *memstore.Version) error { return t.RecordSink.Version(r) })
}

func (t *tally) Event(r *memstore.Event) error {
	return put(t, r, func(r *memstore.Event) error { return t.RecordSink.Event(r) })
}

func (t *tally) Session(r *memstore.Session) error {
	return put(t, r, func(r *memstore.Session) error { return t.RecordSink.Session(r) })
}

func (t *tally) SessionToken(r *memstore.SessionTokenRecord) error {
	return put(t, r, func(r *memstore.SessionTokenRecord) error { return t.RecordSink.SessionToken(r) })
}

func (t *tally) Dream(r *memstore.Dream) error {
	return put(t, r, func(r *memstore.Dream) error { return t.RecordSink.Dream(r) })
}

func (t *tally) SessionEvent(r *memstore.SessionEvent) error {
	return put(t, r, func(r *memstore.SessionEvent) error { return t.RecordSink.SessionEvent(r) })
}

func (t *tally) Webhook(r *memstore.WebhookEndpoint) error {
	return put(t, r, func(r *memstore.WebhookEndpoint) error { return t.RecordSink.Webhook(r) })
}

func (t *tally) WebhookCursor(r *memstore.WebhookCursor) error {
	return put(t, r, func(r *memstore.WebhookCursor) error { return t.RecordSink.WebhookCursor(r) })
}

func (t *tally) WebhookDelivery(r *memstore.WebhookDelivery) error {
	return put(t, r, func(r *memstore.WebhookDelivery) error { return t.RecordSink.WebhookDelivery(r) })
}
