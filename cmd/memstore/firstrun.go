package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

// A first run, on a database without API keys, makes a key and says what
// to do next: where the API and the console are, and how to make the
// first console user (or, with --init-admin NAME, makes that user and a
// one-time sign-in link). All of it goes to standard output, never to the
// log on standard error, and the key comes last, alone on its line, so
// that 'tail -1' takes it. A later start prints none of it.

// newKey is the key a first run made.
type newKey struct {
	id, workspace, secret string
	where                 string // where a copy is, or a warning that there is none
}

// firstKey gives a database without API keys its first one, so that a
// fresh server can be used at once: it makes the default workspace if
// missing and a key in it, and, for a database file, keeps a copy in
// path.key (mode 0600), never overwriting a file already there; a
// database URL has no place beside it that all its servers share. It
// returns nil when the database has keys. Keys revoked since count: a
// database whose keys were all revoked gets none. Replicas that start
// together on an empty database may each make one: make the first key
// with 'memstore keys create' before starting them.
func firstKey(ctx context.Context, e env, ks memstore.KeyService, path string) (*newKey, error) {
	keys, err := ks.APIKeys(ctx, "", "", 1)
	if err != nil || len(keys) > 0 {
		return nil, err
	}
	ws, _, err := ensureWorkspace(ctx, ks, memstore.DefaultWorkspace)
	if err != nil {
		return nil, err
	}
	k, secret, err := ks.CreateAPIKey(ctx, ws.ID, "first key")
	if err != nil {
		return nil, err
	}
	where := "store it now: a database that is not a file keeps no copy beside it"
	if _, isURL := databaseURL(path); !isURL {
		keyFile := path + ".key"
		where = fmt.Sprintf("a copy is in %s, readable by you only", keyFile)
		if err := writeKeyFile(keyFile, secret); err != nil {
			fmt.Fprintf(e.stderr, "memstore: warning: the key was not saved to a file: %v\n", err)
			where = "store it now"
		}
	}
	return &newKey{id: k.ID, workspace: ws.Name, secret: secret, where: where}, nil
}

// initAdmin makes the first console user, an admin named name, in the
// default workspace, with no password and a one-time sign-in link into
// the console at consoleURL, which it returns with the link's expiry. A
// workspace that has users already gets none: the flag may stay in a
// service's command line, and only the first start acts on it (it then
// returns "").
func initAdmin(ctx context.Context, e env, db memstore.Database, ks memstore.KeyService, name string, consoleURL *url.URL) (link string, expires time.Time, err error) {
	ws, _, err := ensureWorkspace(ctx, ks, memstore.DefaultWorkspace)
	if err != nil {
		return "", time.Time{}, err
	}
	us := memstore.NewUsers(db)
	caller := &memstore.Caller{WorkspaceID: ws.ID, Actor: localActor(e)}
	existing, err := us.Users(ctx, caller, memstore.UserFilter{Limit: 1})
	if err != nil {
		return "", time.Time{}, err
	}
	if len(existing.Items) > 0 {
		fmt.Fprintf(e.stderr, "memstore: --init-admin %s: workspace %q has console users already, so no user was made; make more with 'memstore users create'\n", name, ws.Name)
		return "", time.Time{}, nil
	}
	u, err := us.CreateUser(ctx, caller, memstore.UserCreate{Name: name, Role: memstore.RoleAdmin})
	if memstore.ErrorCode(err) == memstore.EConflict {
		// Another server of the database, started at the same time, made
		// the user and printed the link.
		fmt.Fprintf(e.stderr, "memstore: --init-admin %s: another server made the user meanwhile, so no link is printed here\n", name)
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("--init-admin: %w", err)
	}
	secret, expires, err := us.CreateSignInLink(ctx, caller, u.ID)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("--init-admin: %w", err)
	}
	return signInLinkURL(consoleURL, secret), expires, nil
}

// firstRun is what a start prints on standard output for people: the
// next steps after a first run (key not nil), the sign-in link of
// --init-admin (link not ""), or nothing.
type firstRun struct {
	api        string   // the API's base URL
	consoleURL *url.URL // nil when the console is off
	db         string   // the database, as --db takes it
	key        *newKey
	admin      string // --init-admin's user
	link       string
	expires    time.Time
}

func (r *firstRun) print(w io.Writer) {
	if r.key == nil && r.link == "" {
		return
	}
	if r.key != nil {
		fmt.Fprintln(w, "memstore is ready, on a new database. Next steps (shown this once):")
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  API       %s  (an SDK's base URL; send the key below as x-api-key)\n", r.api)
		if r.consoleURL != nil {
			fmt.Fprintf(w, "  Console   %s\n", r.consoleURL)
		}
	}
	switch {
	case r.link != "":
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Made console user %q, an admin. This link signs them in once, until %s,\n", r.admin, fmtTime(r.expires))
		fmt.Fprintln(w, "and will not be shown again; then set a password on the console's Password page:")
		fmt.Fprintf(w, "  %s\n", r.link)
	case r.consoleURL != nil:
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Make the first console user, an admin (it asks for a password):")
		fmt.Fprintf(w, "  memstore users create --db %s --name NAME --role admin\n", shellWord(databaseName(r.db)))
		fmt.Fprintln(w, "or start the server with --init-admin NAME for a one-time sign-in link.")
	}
	if r.key != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Created API key %s in workspace %q. It will not be shown again (%s):\n", r.key.id, r.key.workspace, r.key.where)
		fmt.Fprintln(w, r.key.secret)
	}
}

// consoleBase is the console's URL on a server at addr.
func consoleBase(scheme, addr string) *url.URL {
	return &url.URL{Scheme: scheme, Host: dialable(addr), Path: console.Prefix}
}

// dialable is the address to give people and clients for a server
// listening on addr: a listener on every interface (0.0.0.0, [::], as
// in a container) has loopback among them, and its own address cannot
// be opened as written.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:@+=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
