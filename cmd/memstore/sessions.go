package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const sessionsHelp = `Usage: memstore sessions create --store ID[:ro] [--instructions TEXT] [--store ...]... [--title TEXT] [--expires-in DURATION] [--conversation]
       memstore sessions ls [--store ID] [--archived]
       memstore sessions show ID
       memstore sessions token ID [--expires-in DURATION]
       memstore sessions revoke ID [--yes]
       memstore sessions update ID [--title TEXT] [--metadata KEY=VALUE]... [--unset-metadata KEY]... [--conversation=true|false]
       memstore sessions attach ID --store STORE[:ro|:rw] [--instructions TEXT]
       memstore sessions detach ID --store STORE
       memstore sessions rm ID [--yes]
       memstore sessions events ID
       memstore sessions import FILE --session ID

Manages sessions: the way an agent reaches memory. A session attaches up
to 8 stores, each read-write or read-only (ID:ro), with instructions for
the agent, and comes with a token that reaches those stores and nothing
else: the agent reads, lists and searches them, and writes only the
read-write ones. Its changes are recorded as the session's.

  create  make a session and print its ID and token; the token is printed
          alone on the last line and is not shown again:
            export MEMSTORE_TOKEN=$(memstore sessions create --store ID | tail -1)
          --instructions applies to the --store before it; --conversation
          says the memories its searches find are turns of conversations,
          whatever its stores say (metadata memstore.conversation)
  ls      list sessions, newest first (only those attaching --store;
          ended ones too with --archived)
  show    print a session, its stores and its tokens
  token   make another token for a session
  revoke  with a token ID (sesntok_...), stop that token; with a session ID
          (sesn_...), end the session: all its tokens stop
  update  change a session's title or metadata; metadata is merged:
          --metadata sets a key, --unset-metadata removes one
  attach  attach another store to a live session, or change the access
          (:ro or :rw) and instructions of one already attached; its
          tokens reach the store from their next request
  detach  remove a store from a live session: its tokens no longer
          reach it from their next request
  rm      delete a session with its tokens, which stop working, and its
          transcript; the memories it wrote keep its ID as their author
  events  print a session's transcript, oldest first
  import  append a Claude Code transcript (a .jsonl file) to a session's
          transcript, tool calls and results included

STORE is a store's name or ID. revoke and rm cannot be undone: they ask
first on a terminal, and take --yes in scripts.

With --url, revoke, attach, detach and rm take effect on the session's
next request; with --db, a running server may go on with what its tokens
could do for a few seconds more.

Run 'memstore sessions SUBCOMMAND --help' for a subcommand's flags.
` + backendHelp

func sessionsCommands() []command {
	return []command{
		{"create", "make a session and its first token", runSessionsCreate},
		{"ls", "list sessions", runSessionsLs},
		{"show", "print a session", runSessionsShow},
		{"token", "make another token", runSessionsToken},
		{"revoke", "stop a token, or end a session", runSessionsRevoke},
		{"update", "change a session's title or metadata", runSessionsUpdate},
		{"attach", "attach a store, or change its access", runSessionsAttach},
		{"detach", "remove a store from a session", runSessionsDetach},
		{"rm", "delete a session and its tokens", runSessionsRm},
		{"events", "print a session's transcript", runSessionsEvents},
		{"import", "append a Claude Code transcript to a session", runSessionsImport},
	}
}

func runSessions(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usageError(e, "memstore sessions: say what to do: create, ls, show, token, revoke, update, attach, detach, rm, events or import; run 'memstore sessions --help' for more")
	}
	return dispatch(ctx, e, "sessions", sessionsHelp, "", sessionsCommands(), args)
}

func sessionFlags(e env, sub, usage string) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, "sessions "+sub, usage+backendHelp)
	return fs, addBackendFlags(fs, "sessions "+sub, false)
}

// attachFlags collects --store ID[:ro] and the --instructions that follow
// each, in order.
type attachFlags struct{ list []memstore.AttachmentCreate }

func (a *attachFlags) store() flag.Value {
	return flagFunc(func(s string) error {
		id, mode, _ := strings.Cut(s, ":")
		c := memstore.AttachmentCreate{StoreID: id}
		switch mode {
		case "":
		case "ro", "read_only":
			c.Access = memstore.AccessReadOnly
		case "rw", "read_write":
			c.Access = memstore.AccessReadWrite
		default:
			return fmt.Errorf("want STORE, STORE:ro or STORE:rw (a name or ID), not %q", s)
		}
		if id == "" {
			return errors.New("a store name or ID is required")
		}
		a.list = append(a.list, c)
		return nil
	})
}

func (a *attachFlags) instructions() flag.Value {
	return flagFunc(func(s string) error {
		if len(a.list) == 0 {
			return errors.New("give --instructions after the --store it is for")
		}
		a.list[len(a.list)-1].Instructions = s
		return nil
	})
}

// flagFunc is a flag.Value that calls a function.
type flagFunc func(string) error

func (f flagFunc) String() string     { return "" }
func (f flagFunc) Set(s string) error { return f(s) }

func runSessionsCreate(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "create", "Usage: memstore sessions create --store ID[:ro] [--instructions TEXT] [--store ...]... [--title TEXT] [--expires-in DURATION] [--conversation]\n\nMakes a session with stores attached and prints its ID and its token.\n")
	var att attachFlags
	fs.Var(att.store(), "store", "attach store `NAME` or ID, read-only with NAME:ro (repeatable, at most 8)")
	fs.Var(att.instructions(), "instructions", "`TEXT` telling the agent how to use the store given before it")
	title := fs.String("title", "", "a `TITLE` for the session")
	expires := fs.Duration("expires-in", 0, "the token expires after `DURATION` (e.g. 8h; default: never)")
	conversation := addConversationFlag(fs, "its searches find")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	md := metadataFlag{}
	if err := setConversation(e, "sessions create", fs, conversation, md); err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(e, "memstore sessions create: unexpected argument %q (attach stores with --store)", pos[0])
	case len(att.list) == 0:
		return usageError(e, "memstore sessions create: attach at least one store with --store ID (see 'memstore stores ls')")
	case *expires < 0:
		return usageError(e, "memstore sessions create: --expires-in must be positive")
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.resolveAttachments(ctx, att.list); err != nil {
		return err
	}
	s, tok, secret, err := c.CreateSession(ctx, c.caller, memstore.SessionCreate{Title: *title, Metadata: md, Stores: att.list, TokenTTL: *expires})
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.NewCreatedSessionJSON(s, tok, secret))
	}
	fmt.Fprintf(e.stdout, "Created session %s.\n", cell(s.ID))
	writeAttachments(c, s)
	fmt.Fprintf(e.stdout, "Its token %s%s will not be shown again:\n", cell(tok.ID), expiry(tok))
	fmt.Fprintln(e.stdout, secret)
	return nil
}

func expiry(t *memstore.SessionToken) string {
	if t.ExpiresAt == nil {
		return ""
	}
	return " (expires " + fmtTime(*t.ExpiresAt) + ")"
}

// writeAttachments prints a session's stores as a table.
func writeAttachments(c *conn, s *memstore.Session) {
	tw := newTable(c.e.stdout)
	row(tw, "MOUNT", "STORE", "ACCESS", "INSTRUCTIONS")
	for _, a := range s.Attachments {
		row(tw, a.MountPath, a.StoreID, string(a.Access), shorten(a.Instructions, 50))
	}
	tw.Flush()
}

func runSessionsLs(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "ls", "Usage: memstore sessions ls [--store ID] [--archived]\n\nLists sessions, newest first.\n")
	store := fs.String("store", "", "only sessions that attach store `NAME` or ID")
	archived := fs.Bool("archived", false, "include ended (archived) sessions")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore sessions ls: unexpected argument %q", pos[0])
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	if *store != "" {
		if *store, err = c.resolveStore(ctx, *store, bf.archived); err != nil {
			return err
		}
	}
	f := memstore.SessionFilter{StoreID: *store, IncludeArchived: *archived, Limit: 100}
	all, err := allPages(func(page string) (memstore.Page[memstore.Session], error) {
		f.Page = page
		return c.Sessions(ctx, c.caller, f)
	})
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, all, httpapi.NewSessionJSON)
	}
	return printTable(e, all, "no sessions; create one with 'memstore sessions create --store ID'",
		[]string{"ID", "CREATED", "ARCHIVED", "STORES", "TITLE"},
		func(s *memstore.Session) []string {
			var stores []string
			for _, a := range s.Attachments {
				st := a.StoreID
				if !a.Writable() {
					st += ":ro"
				}
				stores = append(stores, st)
			}
			return []string{s.ID, fmtTime(s.CreatedAt), fmtTimePtr(s.ArchivedAt), strings.Join(stores, ","), shorten(s.Title, 40)}
		})
}

// oneSessionArg parses a subcommand that takes one ID and opens the
// backend.
func oneSessionArg(ctx context.Context, e env, fs *flag.FlagSet, bf *backendFlags, args []string) (*conn, string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 {
		return nil, "", usageError(e, "memstore %s: give one ID (see 'memstore sessions ls')", bf.cmd)
	}
	c, err := bf.open(ctx, e)
	return c, pos[0], err
}

func runSessionsShow(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "show", "Usage: memstore sessions show ID\n\nPrints a session with its stores and tokens (never their secrets).\n")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Session(ctx, c.caller, id)
	if err != nil {
		return err
	}
	f := memstore.SessionTokenFilter{Limit: memstore.MaxPageSize}
	toks, err := allPages(func(page string) (memstore.Page[memstore.SessionToken], error) {
		f.Page = page
		return c.SessionTokens(ctx, c.caller, id, f)
	})
	if err != nil {
		return err
	}
	if err := c.printSession(s); err != nil || c.json {
		return err
	}
	fmt.Fprintln(e.stdout)
	tw := newTable(e.stdout)
	row(tw, "TOKEN", "HINT", "CREATED", "EXPIRES", "REVOKED")
	for _, t := range toks {
		row(tw, t.ID, t.Hint, fmtTime(t.CreatedAt), fmtTimePtr(t.ExpiresAt), fmtTimePtr(t.RevokedAt))
	}
	return tw.Flush()
}

func runSessionsToken(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "token", "Usage: memstore sessions token ID [--expires-in DURATION]\n\nMakes another token for a session and prints it alone on the last line.\n")
	expires := fs.Duration("expires-in", 0, "the token expires after `DURATION` (default: never)")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if *expires < 0 {
		return usageError(e, "memstore sessions token: --expires-in must be positive")
	}
	tok, secret, err := c.CreateSessionToken(ctx, c.caller, id, *expires)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.NewSessionTokenJSON(tok, secret))
	}
	fmt.Fprintf(e.stdout, "Created token %s for session %s%s. It will not be shown again:\n", cell(tok.ID), cell(id), expiry(tok))
	fmt.Fprintln(e.stdout, secret)
	return nil
}

func runSessionsRevoke(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "revoke", "Usage: memstore sessions revoke ID [--yes]\n\nStops a token (sesntok_...), or ends a session (sesn_...) and so all its\ntokens, for good. There is no undo: it asks first on a terminal; --yes\nconfirms for scripts.\n")
	yes := addYesFlag(fs)
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	what := "end session " + cell(id) + " and stop all its tokens"
	if strings.HasPrefix(id, memstore.SessionTokenIDPrefix) {
		what = "stop session token " + cell(id)
	}
	if err := confirm(e, "sessions revoke", *yes, what); err != nil {
		return err
	}
	if strings.HasPrefix(id, memstore.SessionTokenIDPrefix) {
		tok, err := c.RevokeSessionToken(ctx, c.caller, id)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(e.stdout, httpapi.NewSessionTokenJSON(tok, ""))
		}
		fmt.Fprintf(e.stdout, "Revoked token %s of session %s.\n", cell(tok.ID), cell(tok.SessionID))
		return nil
	}
	s, err := c.ArchiveSession(ctx, c.caller, id)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.NewSessionJSON(s))
	}
	fmt.Fprintf(e.stdout, "Ended session %s: its tokens no longer work.\n", cell(s.ID))
	return nil
}

// printSession prints a session as the API's object, or as a block of
// fields and a table of its stores.
func (c *conn) printSession(s *memstore.Session) error {
	if c.json {
		return printJSON(c.e.stdout, httpapi.NewSessionJSON(s))
	}
	var md []string
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		md = append(md, k+"="+s.Metadata[k])
	}
	if err := block(c.e.stdout,
		[2]string{"id", s.ID},
		[2]string{"title", s.Title},
		[2]string{"metadata", strings.Join(md, ", ")},
		[2]string{"created_at", fmtTime(s.CreatedAt)},
		[2]string{"archived_at", fmtTimePtr(s.ArchivedAt)},
	); err != nil {
		return err
	}
	fmt.Fprintln(c.e.stdout)
	writeAttachments(c, s)
	return nil
}

func runSessionsUpdate(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "update", "Usage: memstore sessions update ID [--title TEXT] [--metadata KEY=VALUE]... [--unset-metadata KEY]... [--conversation=true|false]\n\nChanges a session's title or metadata and prints it. Flags not given\nleave their field as it is; metadata keys not mentioned keep their values.\n")
	title := fs.String("title", "", "new `TITLE` (\"\" clears it)")
	md := metadataFlag{}
	fs.Var(md, "metadata", "set a metadata `KEY=VALUE` (repeatable)")
	var unset listFlag
	fs.Var(&unset, "unset-metadata", "remove a metadata `KEY` (repeatable)")
	conversation := addConversationFlag(fs, "its searches find")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := setConversation(e, "sessions update", fs, conversation, md); err != nil {
		return err
	}
	var u memstore.SessionUpdate
	if flagGiven(fs, "title") {
		u.Title = title
	}
	if u.Metadata, err = metadataPatch(e, "sessions update", md, unset); err != nil {
		return err
	}
	if u.Title == nil && u.Metadata == nil {
		return usageError(e, "memstore sessions update: nothing to change; give --title, --metadata, --unset-metadata or --conversation")
	}
	s, err := c.UpdateSession(ctx, c.caller, id, u)
	if err != nil {
		return err
	}
	return c.printSession(s)
}

func runSessionsAttach(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "attach", "Usage: memstore sessions attach ID --store STORE[:ro|:rw] [--instructions TEXT]\n\nAttaches a store to a live session, read-write unless STORE:ro, and\nprints the session. For a store already attached, changes its access\n(only when :ro or :rw is given) and its instructions (only when\n--instructions is given).\n")
	var att attachFlags
	fs.Var(att.store(), "store", "the store `NAME` or ID, read-only with NAME:ro, read-write with NAME:rw")
	fs.Var(att.instructions(), "instructions", "`TEXT` telling the agent how to use the store")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if len(att.list) != 1 {
		return usageError(e, "memstore sessions attach: give one --store ID (see 'memstore stores ls'); attach several with one command each")
	}
	if err := c.resolveAttachments(ctx, att.list); err != nil {
		return err
	}
	a := att.list[0]
	s, err := c.Session(ctx, c.caller, id)
	if err != nil {
		return err
	}
	verb := "Attached"
	if s.Attachment(a.StoreID) == nil {
		s, err = c.AttachStore(ctx, c.caller, id, a)
	} else {
		var u memstore.AttachmentUpdate
		if a.Access != "" {
			u.Access = &a.Access
		}
		if flagGiven(fs, "instructions") {
			u.Instructions = &a.Instructions
		}
		if u.Access == nil && u.Instructions == nil {
			return usageError(e, "memstore sessions attach: store %s is already attached to session %s; give :ro, :rw or --instructions to change it, or detach it with 'memstore sessions detach'", a.StoreID, id)
		}
		verb = "Changed"
		s, err = c.UpdateAttachment(ctx, c.caller, id, a.StoreID, u)
	}
	if err != nil {
		return err
	}
	if c.json {
		return c.printSession(s)
	}
	fmt.Fprintf(e.stdout, "%s store %s on session %s; its tokens see it from their next request.\n", verb, cell(a.StoreID), cell(s.ID))
	writeAttachments(c, s)
	return nil
}

func runSessionsDetach(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "detach", "Usage: memstore sessions detach ID --store STORE\n\nRemoves a store from a live session and prints the session's stores.\n")
	store := fs.String("store", "", "the store `NAME` or ID to remove")
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if *store == "" {
		return usageError(e, "memstore sessions detach: give the --store ID to remove (see 'memstore sessions show %s')", id)
	}
	if *store, err = c.resolveStore(ctx, *store, bf.archived); err != nil {
		return err
	}
	s, err := c.DetachStore(ctx, c.caller, id, *store)
	if err != nil {
		return err
	}
	if c.json {
		return c.printSession(s)
	}
	fmt.Fprintf(e.stdout, "Detached store %s from session %s; its tokens no longer reach it from their next request.\n", cell(*store), cell(s.ID))
	writeAttachments(c, s)
	return nil
}

func runSessionsRm(ctx context.Context, e env, args []string) error {
	fs, bf := sessionFlags(e, "rm", "Usage: memstore sessions rm ID [--yes]\n\nDeletes a session with its tokens, which stop working, and its\ntranscript. The memories and versions it wrote stay, with its ID as\ntheir author. To end a session but keep its record, use 'memstore\nsessions revoke ID'. There is no undo: it asks first on a terminal;\n--yes confirms for scripts.\n")
	yes := addYesFlag(fs)
	c, id, err := oneSessionArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := confirm(e, "sessions rm", *yes, "delete session "+cell(id)+" and its tokens"); err != nil {
		return err
	}
	if err := c.DeleteSession(ctx, c.caller, id); err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.SessionDeleted(id))
	}
	fmt.Fprintf(e.stdout, "Deleted session %s: its tokens no longer work.\n", cell(id))
	return nil
}
