package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

const usersHelp = `Usage: memstore users create [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] --name NAME [--role admin|member|auditor] [--link] [--json]
       memstore users ls [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] [--json]
       memstore users rm [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] [--yes] NAME
       memstore users passwd [--db FILE|URL | --url URL --api-key KEY] [--workspace NAME] NAME

Manages the people who sign in to the web console ('memstore serve'
serves it at /console/), on the database itself (--db) or through a
running server (--url with an API key, or MEMSTORE_URL and
MEMSTORE_API_KEY; use https, since a password travels to it). A user
belongs to one workspace (on a database --workspace, MEMSTORE_WORKSPACE,
default "default"; through a server the API key's), where the name is
unique, and has a role:

  admin    everything in the workspace: memories, stores, keys, users,
           sessions
  member   stores and memories, read and write
  auditor  reads everything, changes nothing

'users create' asks for the password twice on a terminal, or reads it
from the first line of standard input otherwise; with --link it sets no
password and prints a sign-in link instead, which works once, within
15 minutes (the user then sets a password on the console's Password
page, or an operator with 'users passwd'). --console-url (MEMSTORE_CONSOLE_URL) is where the link points;
by default the console of --url, else of a 'memstore serve' with its
default address.

'users passwd NAME' sets a new password the same way, and signs the user
out everywhere. 'users rm NAME' removes a user and their sessions; the
changes they made still name them by ID. It asks first on a terminal;
--yes confirms for scripts.

Passwords are kept as argon2id hashes, never as given.
`

// defaultConsoleURL is where the console of a server with the default
// --addr is.
const defaultConsoleURL = "http://" + defaultAddr + "/console/"

func runUsers(ctx context.Context, e env, args []string) error {
	args = hoistCommand(args) // memstore users --url URL ls, as memstore --url URL users ls
	if len(args) == 0 {
		return usageError(e, "memstore users: say what to do: create, ls, rm or passwd; run 'memstore users --help' for more")
	}
	switch args[0] {
	case "create":
		return runUsersCreate(ctx, e, args[1:])
	case "ls", "list":
		return runUsersList(ctx, e, args[1:])
	case "rm", "remove":
		return runUsersRemove(ctx, e, args[1:])
	case "passwd":
		return runUsersPasswd(ctx, e, args[1:])
	}
	fs := newFlags(e, "users", usersHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	return usageError(e, "memstore users: unknown subcommand %q; it is create, ls, rm or passwd", args[0])
}

// userJSON is a user as the users commands print it with --json.
type userJSON struct {
	Type          string    `json:"type"`
	ID            string    `json:"id"`
	WorkspaceID   string    `json:"workspace_id"`
	WorkspaceName string    `json:"workspace_name"`
	Name          string    `json:"name"`
	Role          string    `json:"role"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// SignInLink and its expiry are present only when one was just made.
	SignInLink       string     `json:"sign_in_link,omitempty"`
	SignInLinkExpiry *time.Time `json:"sign_in_link_expires_at,omitempty"`
}

func newUserJSON(u *memstore.User, workspaceName string) userJSON {
	return userJSON{Type: "user", ID: u.ID, WorkspaceID: u.WorkspaceID, WorkspaceName: workspaceName,
		Name: u.Name, Role: string(u.Role), CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// usersCmd is an open users subcommand: the users of its database or
// server, and the caller in the workspace.
type usersCmd struct {
	*adminCmd
	users memstore.UserService
}

// openUsers parses a users subcommand's flags (with extra ones defined by
// more) and opens its database; it returns the positional arguments.
// Only create may make the database, as keys create may.
func openUsers(ctx context.Context, e env, name string, args []string, more func(fs *flag.FlagSet)) (*usersCmd, []string, error) {
	a, pos, err := openAdmin(ctx, e, "users", name, args, name == "create", usersHelp, map[string]string{"console-url": "MEMSTORE_CONSOLE_URL"}, more)
	if err != nil {
		return nil, nil, err
	}
	if a.client != nil {
		return &usersCmd{adminCmd: a, users: a.client}, pos, nil
	}
	return &usersCmd{adminCmd: a, users: memstore.NewUsers(a.db)}, pos, nil
}

func runUsersCreate(ctx context.Context, e env, args []string) error {
	var name, role, consoleURL string
	var link bool
	uc, pos, err := openUsers(ctx, e, "create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "the user's `NAME`, unique in the workspace")
		fs.StringVar(&role, "role", string(memstore.RoleMember), "`ROLE`: admin, member or auditor")
		fs.BoolVar(&link, "link", false, "set no password: print a one-time sign-in link instead")
		fs.StringVar(&consoleURL, "console-url", "", "the console's `URL`, for --link (or MEMSTORE_CONSOLE_URL; default: --url's /console/, else "+defaultConsoleURL+")")
	})
	if err != nil {
		return err
	}
	defer uc.close()
	if len(pos) > 0 {
		return usageError(e, "memstore users create: unexpected argument %q (name the user with --name)", pos[0])
	}
	if err := memstore.ValidateUserName(name); err != nil {
		return usageError(e, "memstore users create: --name: %v", err)
	}
	if err := memstore.ValidateRole(memstore.Role(role)); err != nil {
		return usageError(e, "memstore users create: --role: %v", err)
	}
	var base *url.URL
	if link {
		if consoleURL == "" {
			consoleURL = defaultConsoleURL
			if uc.client != nil {
				consoleURL = uc.client.BaseURL + console.Prefix
			}
		}
		if base, err = parseConsoleURL(consoleURL); err != nil {
			return usageError(e, "memstore users create: --console-url: %v", err)
		}
	}
	// The name is checked before a password is asked for.
	if _, err := uc.users.User(ctx, uc.caller, name); err == nil {
		return memstore.Errorf(memstore.EConflict, "a user named %q already exists in %s", name, uc.where())
	}
	pw := ""
	if !link {
		if pw, err = readNewPassword(e); err != nil {
			return err
		}
	}
	u, err := uc.users.CreateUser(ctx, uc.caller, memstore.UserCreate{Name: name, Role: memstore.Role(role), Password: pw})
	if err != nil {
		return err
	}
	j := newUserJSON(u, uc.wsName())
	if link {
		secret, expires, err := uc.users.CreateSignInLink(ctx, uc.caller, u.ID)
		if err != nil {
			return err
		}
		j.SignInLink, j.SignInLinkExpiry = signInLinkURL(base, secret), &expires
	}
	if uc.json {
		return printJSON(e.stdout, j)
	}
	fmt.Fprintf(e.stdout, "Created user %q (%s), %s, in %s.\n", u.Name, u.ID, u.Role, uc.where())
	if link {
		fmt.Fprintf(e.stdout, "This link signs them in once, until %s; it will not be shown again:\n", fmtTime(*j.SignInLinkExpiry))
		fmt.Fprintln(e.stdout, j.SignInLink)
	}
	return nil
}

// parseConsoleURL checks the console URL that sign-in links point into.
func parseConsoleURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// signInLinkURL is the link that redeems a sign-in link's secret in the
// console at base.
func signInLinkURL(base *url.URL, secret string) string { return console.LinkURL(base, secret) }

func runUsersList(ctx context.Context, e env, args []string) error {
	uc, pos, err := openUsers(ctx, e, "ls", args, nil)
	if err != nil {
		return err
	}
	defer uc.close()
	if len(pos) > 0 {
		return usageError(e, "memstore users ls: unexpected argument %q", pos[0])
	}
	out := []userJSON{}
	f := memstore.UserFilter{Limit: memstore.MaxPageSize}
	for {
		p, err := uc.users.Users(ctx, uc.caller, f)
		if err != nil {
			return err
		}
		for i := range p.Items {
			out = append(out, newUserJSON(&p.Items[i], uc.wsName()))
		}
		if f.Page = p.Next; f.Page == "" {
			break
		}
	}
	if uc.json {
		return printJSON(e.stdout, out)
	}
	return printTable(e, out, fmt.Sprintf("no users in %s; make one with 'memstore users create --name NAME'", uc.where()),
		[]string{"ID", "NAME", "ROLE", "CREATED", "UPDATED"},
		func(u *userJSON) []string {
			return []string{u.ID, u.Name, u.Role, fmtTime(u.CreatedAt), fmtTime(u.UpdatedAt)}
		})
}

func runUsersRemove(ctx context.Context, e env, args []string) error {
	var yes *bool
	uc, pos, err := openUsers(ctx, e, "rm", args, func(fs *flag.FlagSet) { yes = addYesFlag(fs) })
	if err != nil {
		return err
	}
	defer uc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore users rm: give the name or ID of one user; 'memstore users ls' lists them")
	}
	u, err := uc.users.User(ctx, uc.caller, pos[0])
	if err != nil {
		return err
	}
	if err := confirm(e, "users rm", *yes, fmt.Sprintf("remove user %q (%s) from %s", u.Name, u.ID, uc.where())); err != nil {
		return err
	}
	if err := uc.users.DeleteUser(ctx, uc.caller, u.ID); err != nil {
		return err
	}
	if uc.json {
		return printJSON(e.stdout, newUserJSON(u, uc.wsName()))
	}
	fmt.Fprintf(e.stdout, "Removed user %q (%s) from %s, and signed them out.\n", u.Name, u.ID, uc.where())
	return nil
}

func runUsersPasswd(ctx context.Context, e env, args []string) error {
	uc, pos, err := openUsers(ctx, e, "passwd", args, nil)
	if err != nil {
		return err
	}
	defer uc.close()
	if len(pos) != 1 {
		return usageError(e, "memstore users passwd: give the name or ID of one user; 'memstore users ls' lists them")
	}
	if _, err := uc.users.User(ctx, uc.caller, pos[0]); err != nil {
		return err
	}
	pw, err := readNewPassword(e)
	if err != nil {
		return err
	}
	u, err := uc.users.SetPassword(ctx, uc.caller, pos[0], pw)
	if err != nil {
		return err
	}
	if uc.json {
		return printJSON(e.stdout, newUserJSON(u, uc.wsName()))
	}
	fmt.Fprintf(e.stdout, "Set the password of user %q (%s), and signed them out everywhere.\n", u.Name, u.ID)
	return nil
}

// readNewPassword reads a new password: typed twice, unseen, on a
// terminal; otherwise the first line of standard input. It is checked
// (memstore.ValidatePassword) before it is returned.
func readNewPassword(e env) (string, error) {
	var pw string
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		fmt.Fprint(e.stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("the two passwords differ; nothing was changed")
		}
		pw = string(a)
	} else {
		// A line longer than any password allows is read no further.
		line, err := bufio.NewReader(io.LimitReader(e.stdin, memstore.MaxPasswordBytes+2)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the password from standard input: %w", err)
		}
		pw = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	}
	if err := memstore.ValidatePassword(pw); err != nil {
		return "", fmt.Errorf("%v; nothing was changed", err)
	}
	return pw, nil
}
