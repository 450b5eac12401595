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

const keysHelp = `Usage: memstore keys create [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] [--name NAME] [--json]
       memstore keys ls [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] [--json]
       memstore keys revoke [--db FILE|URL | --url URL --api-key KEY] [--json] [--yes] ID

Manages API keys, on a database file (--db; a server may be running on
it meanwhile) or through a running server (--url with an API key).

'keys create' makes a key and prints it alone on the last line of
standard output:

  export ANTHROPIC_API_KEY=$(memstore keys create --name laptop | tail -1)

The key is shown only then: memstore keeps a hash of it. On a database
it is made in --workspace, which is created if there is none by that
name (default "default"); through a server, in the workspace of the API
key that asks.

'keys ls' lists keys, revoked ones included, and never their secrets: the
hint is the key's last four characters. On a database it lists every
workspace's keys, or --workspace's; through a server, those of the API
key's workspace.

'keys revoke ID' stops a key from working, for good: a running server on
the same database file hears of it within about half a second, servers
on PostgreSQL within a second, and they end the change-feed streams and
MCP sessions it opened then. Through a server, only a key of the API
key's own workspace can be revoked. It asks first on a terminal; --yes
confirms for scripts.

The database is --db, else MEMSTORE_DB, else memstore/memstore.db under
$XDG_DATA_HOME or ~/.local/share: the one 'memstore serve' uses. A
server is --url (MEMSTORE_URL) with --api-key (MEMSTORE_API_KEY); a
session token manages no key.
`

func runKeys(ctx context.Context, e env, args []string) error {
	args = hoistCommand(args) // memstore keys --url URL ls, as memstore --url URL keys ls
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
// flags: the keys are in a database, which only create may make, or
// behind a server's API, which an API key reaches.
func keysFlags(e env, name string, create bool) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, "keys "+name, keysHelp)
	f := &backendFlags{cmd: "keys " + name, kinds: withDB | withKey, admin: true, opts: dbOptions{create: create}}
	fs.StringVar(&f.db, "db", "", "memstore database `FILE` or postgres:// URL (or MEMSTORE_DB)")
	fs.StringVar(&f.url, "url", "", "memstore server `URL`, without /v1 (or MEMSTORE_URL)")
	fs.StringVar(&f.apiKey, "api-key", "", "API `KEY` for --url (or MEMSTORE_API_KEY)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	return fs, f
}

// workspaceLabel names a key's workspace in text: its name when known
// (on a database), else its ID.
func workspaceLabel(names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return fmt.Sprintf("%q", n)
	}
	return id
}

func runKeysCreate(ctx context.Context, e env, args []string) error {
	fs, f := keysFlags(e, "create", true)
	workspace := fs.String("workspace", "", "workspace `NAME` or ID, made if missing on a database (or MEMSTORE_WORKSPACE; default \"default\")")
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
	if err := memstore.ValidateKeyName(*name); err != nil {
		return usageError(e, "memstore keys create: --name: %v", err)
	}
	f.workspace = *workspace // through a server, the workspace the key must be of
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	var k *memstore.APIKey
	var secret string
	names := map[string]string{}
	if c.client != nil {
		if k, secret, err = c.client.Keys().CreateAPIKey(ctx, nil, *name); err != nil {
			return err
		}
	} else {
		if *workspace == "" {
			*workspace = memstore.DefaultWorkspace
		}
		ws, created, err := ensureWorkspace(ctx, c.keys, *workspace)
		if err != nil {
			return err
		}
		if k, secret, err = c.keys.CreateAPIKey(ctx, ws.ID, *name); err != nil {
			return err
		}
		names[ws.ID] = ws.Name
		if created && !f.json {
			fmt.Fprintf(e.stdout, "Created workspace %q (%s).\n", ws.Name, ws.ID)
		}
	}
	if f.json {
		j := newKeyJSON(k, names[k.WorkspaceID])
		j.Secret = secret
		return printJSON(e.stdout, j)
	}
	named := ""
	if k.Name != "" {
		named = fmt.Sprintf(" %q", cell(k.Name))
	}
	fmt.Fprintf(e.stdout, "Created API key %s%s in workspace %s. It will not be shown again:\n", k.ID, named, workspaceLabel(names, k.WorkspaceID))
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
	f.workspace = *workspace
	c, err := f.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	var keys []memstore.APIKey
	names := map[string]string{}
	if c.client != nil {
		for page := ""; ; {
			p, err := c.client.Keys().APIKeys(ctx, nil, page, memstore.MaxPageSize)
			if err != nil {
				return err
			}
			keys = append(keys, p.Items...)
			if page = p.Next; page == "" {
				break
			}
		}
	} else if keys, err = localKeys(ctx, c.keys, *workspace, names); err != nil {
		return err
	}
	if f.json {
		// An array, like every other list command's --json.
		return printJSONList(e.stdout, keys, func(k *memstore.APIKey) keyJSON { return newKeyJSON(k, names[k.WorkspaceID]) })
	}
	return printTable(e, keys, "no API keys; make one with 'memstore keys create'",
		[]string{"ID", "WORKSPACE", "NAME", "HINT", "CREATED", "LAST USED", "REVOKED"},
		func(k *memstore.APIKey) []string {
			ws := names[k.WorkspaceID]
			if ws == "" {
				ws = k.WorkspaceID
			}
			return []string{k.ID, ws, k.Name, k.Hint, fmtTime(k.CreatedAt), fmtTimePtr(k.LastUsedAt), fmtTimePtr(k.RevokedAt)}
		})
}

// localKeys lists the keys of a database's workspace (every workspace
// for ""), and fills names with the workspaces' names by ID.
func localKeys(ctx context.Context, ks memstore.KeyService, workspace string, names map[string]string) ([]memstore.APIKey, error) {
	wsID := ""
	if workspace != "" {
		ws, err := ks.Workspace(ctx, workspace)
		if err != nil {
			return nil, err
		}
		wsID = ws.ID
	}
	workspaces, err := ks.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range workspaces {
		names[w.ID] = w.Name
	}
	return ks.APIKeys(ctx, wsID, "", 0)
}

func runKeysRevoke(ctx context.Context, e env, args []string) error {
	fs, f := keysFlags(e, "revoke", false)
	yes := addYesFlag(fs)
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
	if err := confirm(e, "keys revoke", *yes, "revoke API key "+cell(id)+" for good"); err != nil {
		return err
	}
	var k *memstore.APIKey
	names := map[string]string{}
	if c.client != nil {
		k, err = c.client.Keys().RevokeAPIKey(ctx, nil, id)
	} else if k, err = c.keys.RevokeAPIKey(ctx, id); err == nil {
		if ws, err := c.keys.Workspace(ctx, k.WorkspaceID); err == nil {
			names[ws.ID] = ws.Name
		}
	}
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(e.stdout, newKeyJSON(k, names[k.WorkspaceID]))
	}
	fmt.Fprintf(e.stdout, "API key %s (%s) of workspace %s is revoked since %s.\n", k.ID, k.Hint, workspaceLabel(names, k.WorkspaceID), fmtTime(*k.RevokedAt))
	fmt.Fprintf(e.stdout, "A running server may accept it for up to %s more.\n", httpapi.DefaultAuthCacheTTL)
	return nil
}

// adminCmd is an administrative command over one workspace: users and
// webhooks, of a database (--db) or through a server (--url).
type adminCmd struct {
	db     memstore.Database // nil through a server
	client *httpapi.Client   // nil on a database
	// caller is the local user in the workspace on a database; nil
	// through a server, where the API key decides.
	caller *memstore.Caller
	ws     *memstore.Workspace // nil through a server
	json   bool
	close  func() error
}

// where names the command's workspace in messages.
func (a *adminCmd) where() string {
	if a.ws != nil {
		return fmt.Sprintf("workspace %q", a.ws.Name)
	}
	return "the API key's workspace"
}

// wsName is the workspace's name for JSON: "" through a server, which
// does not tell it.
func (a *adminCmd) wsName() string {
	if a.ws != nil {
		return a.ws.Name
	}
	return ""
}

// openAdmin parses the flags of command cmd's subcommand name (--db or
// --url and --api-key, --json, --workspace, and the extra ones more
// defines), applies the environment variables vars names
// (MEMSTORE_WORKSPACE besides), and opens the backend; on a database,
// only a subcommand that may create it (create) makes it. It returns the
// positional arguments.
func openAdmin(ctx context.Context, e env, cmd, name string, args []string, create bool, usage string, vars map[string]string, more func(fs *flag.FlagSet)) (*adminCmd, []string, error) {
	fs, f := keysFlags(e, name, create)
	setHelp(fs, usage)
	workspace := fs.String("workspace", "", "workspace `NAME` or ID (or MEMSTORE_WORKSPACE; default \"default\" with --db)")
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
	f.workspace = *workspace // through a server, the workspace the key must be of
	c, err := f.open(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	if c.client != nil {
		return &adminCmd{client: c.client, json: f.json, close: c.Close}, pos, nil
	}
	ws, err := localWorkspace(ctx, c.keys, *workspace)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return &adminCmd{db: c.db, caller: &memstore.Caller{WorkspaceID: ws.ID, Actor: localActor(e)}, ws: ws, json: f.json, close: c.Close}, pos, nil
}
