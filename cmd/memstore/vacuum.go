package main

import (
	"context"
	"fmt"
	"time"
)

const vacuumHelp = `Usage: memstore vacuum [--db FILE|URL] [--full] [--json]

Has the database give back the space of what was changed, deleted or
redacted, working on the database itself (a server may be running on it
meanwhile).

On a database file, it rebuilds the file without its free pages, which
many deletions or an upgrade leave, and the file shrinks. Writes wait
while it runs; reads go on. Redacted content, and that of deleted stores
and sessions, is gone from the file already: each erases it.

On PostgreSQL, the tables that hold memory content and what sessions
keep hold each changed, deleted or redacted row's old version until a
vacuum, which autovacuum runs in its own time. 'memstore vacuum' runs it
now: the space becomes reusable, and nothing is locked. With --full,
those tables are rewritten into new files with only their live rows, and
their old files deleted: run it after a redaction or a deletion that
must leave no copy in the tables. Every
server waits for each table while it is rewritten. Neither reaches the
write-ahead log already written, archived WAL, replicas or backups: a
redaction's text stays there until they are recycled.

The database is --db, else MEMSTORE_DB, else memstore/memstore.db under
$XDG_DATA_HOME or ~/.local/share: the one 'memstore serve' uses.
`

func runVacuum(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "vacuum", vacuumHelp)
	f := &backendFlags{cmd: "vacuum", kinds: withDB, admin: true}
	fs.StringVar(&f.db, "db", "", "memstore database `FILE` or postgres:// URL (or MEMSTORE_DB)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	full := fs.Bool("full", false, "on PostgreSQL, rewrite the tables (locks each while it is rewritten)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore vacuum: unexpected argument %q", pos[0])
	}
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	if !f.json {
		fmt.Fprintln(e.stderr, "memstore vacuum: vacuuming; this takes a while on a large database")
	}
	start := time.Now()
	if err := c.db.Vacuum(ctx, *full); err != nil {
		return err
	}
	took := time.Since(start).Round(time.Millisecond)
	if f.json {
		return printJSON(e.stdout, struct {
			Full    bool    `json:"full"`
			Seconds float64 `json:"seconds"`
		}{*full, took.Seconds()})
	}
	fmt.Fprintf(e.stdout, "Vacuumed in %s.\n", took)
	return nil
}
