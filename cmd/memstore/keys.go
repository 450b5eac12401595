package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const keysHelp = `Usage: memstore keys create [--db FILE|URL] [--workspace NAME] [--name NAME] [--json]
       memstore keys ls [--db FILE|URL] [--workspace NAME] [--json]
       memstore keys revoke [--db FILE|URL] [--json] ID

Manages the API keys of a memstore database, working on the file itself
(a server may be running on it meanwhile).

'keys create' makes a key in a workspace, creating the workspace if there
is none by that name (default "default"), and prints the key alone on the
last line of standard output:

  export ANTHROPIC_API_KEY=$(memstore keys create --name laptop | tail -1)

The key is shown only then: the database keeps a hash of it.

'keys ls' lists keys, revoked ones included, and never their secrets: the
hint is the key's last four characters.

'keys revoke ID' stops a key from working, for good: a running server on
the same database file hears of it within about half a second, servers
on PostgreSQL within a second, and they end the change-feed streams and
MCP sessions it opened then.

The database is --db, else MEMSTORE_DB, else memstore/memstore.db under
$XDG_DATA_HOME or ~/.local/share: the one 'memstore serve' uses.
`

func runKeys(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usageError(e, "memstore keys: say what to do: create, ls or revoke; run 'memstore keys --help' for more")
	}
	switch args[0] {
	case "create":
		return runKeysCreate(ctx, e, args[1:])
	case "ls", "list":
		return runKeysList(ctx, e, args[1:])
	case "revoke":
		return runKeysRevoke(ctx, e, args[1:])
	}
	fs := newFlags(e, "keys", keysHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	return usageError(e, "memstore keys: unknown subcommand %q; it is create, ls or revoke", args[0])
}

// keyJSON is an API key as the keys commands print it with --json. Secret
// is present only when the key has just been made.
type keyJSON struct {
	Type          string     `json:"type"`
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	WorkspaceName string     `json:"workspace_name"`
	Name          string     `json:"name"`
	Hint          string     `json:"hint"`
	CreatedAt     time.Time  `json:"created_at"`
	LastUsedAt    *time.Time `json:"last_used_at"`
	RevokedAt     *time.Time `json:"revoked_at"`
	Secret        string     `json:"secret,omitempty"`
}

func newKeyJSON(k *memstore.APIKey, workspaceName string) keyJSON {
	return keyJSON{
		Type: "api_key", ID: k.ID, WorkspaceID: k.WorkspaceID, WorkspaceName: workspaceName,
		Name: k.Name, Hint: k.Hint, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt,
	}
}

// keysFlags returns the flag set of a keys subcommand, with the shared
// flags: the keys are in a database, which only create may make.
func keysFlags(e env, name string, create bool) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, "keys "+name, keysHelp)
	f := &backendFlags{cmd: "keys " + name, kinds: withDB, admin: true, opts: dbOptions{create: create}}
	fs.StringVar(&f.db, "db", "", "memstore database `FILE` or postgres:// URL (or MEMSTORE_DB)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	return fs, f
}

func runKeysCreate(ctx context.Context, e env, args []string) error {
	fs, f := keysFlags(e, "create", true)
	workspace := fs.String("workspace", "", "workspace `NAME` or ID, made if missing (or MEMSTORE_WORKSPACE; default \"default\")")
	name := fs.String("name", "", "a `NAME` for the key, to tell keys apart")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore keys create: unexpected argument %q (name the key with --name)", pos[0])
	}
	if err := applyEnv(e, "keys create", fs, map[string]string{"workspace": "MEMSTORE_WORKSPACE"}); err != nil {
		return err
	}
	if *workspace == "" {
		*workspace = memstore.DefaultWorkspace
	}
	if err := memstore.ValidateKeyName(*name); err != nil {
		return usageError(e, "memstore keys create: --name: %v", err)
	}
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	ws, created, err := ensureWorkspace(ctx, c.keys, *workspace)
	if err != nil {
		return err
	}
	k, secret, err := c.keys.CreateAPIKey(ctx, ws.ID, *name)
	if err != nil {
		return err
	}
	if f.json {
		j := newKeyJSON(k, ws.Name)
		j.Secret = secret
		return printJSON(e.stdout, j)
	}
	if created {
		fmt.Fprintf(e.stdout, "Created workspace %q (%s).\n", ws.Name, ws.ID)
	}
	named := ""
	if k.Name != "" {
		named = fmt.Sprintf(" %q", cell(k.Name))
	}
	fmt.Fprintf(e.stdout, "Created API key %s%s in workspace %q. It will not be shown again:\n", k.ID, named, ws.Name)
	fmt.Fprintln(e.stdout, secret)
	return nil
}

func runKeysList(ctx context.Context, e env, args []string) error {
	fs, f := keysFlags(e, "ls", false)
	workspace := fs.String("workspace", "", "list only the keys of workspace `NAME` or ID (or MEMSTORE_WORKSPACE; default: all)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore keys ls: unexpected argument %q", pos[0])
	}
	if err := applyEnv(e, "keys ls", fs, map[string]string{"workspace": "MEMSTORE_WORKSPACE"}); err != nil {
		return err
	}
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	wsID := ""
	if *workspace != "" {
		ws, err := c.keys.Workspace(ctx, *workspace)
		if err != nil {
			return err
		}
		wsID = ws.ID
	}
	workspaces, err := c.keys.Workspaces(ctx)
	if err != nil {
		return err
	}
	names := make(map[string]string, len(workspaces))
	for _, w := range workspaces {
		names[w.ID] = w.Name
	}
	keys, err := c.keys.APIKeys(ctx, wsID, "", 0)
	if err != nil {
		return err
	}
	if f.json {
		// An array, like every other list command's --json.
		return printJSONList(e.stdout, keys, func(k *memstore.APIKey) keyJSON { return newKeyJSON(k, names[k.WorkspaceID]) })
	}
	return printTable(e, keys, "no API keys; make one with 'memstore keys create'",
		[]string{"ID", "WORKSPACE", "NAME", "HINT", "CREATED", "LAST USED", "REVOKED"},
		func(k *memstore.APIKey) []string {
			return []string{k.ID, names[k.WorkspaceID], k.Name, k.Hint, fmtTime(k.CreatedAt), fmtTimePtr(k.LastUsedAt), fmtTimePtr(k.RevokedAt)}
		})
}

func runKeysRevoke(ctx context.Context, e env, args []string) error {
	fs, f := keysFlags(e, "revoke", false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(e, "memstore keys revoke: give the ID of one key (apikey_...); 'memstore keys ls' lists them")
	}
	id := pos[0]
	if memstore.CredentialOf(id) == memstore.APIKeyCredential {
		// Someone pasted the secret: do not echo it, and point at the ID.
		return usageError(e, "memstore keys revoke: give the key's ID (apikey_...), not its secret; 'memstore keys ls' lists the IDs")
	}
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	k, err := c.keys.RevokeAPIKey(ctx, id)
	if err != nil {
		return err
	}
	wsName := ""
	if ws, err := c.keys.Workspace(ctx, k.WorkspaceID); err == nil {
		wsName = ws.Name
	}
	if f.json {
		return printJSON(e.stdout, newKeyJSON(k, wsName))
	}
	fmt.Fprintf(e.stdout, "API key %s (%s) of workspace %q is revoked since %s.\n", k.ID, k.Hint, wsName, fmtTime(*k.RevokedAt))
	fmt.Fprintf(e.stdout, "A running server may accept it for up to %s more.\n", httpapi.DefaultAuthCacheTTL)
	return nil
}

// adminCmd is an administrative command over one workspace of a
// database (--db): users and webhooks.
type adminCmd struct {
	db     memstore.Database
	caller *memstore.Caller // the local user, in the workspace
	ws     *memstore.Workspace
	json   bool
	close  func() error
}

// openAdmin parses the flags of command cmd's subcommand name (--db,
// --json, --workspace, and the extra ones more defines), applies the
// environment variables vars names (MEMSTORE_WORKSPACE besides), and opens
// the database, which only a subcommand that may create it (create)
// makes; it returns the positional arguments.
func openAdmin(ctx context.Context, e env, cmd, name string, args []string, create bool, usage string, vars map[string]string, more func(fs *flag.FlagSet)) (*adminCmd, []string, error) {
	fs, f := keysFlags(e, name, create)
	setHelp(fs, usage)
	workspace := fs.String("workspace", "", "workspace `NAME` or ID (or MEMSTORE_WORKSPACE; default \"default\")")
	if more != nil {
		more(fs)
	}
	f.cmd = cmd + " " + name
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, nil, err
	}
	all := map[string]string{"workspace": "MEMSTORE_WORKSPACE"}
	maps.Copy(all, vars)
	if err := applyEnv(e, f.cmd, fs, all); err != nil {
		return nil, nil, err
	}
	c, err := f.open(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	ws, err := localWorkspace(ctx, c.keys, *workspace)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return &adminCmd{db: c.db, caller: &memstore.Caller{WorkspaceID: ws.ID, Actor: localActor(e)}, ws: ws, json: f.json, close: c.Close}, pos, nil
}
