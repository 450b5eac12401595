package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// The store commands (stores, ls, cat, put, edit, mv, rm, log, show, diff,
// redact, export, import, grep, sessions) work the same on a database file and on a
// memstore server: they are written once against memstore.Services, which a
// memstore.Core over the database and *httpapi.Client both are.

// backendHelp describes the flags every store command shares, for the
// end of each command's help.
const backendHelp = `
The backend is a database file (--db or MEMSTORE_DB, by default the one
'memstore serve' uses) or a memstore server (--url with --api-key, or
MEMSTORE_URL and MEMSTORE_API_KEY). On a database the workspace is
--workspace (MEMSTORE_WORKSPACE, default "default") and changes are
recorded as made by the operator; on a server the key decides both.
` + storeNameHelp + "\n"

// What a command may be given to reach its backend.
type backendKinds uint8

const (
	withDB    backendKinds = 1 << iota // a database (--db)
	withKey                            // a server (--url) with an API key (--api-key)
	withToken                          // a server (--url) with a session token (--token)

	withServer = withKey | withToken
)

// backendFlags are the flags and environment that select a command's
// backend, and what the command accepts: every command selects its
// backend through them.
type backendFlags struct {
	cmd       string // for messages: "ls", "stores create"
	kinds     backendKinds
	db        string
	url       string
	apiKey    string
	token     string
	workspace string
	store     string
	// archived is set by the commands that can act on an archived
	// store (reads and deletions), so that --store finds one by name.
	archived bool
	json     bool
	// admin is for the commands that manage the database itself (keys,
	// serve): they are given the database and no caller.
	admin bool
	opts  dbOptions
}

// addBackendFlags defines the shared flags on fs; withStore adds --store,
// for the commands that work inside one store.
func addBackendFlags(fs *flag.FlagSet, cmd string, withStore bool) *backendFlags {
	f := &backendFlags{cmd: cmd, kinds: withDB | withKey, archived: onArchived[cmd]}
	fs.StringVar(&f.db, "db", "", "memstore database `FILE` or postgres:// URL (or MEMSTORE_DB)")
	fs.StringVar(&f.url, "url", "", "memstore server `URL`, without /v1 (or MEMSTORE_URL)")
	fs.StringVar(&f.apiKey, "api-key", "", "API `KEY` for --url (or MEMSTORE_API_KEY)")
	fs.StringVar(&f.workspace, "workspace", "", "workspace `NAME` or ID (or MEMSTORE_WORKSPACE; default \"default\" with --db)")
	if withStore {
		fs.StringVar(&f.store, "store", "", "memory store `NAME` or ID (or MEMSTORE_STORE; may be left out when the workspace has one store)")
	}
	fs.BoolVar(&f.json, "json", false, "print JSON (the API's objects) instead of text")
	return f
}

// backendValueFlags are the shared flags that take a value, for
// hoistCommand.
var backendValueFlags = map[string]bool{"db": true, "url": true, "api-key": true, "workspace": true, "store": true}

// hoistCommand moves the first argument that is not a shared flag or its
// value to the front, so that the backend may be named before the command
// (memstore --db notes.db stores create work): args is returned unchanged
// unless it starts with a flag.
func hoistCommand(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		name := strings.TrimLeft(args[i], "-")
		if !strings.Contains(name, "=") && backendValueFlags[name] {
			i++ // the value
		}
		i++
	}
	if i == 0 || i >= len(args) {
		return args
	}
	out := make([]string, 0, len(args))
	out = append(out, args[i])
	out = append(out, args[:i]...)
	return append(out, args[i+1:]...)
}

// conn is an open backend with what the commands need to call it.
type conn struct {
	memstore.Services
	e env
	// caller is whom the commands call the backend as: with --db, the
	// local user in the workspace (nil for an admin command); with --url
	// and a session token, the session; with an API key nil, the key's
	// own caller.
	caller *memstore.Caller
	// db is the database with --db, and keys its workspaces and API
	// keys; both nil with --url.
	db    memstore.Database
	keys  memstore.KeyService
	store string // --store or MEMSTORE_STORE, "" when not given
	// archived: the command can act on an archived store (resolveStore).
	archived bool
	json     bool
	close    func() error

	// client is the server's client with --url, nil with --db: the
	// administrative commands reach its routes beside Services.
	client *httpapi.Client
}

// Close closes the backend.
func (c *conn) Close() error { return c.close() }

// selection is the backend that the flags and environment name, checked
// but not yet opened.
type selection struct {
	f         *backendFlags
	db        string // the database's name, "" for a server
	url       string
	secret    string // the API key or session token for url
	token     bool   // secret is a session token
	workspace string
	store     string
}

// selectBackend reads the backend that the flags and environment name:
// defaults, then MEMSTORE_* variables, then flags. Only the variables of
// what the command accepts count; without --url or MEMSTORE_URL it is the
// database that serve and keys use by default. Mistakes are usage errors.
func (f *backendFlags) selectBackend(e env) (*selection, error) {
	s := &selection{f: f, db: f.db, url: f.url, workspace: f.workspace, store: f.store}
	if s.db == "" && s.url == "" {
		if f.kinds&withDB != 0 {
			s.db = e.getenv("MEMSTORE_DB")
		}
		if f.kinds&withServer != 0 {
			s.url = e.getenv("MEMSTORE_URL")
		}
	}
	if s.workspace == "" {
		s.workspace = e.getenv("MEMSTORE_WORKSPACE")
	}
	if s.store == "" {
		s.store = e.getenv("MEMSTORE_STORE")
	}
	switch {
	case s.db != "" && s.url != "":
		return nil, usageError(e, "memstore %s: give either --db or --url, not both", f.cmd)
	case s.url != "":
		return s, f.credential(e, s)
	case f.kinds&withDB == 0:
		return nil, usageError(e, "memstore %s: say which server with --url URL (or MEMSTORE_URL)", f.cmd)
	case f.apiKey != "":
		return nil, usageError(e, "memstore %s: --api-key goes with --url, not --db", f.cmd)
	case f.token != "":
		return nil, usageError(e, "memstore %s: --token goes with --url (or MEMSTORE_URL), not --db", f.cmd)
	}
	var err error
	s.db, err = dbPath(e, s.db)
	return s, err
}

// credential sets the API key or session token that s's server is called
// with: a flag, else a variable, of the kinds the command accepts.
func (f *backendFlags) credential(e env, s *selection) error {
	key, token := f.apiKey, f.token
	if key != "" && token != "" {
		return usageError(e, "memstore %s: give --api-key or --token, not both", f.cmd)
	}
	if key == "" && token == "" {
		if f.kinds&withKey != 0 {
			key = e.getenv("MEMSTORE_API_KEY")
		}
		if f.kinds&withToken != 0 {
			token = e.getenv("MEMSTORE_TOKEN")
		}
		if key != "" && token != "" {
			return usageError(e, "memstore %s: both MEMSTORE_API_KEY and MEMSTORE_TOKEN are set; choose with --api-key or --token", f.cmd)
		}
	}
	switch {
	case token != "" && f.kinds&withKey != 0 && memstore.CredentialOf(token) != memstore.SessionTokenCredential:
		return usageError(e, "memstore %s: --token takes a session token (%s...); give an API key with --api-key", f.cmd, memstore.SessionTokenPrefix)
	case token != "":
		s.secret, s.token = token, true
	case key != "":
		s.secret = key
	case f.kinds&withServer == withServer:
		return usageError(e, "memstore %s: --url needs a credential: give --api-key KEY or --token TOKEN (or set MEMSTORE_API_KEY or MEMSTORE_TOKEN)", f.cmd)
	case f.kinds&withToken != 0:
		return usageError(e, "memstore %s: --url needs a session token: give --token or set MEMSTORE_TOKEN (see 'memstore sessions create')", f.cmd)
	default:
		return usageError(e, "memstore %s: --url needs an API key: give --api-key KEY or set MEMSTORE_API_KEY", f.cmd)
	}
	return nil
}

// open opens the backend that the flags and environment name.
func (f *backendFlags) open(ctx context.Context, e env) (*conn, error) {
	s, err := f.selectBackend(e)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, e)
}

// open opens the selected backend. A session token is authenticated at
// once, so that a wrong one is reported before any work.
func (s *selection) open(ctx context.Context, e env) (*conn, error) {
	c := &conn{e: e, store: s.store, archived: s.f.archived, json: s.f.json}
	if s.url != "" {
		client := httpapi.NewClient(s.url, s.secret)
		// Sent as anthropic-workspace-id: the server refuses a
		// credential of another workspace.
		client.WorkspaceID = s.workspace
		if s.token {
			caller, err := client.AuthenticateSession(ctx, s.secret)
			if err != nil {
				return nil, fmt.Errorf("the server did not accept the session token: %w", err)
			}
			client.Caller, c.caller = caller, caller
		}
		c.Services, c.client, c.close = client, client, func() error { return nil }
		return c, nil
	}
	db, err := openDatabase(ctx, s.db, s.f.opts)
	if err != nil {
		return nil, err
	}
	core := newCore(db, s.f.opts)
	if !s.f.admin {
		ws, err := localWorkspace(ctx, core, s.workspace)
		if err != nil {
			db.Close()
			return nil, err
		}
		c.caller = &memstore.Caller{WorkspaceID: ws.ID, Actor: localActor(e)}
	}
	c.Services, c.keys, c.db, c.close = core, core, db, db.Close
	return c, nil
}

// localWorkspace resolves a workspace of a database by ID or name, ""
// being the default one, which is made on a fresh database. Other
// workspaces are made by 'memstore keys create --workspace NAME', so that
// a mistyped name is an error.
func localWorkspace(ctx context.Context, ks memstore.KeyService, name string) (*memstore.Workspace, error) {
	if name == "" || name == memstore.DefaultWorkspace {
		ws, _, err := ensureWorkspace(ctx, ks, memstore.DefaultWorkspace)
		return ws, err
	}
	ws, err := ks.Workspace(ctx, name)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil, memstore.Errorf(memstore.ENotFound, "no workspace %q in this database; leave out --workspace for the default one", name)
	}
	return ws, err
}

// localActor is who changes made with --db are recorded as: the
// operator (memstore.OperatorActor), whoever runs the command.
func localActor(env) memstore.Actor {
	return memstore.OperatorActor
}

// storeID is the store a command works in: --store or MEMSTORE_STORE (a
// name or an ID), or the workspace's only live store.
func (c *conn) storeID(ctx context.Context) (string, error) {
	if c.store != "" {
		return c.resolveStore(ctx, c.store, c.archived)
	}
	page, err := c.Stores(ctx, c.caller, memstore.StoreFilter{Limit: 10})
	if err != nil {
		return "", err
	}
	switch {
	case len(page.Items) == 1 && page.Next == "":
		return page.Items[0].ID, nil
	case len(page.Items) == 0:
		return "", errors.New("the workspace has no memory store; create one with 'memstore stores create NAME'")
	}
	var b strings.Builder
	b.WriteString("the workspace has several memory stores; pick one with --store NAME or ID (or MEMSTORE_STORE):")
	for _, s := range page.Items {
		fmt.Fprintf(&b, "\n  %s  %s", s.ID, cell(s.Name))
	}
	if page.Next != "" {
		b.WriteString("\n  ... ('memstore stores ls' lists them all)")
	}
	return "", errors.New(b.String())
}

// findMemory returns the live memory at path, without its content.
func (c *conn) findMemory(ctx context.Context, storeID, path string) (*memstore.Memory, error) {
	return memstore.FindMemory(ctx, c, c.caller, storeID, path)
}

// allPages reads a whole list: list reads the page at a cursor ("" for
// the first), and allPages follows each page's Next to the end.
func allPages[T any](list func(page string) (memstore.Page[T], error)) ([]T, error) {
	var all []T
	for page := ""; ; {
		p, err := list(page)
		if err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if page = p.Next; page == "" {
			return all, nil
		}
	}
}

// eachMemory calls fn for every memory the filter selects, page by page.
func (c *conn) eachMemory(ctx context.Context, storeID string, f memstore.MemoryFilter, fn func(*memstore.ListItem) error) error {
	for {
		page, err := c.Memories(ctx, c.caller, storeID, f)
		if err != nil {
			return err
		}
		for i := range page.Items {
			if err := fn(&page.Items[i]); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		f.Page = page.Next
	}
}

// eachVersion calls fn for every version the filter selects, newest first,
// page by page; fn returns errStop to end early.
func (c *conn) eachVersion(ctx context.Context, storeID string, f memstore.VersionFilter, fn func(*memstore.Version) error) error {
	for {
		page, err := c.Versions(ctx, c.caller, storeID, f)
		if err != nil {
			return err
		}
		for i := range page.Items {
			if err := fn(&page.Items[i]); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		f.Page = page.Next
	}
}

// errStop ends a walk early without an error.
var errStop = errors.New("stop")

// openStore opens the backend and resolves the store the command works in.
func (f *backendFlags) openStore(ctx context.Context, e env) (*conn, string, error) {
	s, err := f.selectBackend(e)
	if err != nil {
		return nil, "", err
	}
	return s.openStore(ctx, e)
}

// openStore opens the selected backend and resolves the store the command
// works in.
func (s *selection) openStore(ctx context.Context, e env) (*conn, string, error) {
	c, err := s.open(ctx, e)
	if err != nil {
		return nil, "", err
	}
	storeID, err := c.storeID(ctx)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	return c, storeID, nil
}
