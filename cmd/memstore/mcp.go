package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/mcpserver"
	"github.com/memstore/memstore/sqlite"
)

const mcpHelp = `Usage: memstore mcp --url URL [--token SESSION_TOKEN]
       memstore mcp [--db FILE] --store ID[:ro] [--instructions TEXT] [--store ...]...

Serves the six memory tools (memory_list, memory_search, memory_read,
memory_write, memory_edit, memory_delete) to an MCP client over standard
input and output. The server's instructions are the session's memory
prompt: its stores, their access and instructions, and how to use memory.

With --url and --token (or MEMSTORE_URL and MEMSTORE_TOKEN) the tools work
on a memstore server as that session: they reach its stores only, with
their access, and the server records the session as the author of every
change. Prefer MEMSTORE_TOKEN to --token: other users of the machine can
read a command's arguments (with ps), not its environment.

With a database (--db, MEMSTORE_DB, or the default one) the command makes a
session of its own with the --store attachments (ID:ro for read-only, each
optionally followed by --instructions), records changes as that session's,
and ends it on exit.

Claude Code:
  claude mcp add memstore -e MEMSTORE_TOKEN=st-memstore-... -- memstore mcp --url http://127.0.0.1:6366

'memstore serve' also serves the same tools over streamable HTTP at /mcp,
for clients that hold a session token (Authorization: Bearer).
`

func runMCP(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "mcp", mcpHelp)
	db := fs.String("db", "", "memstore database `FILE` (or MEMSTORE_DB)")
	url := fs.String("url", "", "memstore server `URL`, without /v1 (or MEMSTORE_URL)")
	token := fs.String("token", "", "session `TOKEN` for --url (or MEMSTORE_TOKEN)")
	workspace := fs.String("workspace", "", "workspace `NAME` or ID with --db (or MEMSTORE_WORKSPACE)")
	var att attachFlags
	fs.Var(att.store(), "store", "with --db: attach store `ID`, read-only with ID:ro (repeatable)")
	fs.Var(att.instructions(), "instructions", "with --db: `TEXT` telling the agent how to use the store before it")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore mcp: unexpected argument %q", pos[0])
	}
	if err := applyEnv(e, "mcp", fs, map[string]string{"token": "MEMSTORE_TOKEN", "workspace": "MEMSTORE_WORKSPACE"}); err != nil {
		return err
	}
	if *db == "" && *url == "" {
		*db, *url = e.getenv("MEMSTORE_DB"), e.getenv("MEMSTORE_URL")
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	var (
		svc    agenttool.Services
		caller *memstore.Caller
	)
	switch {
	case *url != "" && *db != "":
		return usageError(e, "memstore mcp: give either --url or --db, not both")
	case *url != "":
		if *token == "" {
			return usageError(e, "memstore mcp: --url needs a session token: give --token or set MEMSTORE_TOKEN (see 'memstore sessions create')")
		}
		if len(att.list) > 0 {
			return usageError(e, "memstore mcp: with --url the session's own stores are used; --store goes with --db")
		}
		client := httpapi.NewClient(*url, *token)
		if caller, err = client.AuthenticateSession(ctx, *token); err != nil {
			return fmt.Errorf("the server did not accept the session token: %w", err)
		}
		client.Caller = caller
		svc = agenttool.Services{Memories: client, Search: client}
	default:
		if *token != "" {
			return usageError(e, "memstore mcp: --token goes with --url")
		}
		if len(att.list) == 0 {
			return usageError(e, "memstore mcp: attach at least one store with --store ID (see 'memstore stores ls'), or use --url and --token")
		}
		path, err := dbPath(e, *db)
		if err != nil {
			return err
		}
		d, err := openDB(ctx, path, false, sqlite.Options{Logger: log})
		if err != nil {
			return err
		}
		defer d.Close()
		ws, err := localWorkspace(ctx, d, *workspace)
		if err != nil {
			return err
		}
		core := memstore.NewCore(d)
		local := &memstore.Caller{WorkspaceID: ws.ID, Actor: localActor(e)}
		s, _, secret, err := core.CreateSession(ctx, local, memstore.SessionCreate{Title: "memstore mcp", Stores: att.list})
		if err != nil {
			return err
		}
		// The session lasts as long as this process.
		defer core.ArchiveSession(context.WithoutCancel(ctx), local, s.ID)
		if caller, err = core.AuthenticateSession(ctx, secret); err != nil {
			return err
		}
		svc = agenttool.Services{Memories: core, Search: core}
	}
	ts, err := agenttool.New(svc, caller)
	if err != nil {
		return err
	}
	srv := mcpserver.New(ts, caller.Session, Version, log)
	err = mcpserver.Stdio(ctx, srv, e.stdin, e.stdout)
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}
