package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/mcpserver"
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
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bf := &backendFlags{cmd: "mcp", kinds: withDB | withToken, opts: dbOptions{logger: log}}
	fs.StringVar(&bf.db, "db", "", "memstore database `FILE` or postgres:// URL (or MEMSTORE_DB)")
	fs.StringVar(&bf.url, "url", "", "memstore server `URL`, without /v1 (or MEMSTORE_URL)")
	fs.StringVar(&bf.token, "token", "", "session `TOKEN` for --url (or MEMSTORE_TOKEN)")
	fs.StringVar(&bf.workspace, "workspace", "", "workspace `NAME` or ID with --db (or MEMSTORE_WORKSPACE)")
	var att attachFlags
	fs.Var(att.store(), "store", "with --db: attach store `NAME` or ID, read-only with NAME:ro (repeatable)")
	fs.Var(att.instructions(), "instructions", "with --db: `TEXT` telling the agent how to use the store before it")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore mcp: unexpected argument %q", pos[0])
	}
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	switch {
	case sel.url != "" && len(att.list) > 0:
		return usageError(e, "memstore mcp: with --url the session's own stores are used; --store goes with --db")
	case sel.url == "" && len(att.list) == 0:
		return usageError(e, "memstore mcp: attach at least one store with --store ID (see 'memstore stores ls'), or use --url and --token")
	}
	c, err := sel.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	caller := c.caller
	if sel.url == "" {
		if err := c.resolveAttachments(ctx, att.list); err != nil {
			return err
		}
		// A session of its own, which lasts as long as this process.
		s, _, secret, err := c.CreateSession(ctx, caller, memstore.SessionCreate{Title: "memstore mcp", Stores: att.list})
		if err != nil {
			return err
		}
		defer c.ArchiveSession(context.WithoutCancel(ctx), caller, s.ID)
		if caller, err = c.AuthenticateSession(ctx, secret); err != nil {
			return err
		}
	}
	svc := agenttool.Services{Memories: c, Search: c}
	ts, err := agenttool.New(svc, caller)
	if err != nil {
		return err
	}
	srv := mcpserver.New(ts, caller.Session, Version, log)
	err = mcpserver.Stdio(ctx, srv, e.stdin, newJSONWriter(e.raw()))
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}
