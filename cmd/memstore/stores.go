package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const storesHelp = `Usage: memstore stores [ls] [--archived]
       memstore stores create NAME [--description TEXT] [--metadata KEY=VALUE]... [--conversation]
       memstore stores show ID
       memstore stores update ID [--name NAME] [--description TEXT] [--metadata KEY=VALUE]... [--unset-metadata KEY]... [--conversation=true|false]
       memstore stores archive ID [--yes]
       memstore stores rm ID [--yes]
       memstore stores diff A B [--stat]

Manages the memory stores of a workspace.

  ls       list the stores, newest first (archived ones with --archived)
  create   make a store; its name and description are shown to the agents
           it is attached to, its metadata is not
  show     print a store
  update   change a store's name, description or metadata; metadata is
           merged: --metadata sets a key, --unset-metadata removes one
  archive  make a store read-only for good: its memories can be read
           but no longer written, and it can no longer be attached
  rm       delete a store with all its memories and versions, for good
  diff     compare two stores path by path: added, removed and changed
           memories, with a unified diff of each

--conversation says the store's memories are turns of conversations, one
a memory (/chats/NAME/0007.md): searches rank each turn with its
neighbours (metadata memstore.conversation; see docs/search.md).

ID is a store's ID or its name. archive and rm cannot be undone: they
ask first on a terminal, and take --yes in scripts.

Run 'memstore stores SUBCOMMAND --help' for a subcommand's flags.
` + backendHelp

// storesCommands are the subcommands of memstore stores.
func storesCommands() []command {
	return []command{
		{"ls", "list the stores", runStoresLs},
		{"create", "make a store", runStoresCreate},
		{"show", "print a store", runStoresShow},
		{"update", "change a store", runStoresUpdate},
		{"archive", "make a store read-only for good", runStoresArchive},
		{"rm", "delete a store and everything in it", runStoresRm},
		{"diff", "compare two stores path by path", runStoresDiff},
	}
}

func runStores(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "stores", storesHelp, "ls", storesCommands(), args)
}

// dispatch runs the subcommand of command named by the first argument (def
// when the arguments start with a flag or are none). Errors name the
// subcommand: memstore stores update: ...
func dispatch(ctx context.Context, e env, command, help, def string, subs []command, args []string) error {
	args = hoistCommand(args)
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			writeHelp(e.stdout, command, nil, help)
			return flag.ErrHelp
		}
	}
	sub, rest := def, args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, rest = args[0], args[1:]
	}
	for _, c := range subs {
		if c.name != sub {
			continue
		}
		return reported(e, command+" "+sub, c.run(ctx, e, rest))
	}
	return usageError(e, "memstore %s: unknown subcommand %q; run 'memstore %s --help' for the list", command, sub, command)
}

// storeFlags starts a stores subcommand: its flag set with the shared
// flags, but no --store (the subcommands take the store as an argument).
func storeFlags(e env, sub, usage string) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, "stores "+sub, usage+backendHelp)
	return fs, addBackendFlags(fs, "stores "+sub, false)
}

func runStoresLs(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "ls", "Usage: memstore stores ls [--archived]\n\nLists the workspace's memory stores, newest first.\n")
	archived := fs.Bool("archived", false, "include archived stores")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore stores ls: unexpected argument %q", pos[0])
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()

	f := memstore.StoreFilter{IncludeArchived: *archived, Limit: 100}
	stores, err := allPages(func(page string) (memstore.Page[memstore.Store], error) {
		f.Page = page
		return c.Stores(ctx, c.caller, f)
	})
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, stores, httpapi.NewStoreJSON)
	}
	return printTable(e, stores, "no memory stores; create one with 'memstore stores create NAME'",
		[]string{"ID", "NAME", "CREATED", "ARCHIVED", "DESCRIPTION"},
		func(s *memstore.Store) []string {
			return []string{s.ID, s.Name, fmtTime(s.CreatedAt), fmtTimePtr(s.ArchivedAt), shorten(s.Description, 60)}
		})
}

// metadataFlag collects repeated --metadata KEY=VALUE flags.
type metadataFlag map[string]string

func (m metadataFlag) String() string { return "" }

func (m metadataFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	m[k] = v
	return nil
}

// metadataPatch is the merge patch of --metadata and --unset-metadata:
// nil when neither was given.
func metadataPatch(e env, cmd string, set metadataFlag, unset listFlag) (map[string]*string, error) {
	if len(set)+len(unset) == 0 {
		return nil, nil
	}
	p := map[string]*string{}
	for k, v := range set {
		p[k] = &v
	}
	for _, k := range unset {
		if _, ok := set[k]; ok {
			return nil, usageError(e, "memstore %s: metadata key %q is both set and unset", cmd, k)
		}
		p[k] = nil
	}
	return p, nil
}

// addConversationFlag adds --conversation, which sets
// memstore.ConversationKey in the metadata of a store or a session when
// given (setConversation).
func addConversationFlag(fs *flag.FlagSet, of string) *bool {
	return fs.Bool("conversation", false, "the memories "+of+" are turns of conversations, one a memory: searches rank each turn with its neighbours (metadata "+memstore.ConversationKey+"; =false turns it off)")
}

// setConversation sets --conversation, when given, in md, refusing a
// --metadata of the same key that says otherwise.
func setConversation(e env, cmd string, fs *flag.FlagSet, conversation *bool, md metadataFlag) error {
	if !flagGiven(fs, "conversation") {
		return nil
	}
	v := strconv.FormatBool(*conversation)
	if old, ok := md[memstore.ConversationKey]; ok && old != v {
		return usageError(e, "memstore %s: --conversation=%s and --metadata %s=%s disagree; give one", cmd, v, memstore.ConversationKey, old)
	}
	md[memstore.ConversationKey] = v
	return nil
}

// listFlag collects a repeated flag's values.
type listFlag []string

func (l *listFlag) String() string { return "" }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func runStoresCreate(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "create", "Usage: memstore stores create NAME [--description TEXT] [--metadata KEY=VALUE]... [--conversation]\n\nMakes a memory store and prints it.\n")
	description := fs.String("description", "", "what the store holds, shown to agents")
	md := metadataFlag{}
	fs.Var(md, "metadata", "set a metadata `KEY=VALUE` (repeatable; not shown to agents)")
	conversation := addConversationFlag(fs, "of the store")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(e, "memstore stores create: give one NAME (quote a name with spaces)")
	}
	if err := setConversation(e, "stores create", fs, conversation, md); err != nil {
		return err
	}
	bf.opts.create = true
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.CreateStore(ctx, c.caller, memstore.StoreCreate{Name: pos[0], Description: *description, Metadata: md})
	if err != nil {
		return err
	}
	return c.printStore(s)
}

// oneStoreArg parses a subcommand that takes one store, by name or ID,
// opens the backend and resolves the store's ID.
func oneStoreArg(ctx context.Context, e env, fs *flag.FlagSet, bf *backendFlags, args []string) (*conn, string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 {
		return nil, "", usageError(e, "memstore %s: give one store, by name or ID (see 'memstore stores ls')", bf.cmd)
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return nil, "", err
	}
	id, err := c.resolveStore(ctx, pos[0], bf.archived)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	return c, id, nil
}

func runStoresShow(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "show", "Usage: memstore stores show ID\n\nPrints a memory store, archived or not.\n")
	c, id, err := oneStoreArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Store(ctx, c.caller, id)
	if err != nil {
		return err
	}
	return c.printStore(s)
}

func runStoresUpdate(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "update", "Usage: memstore stores update ID [--name NAME] [--description TEXT] [--metadata KEY=VALUE]... [--unset-metadata KEY]... [--conversation=true|false]\n\nChanges a memory store and prints it. Flags not given leave their field\nas it is; metadata keys not mentioned keep their values.\n")
	name := fs.String("name", "", "new `NAME`")
	description := fs.String("description", "", "new description (\"\" clears it)")
	md := metadataFlag{}
	fs.Var(md, "metadata", "set a metadata `KEY=VALUE` (repeatable)")
	var unset listFlag
	fs.Var(&unset, "unset-metadata", "remove a metadata `KEY` (repeatable)")
	conversation := addConversationFlag(fs, "of the store")
	c, id, err := oneStoreArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := setConversation(e, "stores update", fs, conversation, md); err != nil {
		return err
	}

	var u memstore.StoreUpdate
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "name":
			u.Name = name
		case "description":
			u.Description = description
		}
	})
	if u.Metadata, err = metadataPatch(e, "stores update", md, unset); err != nil {
		return err
	}
	if u.Name == nil && u.Description == nil && u.Metadata == nil {
		return usageError(e, "memstore stores update: nothing to change; give --name, --description, --metadata, --unset-metadata or --conversation")
	}
	s, err := c.UpdateStore(ctx, c.caller, id, u)
	if err != nil {
		return err
	}
	return c.printStore(s)
}

func runStoresArchive(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "archive", "Usage: memstore stores archive ID [--yes]\n\nArchives a memory store, for good: its memories stay readable but can\nno longer be written, and it can no longer be attached to sessions.\nArchiving an archived store changes nothing. There is no undo: it asks\nfirst on a terminal; --yes confirms for scripts.\n")
	yes := addYesFlag(fs)
	c, id, err := oneStoreArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Store(ctx, c.caller, id)
	if err != nil {
		return err
	}
	if s.ArchivedAt == nil {
		if err := confirm(e, "stores archive", *yes, fmt.Sprintf("archive memory store %s (%s), making it read-only for good", s.ID, cell(s.Name))); err != nil {
			return err
		}
	}
	s, err = c.ArchiveStore(ctx, c.caller, id)
	if err != nil {
		return err
	}
	return c.printStore(s)
}

func runStoresRm(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "rm", "Usage: memstore stores rm ID [--yes]\n\nDeletes a memory store with all its memories and their versions, for\ngood. There is no undo: it asks first on a terminal; --yes confirms for\nscripts. 'memstore export' keeps a copy.\n")
	yes := addYesFlag(fs)
	c, id, err := oneStoreArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Store(ctx, c.caller, id)
	if err != nil {
		return err
	}
	if err := confirm(e, "stores rm", *yes, fmt.Sprintf("delete memory store %s (%s) with all its memories and versions", s.ID, cell(s.Name))); err != nil {
		return err
	}
	if err := c.DeleteStore(ctx, c.caller, id); err != nil {
		return err
	}
	if c.json {
		return printJSON(e.stdout, httpapi.StoreDeleted(id))
	}
	fmt.Fprintf(e.stdout, "deleted memory store %s\n", id)
	return nil
}

// printStore prints a store as the API's object or as a block of fields.
func (c *conn) printStore(s *memstore.Store) error {
	if c.json {
		return printJSON(c.e.stdout, httpapi.NewStoreJSON(s))
	}
	return writeStore(c.e.stdout, s)
}

func writeStore(w io.Writer, s *memstore.Store) error {
	var md []string
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		md = append(md, k+"="+s.Metadata[k])
	}
	return block(w,
		[2]string{"id", s.ID},
		[2]string{"name", s.Name},
		[2]string{"description", s.Description},
		[2]string{"metadata", strings.Join(md, ", ")},
		[2]string{"created_at", fmtTime(s.CreatedAt)},
		[2]string{"updated_at", fmtTime(s.UpdatedAt)},
		[2]string{"archived_at", fmtTimePtr(s.ArchivedAt)},
	)
}
