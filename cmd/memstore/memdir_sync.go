package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dirsync"
)

var memdirSyncHelp = `Usage: memstore memdir sync --store ID (--url URL --api-key KEY | --url URL --token TOKEN)
         [--scope private|team] [--watch [--poll 30s]] [--dry-run] [--prefer local|remote]
         [--cwd DIR] [--dir DIR] [--trust-project] [--settings FILE] [--json]

Syncs the memory directory with a memory store on a memstore server, both
ways: file a/b.md is memory /a/b.md. The private scope (the default) is
the directory without team/; --scope team syncs team/, with a store of
its own.

Each side's changes since the last sync reach the other, deletions
included. A MEMORY.md changed on both sides is merged line by line; any
other file changed on both sides keeps the --prefer side's version (the
store's by default) and the other beside it as
<name>.conflict-<device>-<time>.md, to resolve by hand.

Files over a memory's limit (` + strconv.Itoa(memstore.MaxContentBytes) + ` bytes), files that are
not text (not UTF-8, or with a NUL byte) and anything that is not a
regular file are skipped and reported, as are memories whose paths
cannot be files here: a name over 255 bytes, a path too long for the
system, a name the system refuses, or one that reads as ".", ".." or a
separator once percent-decoded or once look-alike characters (such as
fullwidth dots) are folded. Hidden files and directories (.git/, .env,
.ssh/...) are never synced: the store's are skipped and reported, this
directory's left alone. Nor, in any directory, is a file named as keys,
credentials or shell start-up files are (authorized_keys, known_hosts,
id_*, config, credentials, _netrc, config.fish...): skipped and
reported on either side. A file that holds a private key or another
credential is never uploaded: skipped and reported by the kind found,
never the text. A file written from the store is never executable. What was done is reported on standard error (with --json, as
a JSON object on standard output).

The directory remembers the store and what both sides last agreed on in
.memstore-sync.json. --watch keeps syncing: after local changes, once they
settle, and after each change in the store, which the server's change
feed tells of as it happens (with a check every --poll besides, and
only that against a server without the feed), until interrupted, when it
syncs one last time.

The server is --url (MEMSTORE_URL) with an API key (--api-key,
MEMSTORE_API_KEY) or a session's token (--token, MEMSTORE_TOKEN); the
store is --store (MEMSTORE_STORE). The directory is the project's memory
directory, found as 'memstore memdir path' finds it (--cwd,
--trust-project, --settings), or --dir DIR, the memory directory itself.

Exit status: 0 in step; 1 with conflicts or skipped files; 2 usage; 3
memory is disabled; 5 local I/O error; 6 server or auth error.
`

func runMemdirSync(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir sync", memdirSyncHelp)
	scope := newChoice(string(dirsync.ScopePrivate), string(dirsync.ScopePrivate), string(dirsync.ScopeTeam))
	fs.Var(scope, "scope", "`private` (the directory without team/) or team")
	store := fs.String("store", "", "memory store `NAME` or ID (or MEMSTORE_STORE)")
	bf := &backendFlags{cmd: "memdir sync", kinds: withServer}
	fs.StringVar(&bf.url, "url", "", "memstore server `URL`, without /v1 (or MEMSTORE_URL)")
	fs.StringVar(&bf.apiKey, "api-key", "", "API `KEY` (or MEMSTORE_API_KEY)")
	fs.StringVar(&bf.token, "token", "", "session `TOKEN`, instead of an API key (or MEMSTORE_TOKEN)")
	watch := fs.Bool("watch", false, "keep syncing until interrupted")
	poll := fs.Duration("poll", 30*time.Second, "with --watch, how often to check the store for changes")
	dryRun := fs.Bool("dry-run", false, "report what would be done, change nothing")
	prefer := newChoice(dirsync.PreferRemote, dirsync.PreferRemote, dirsync.PreferLocal)
	fs.Var(prefer, "prefer", "the side whose version keeps the path in a conflict: `remote` or local")
	target := addMemdirTarget(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore memdir sync: unexpected argument %q", pos[0])
	}
	if err := applyEnv(e, "memdir sync", fs, map[string]string{"store": "MEMSTORE_STORE"}); err != nil {
		return err
	}
	if *store == "" {
		return usageError(e, "memstore memdir sync: say which store with --store ID (or MEMSTORE_STORE)")
	}
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	switch {
	case *watch && *dryRun:
		return usageError(e, "memstore memdir sync: --watch and --dry-run do not go together")
	case *watch && *poll < time.Second:
		return usageError(e, "memstore memdir sync: --poll must be at least 1s")
	}

	const cmd = "memdir sync"
	loc, err := target.locateEnabled(e, cmd)
	if err != nil {
		return err
	}
	syncDir := loc.Dir
	if dirsync.Scope(scope.value) == dirsync.ScopeTeam {
		syncDir = loc.TeamDir()
	}

	c, err := sel.open(ctx, e)
	if err != nil {
		// The server's or the credential's fault, as a sync's would be.
		fmt.Fprintf(e.stderr, "memstore %s: %v\n", cmd, err)
		return exitServer
	}
	defer c.Close()
	if *store, err = c.resolveStore(ctx, *store, false); err != nil {
		fmt.Fprintf(e.stderr, "memstore %s: %v\n", cmd, err)
		switch memstore.ErrorCode(err) {
		case memstore.ENotFound, memstore.EInvalid, memstore.EConflict:
			return exitCode(2) // no store, or several, by that name
		}
		return exitServer
	}
	device, _ := os.Hostname()
	o := dirsync.Options{
		Memories: c,
		Caller:   c.caller,
		StoreID:  *store,
		Dir:      syncDir,
		Scope:    dirsync.Scope(scope.value),
		Prefer:   prefer.value,
		DryRun:   *dryRun,
		Device:   device,
	}
	out := &syncOutput{e: e, json: target.json}
	if *watch {
		changed, stop := followStore(ctx, e, c, *store, *poll)
		defer stop()
		err := dirsync.Watch(ctx, o, dirsync.WatchOptions{RemotePoll: *poll, RemoteChanged: changed, OnPass: out.pass})
		return out.exit(err, out.last != nil && out.last.Findings())
	}
	rep, err := dirsync.Sync(ctx, o)
	out.pass(rep, err)
	return out.exit(err, rep.Findings())
}

// followStore follows the store's change feed for a watch: changed
// receives a signal after each change of the store, until stop. The
// feed's end is read before the watch's first sync, so that no change
// after that sync goes unsignalled. A server without a feed, or a feed
// that fails for good, leaves the watch to its poll, which is said once.
func followStore(ctx context.Context, e env, c *conn, storeID string, poll time.Duration) (changed <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	fallback := func(err error) {
		fmt.Fprintf(e.stderr, "memstore memdir sync: not following the store's changes (%v); checking it every %s\n", err, poll)
	}
	page, err := c.Events(ctx, c.caller, storeID, memstore.EventFilter{After: memstore.EventsNow, Limit: 1})
	if err != nil {
		fallback(err)
		close(done)
	} else {
		go func() {
			defer close(done)
			err := c.follow(fctx, storeID, page.Cursor, func(memstore.Event) error {
				select {
				case ch <- struct{}{}:
				default:
				}
				return nil
			})
			if err != nil && fctx.Err() == nil {
				fallback(err)
			}
		}()
	}
	return ch, func() { cancel(); <-done }
}

// syncOutput reports the passes of a sync: a summary on stderr, or one
// JSON object per pass on stdout.
type syncOutput struct {
	e         env
	json      bool
	lastSkips []dirsync.Skip // a watch repeats a skip only when the list changes
	last      *dirsync.Report
}

// syncReportJSON is a pass's report with its error, if any.
type syncReportJSON struct {
	*dirsync.Report
	Error string `json:"error,omitempty"`
}

func (o *syncOutput) pass(rep *dirsync.Report, err error) {
	o.last = rep
	if o.json {
		j := syncReportJSON{Report: rep}
		if err != nil {
			j.Error = err.Error()
			fmt.Fprintf(o.e.stderr, "memstore memdir sync: %v\n", err)
		}
		printJSON(o.e.stdout, j)
		return
	}
	w := o.e.stderr
	tense := 0
	if rep.DryRun {
		tense = 1
	}
	for _, c := range rep.Changes {
		note := ""
		if c.Note != "" {
			note = " (" + c.Note + ")"
		}
		fmt.Fprintf(w, syncVerb[c.Op][tense]+"%s\n", cell(c.Path), note)
	}
	for _, c := range rep.Conflicts {
		winner, other := "the store's", "yours"
		if c.Winner == dirsync.PreferLocal {
			winner, other = "yours", "the store's"
		}
		kept := "is kept"
		if rep.DryRun {
			kept = "would be kept"
		}
		fmt.Fprintf(w, "conflict %s: changed on both sides; %s keeps the path, %s %s as %s\n",
			cell(c.Path), winner, other, kept, cell(c.Kept))
	}
	if !slices.Equal(rep.Skipped, o.lastSkips) {
		for _, k := range rep.Skipped {
			rule := ""
			if k.Rule != "" {
				rule = " [" + k.Rule + "]"
			}
			fmt.Fprintf(w, "skipped %s (%s): %s%s\n", cell(k.Path), k.Side, cell(k.Reason), rule)
		}
		o.lastSkips = rep.Skipped
	}
	if err != nil {
		fmt.Fprintf(w, "memstore memdir sync: %v\n", err)
		return
	}
	fmt.Fprintf(w, "%s %s with %s: %s, %s, %d skipped, %d unchanged\n",
		map[bool]string{true: "planned", false: "synced"}[rep.DryRun], cell(rep.Dir), rep.StoreID,
		plural(len(rep.Changes), "change", "changes"), plural(len(rep.Conflicts), "conflict", "conflicts"),
		len(rep.Skipped), rep.Unchanged)
}

// syncVerb says what a change did, for a person, and what it would do
// in a dry run: a format for the path.
var syncVerb = map[string][2]string{
	dirsync.OpPush:         {"pushed %s", "would push %s"},
	dirsync.OpCreate:       {"created %s", "would create %s"},
	dirsync.OpDeleteRemote: {"deleted %s in the store", "would delete %s in the store"},
	dirsync.OpPull:         {"pulled %s", "would pull %s"},
	dirsync.OpDeleteLocal:  {"deleted %s here", "would delete %s here"},
	dirsync.OpMerge:        {"merged %s", "would merge %s"},
}

// exit is the command's exit status for a sync's error and findings; the
// error was already reported.
func (o *syncOutput) exit(err error, findings bool) error {
	switch {
	case err == nil && findings:
		return exitFindings
	case err == nil:
		return nil
	case errors.Is(err, dirsync.ErrOtherStore):
		return errUsage
	case errors.Is(err, dirsync.ErrRemote):
		return exitServer
	case errors.Is(err, dirsync.ErrLocal), errors.Is(err, dirsync.ErrBusy):
		return exitLocalIO
	}
	return exitCode(1)
}
