package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memstore/memstore"
)

const migrateHelp = `Usage: memstore migrate --from SOURCE --to TARGET [--json]

Copies a whole memstore database into an empty one: a database file into
PostgreSQL, PostgreSQL into a file, or a file into another. SOURCE and
TARGET are each the path of a database file or a postgres:// URL.

Everything is copied as it is: workspaces, API keys, stores (archived
ones too), memories, every version (redacted ones stay redacted),
sessions and their tokens, webhook endpoints (with their signing
secrets, so that their receivers verify deliveries as before, and their
states) and their delivery logs, with their IDs and times. The API keys
and session tokens that worked on SOURCE work on TARGET, and every ID a
client holds still names the same thing. Deliveries still pending are
copied with their attempts and next attempt: a server on TARGET makes
them, under the same webhook-id.

All or nothing: TARGET is written in one transaction, so it gets
everything or, should anything fail or the command be interrupted,
nothing (a new database file is left empty; run the command again).
SOURCE is read in one snapshot: what is written to it once the copy has
begun is not copied, so stop the servers on it first.

TARGET must be empty: a database that holds any workspace, key, store or
session is refused and left as it is. A missing TARGET file is made.
On a file, the memories are indexed for search before the command ends.

Progress goes to stderr, and a summary of what was copied to stdout
(with --json: {"workspaces", "keys", "stores", "memories", "versions",
"sessions", "tokens", "webhooks", "deliveries"}, each a count).
`

// migrateProgressEvery bounds the progress lines: one a second at most.
const migrateProgressEvery = time.Second

func runMigrate(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "migrate", migrateHelp)
	from := fs.String("from", "", "the database to copy: a database file or a postgres:// URL")
	to := fs.String("to", "", "the empty database to copy into: a database file (made if missing) or a postgres:// URL")
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

	t := &tally{w: e.stderr, counts: map[memstore.RecordKind]int64{}}
	var dumpErr error
	err = dst.Restore(ctx, func(sink memstore.RecordSink) error {
		t.RecordSink = sink
		dumpErr = src.Dump(ctx, t)
		return dumpErr
	})
	switch {
	case err == nil:
	case t.RecordSink == nil: // refused before the copy began
		return fmt.Errorf("%s: %w", dstName, err)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted; %s is left as it was, empty", dstName)
	case dumpErr != nil && t.writeErr == nil:
		return fmt.Errorf("cannot read %s: %w; %s is left as it was, empty", srcName, err, dstName)
	default:
		return fmt.Errorf("cannot write to %s: %w; it is left as it was, empty", dstName, err)
	}

	// A file's search indexes are built beside the writer: waiting for
	// them here spares the first search of a server the wait.
	if ix, ok := dst.(interface{ WaitSearchIndex(context.Context) error }); ok && t.counts[memstore.KindMemories] > 0 {
		fmt.Fprintf(e.stderr, "indexing %s for search\n", plural(int(t.counts[memstore.KindMemories]), "memory", "memories"))
		if err := ix.WaitSearchIndex(ctx); err != nil {
			return fmt.Errorf("%s holds the copy, but its search indexes are not built yet (a server builds them when it starts): %w", dstName, err)
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
// them by kind and reporting its progress on w.
type tally struct {
	memstore.RecordSink // the target's
	w                   io.Writer
	kind                memstore.RecordKind
	p                   *progress
	counts              map[memstore.RecordKind]int64
	// writeErr is the target's first error, which tells it apart from
	// the source's.
	writeErr error
}

func (t *tally) Begin(kind memstore.RecordKind, total int64) error {
	t.kind, t.counts[kind] = kind, 0
	t.p = newProgress(t.w, "copied "+string(kind), int(total))
	t.p.interval = migrateProgressEvery
	return t.wrote(t.RecordSink.Begin(kind, total), false)
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
	return t.wrote(t.RecordSink.Workspace(r), true)
}

func (t *tally) APIKey(r *memstore.APIKeyRecord) error {
	return t.wrote(t.RecordSink.APIKey(r), true)
}

func (t *tally) Store(r *memstore.Store) error { return t.wrote(t.RecordSink.Store(r), true) }

func (t *tally) Memory(r *memstore.Memory) error { return t.wrote(t.RecordSink.Memory(r), true) }

func (t *tally) Version(r *memstore.Version) error {
	return t.wrote(t.RecordSink.Version(r), true)
}

func (t *tally) Event(r *memstore.Event) error {
	return t.wrote(t.RecordSink.Event(r), true)
}

func (t *tally) Session(r *memstore.Session) error {
	return t.wrote(t.RecordSink.Session(r), true)
}

func (t *tally) SessionToken(r *memstore.SessionTokenRecord) error {
	return t.wrote(t.RecordSink.SessionToken(r), true)
}

func (t *tally) Webhook(r *memstore.WebhookEndpoint) error {
	return t.wrote(t.RecordSink.Webhook(r), true)
}

func (t *tally) WebhookCursor(r *memstore.WebhookCursor) error {
	return t.wrote(t.RecordSink.WebhookCursor(r), true)
}

func (t *tally) WebhookDelivery(r *memstore.WebhookDelivery) error {
	return t.wrote(t.RecordSink.WebhookDelivery(r), true)
}
