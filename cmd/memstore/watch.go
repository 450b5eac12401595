package main

import (
	"context"
	"fmt"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const watchHelp = `Usage: memstore watch [--store ID] [--from-start | --after CURSOR] [--json] [--token TOKEN]

Prints the changes of a store as they happen, one line each, until
interrupted: a memory created, modified, renamed or deleted, a version
redacted, the store archived, with its number in the store's feed, the
path, who made it, and the version. Never content.

By default it begins with the changes still to come; --from-start
replays the store's whole feed first, and --after CURSOR the changes
after an event's cursor (the "id" of --json's objects), so that a
script that stopped can resume without missing or repeating one.

With --url it follows the server's event stream, resuming from the last
event whenever the connection breaks; with --db it reads the database
whenever this process or, on PostgreSQL, any other writes the store, and
at least every quarter of a second.

--json prints each event as the API's memory_store_event object, one
per line.

A session's token (--token, MEMSTORE_TOKEN) watches one of the session's
stores, named with --store, instead of an API key.
` + backendHelp

// localRecheck is how often a feed is read from a database when no notice
// came: a database file is written by other processes too (a server),
// whose notices this one never hears.
const localRecheck = 250 * time.Millisecond

func runWatch(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "watch", watchHelp)
	bf.kinds |= withToken
	fs.StringVar(&bf.token, "token", "", "session `TOKEN` for --url, instead of an API key (or MEMSTORE_TOKEN)")
	fromStart := fs.Bool("from-start", false, "replay the store's whole feed first")
	after := fs.String("after", "", "begin after the event with this `CURSOR`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(e, "memstore watch: takes no arguments")
	case *fromStart && *after != "":
		return usageError(e, "memstore watch: give --from-start or --after, not both")
	}
	from := memstore.EventsNow
	switch {
	case *fromStart:
		from = ""
	case *after != "":
		from = *after
	}
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	if sel.token && sel.store == "" {
		return usageError(e, "memstore watch: with a session token, name one of the session's stores with --store ID (or MEMSTORE_STORE)")
	}
	c, storeID, err := sel.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.follow(ctx, storeID, from, func(ev memstore.Event) error {
		if c.json {
			return printJSON(e.stdout, httpapi.NewEventJSON(&ev))
		}
		path := ev.Path
		if path == "" {
			path = "-"
		}
		_, err := fmt.Fprintf(e.stdout, "%s  %d  %-16s  %s  %s  %s\n", fmtTime(ev.CreatedAt), ev.Seq, cell(string(ev.Type)), cell(path), cell(fmtActor(ev.Actor)), cell(ev.VersionID))
		return err
	})
}

// follow calls fn with each event of store storeID after cursor after
// (memstore.EventsNow for the changes to come), in order, as they are
// committed, until ctx ends (nil) or fn or the backend fails for good.
// A server is followed over its event stream, which resumes by itself
// when it breaks; a database is read when it tells of a change and every
// localRecheck.
func (c *conn) follow(ctx context.Context, storeID, after string, fn func(memstore.Event) error) error {
	if cl, ok := c.Services.(*httpapi.Client); ok {
		return cl.WatchEvents(ctx, c.caller, storeID, after, fn, func(err error) {
			fmt.Fprintf(c.e.stderr, "memstore: the event stream broke (%v); resuming\n", err)
		})
	}
	var wake <-chan struct{} // nil: never, without notices
	if n, ok := c.Services.(memstore.EventNotifier); ok {
		var stop func()
		wake, stop = memstore.WakeOn(n, storeID)
		defer stop()
	}
	return memstore.FollowEvents(ctx, c.Services, c.caller, storeID, after, wake, localRecheck, func(p memstore.EventPage) error {
		for _, ev := range p.Events {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	})
}
