package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/lines"
	"github.com/memstore/memstore/memorytool"
)

const toolHelp = `Usage: memstore tool --root DIR [flags]
       memstore tool --url URL --api-key KEY --store ID [flags]
       memstore tool --url URL --token TOKEN [--store ID] [flags]
       memstore tool --db FILE --store ID [flags]
       memstore tool prune --root DIR --older-than DURATION [--dry-run] [--json] [--yes]

Runs the memory tool (memory_20250818) for agents in any language, on a
local directory or on a memory store.

With --root, /memories maps to DIR, which is created (mode 0700) if
missing; nothing outside it can be reached.

With --url (or MEMSTORE_URL), /memories is a memory store on a memstore
server: /memories/notes/todo.md is the memory at /notes/todo.md, a
directory is the memories below its path, and every change is a version
of the memory (a rename keeps the memory and its history). Authenticate
with an API key (--api-key or MEMSTORE_API_KEY) and name the store with
--store (or MEMSTORE_STORE); or with a session token (--token or
MEMSTORE_TOKEN), which reaches only its session's stores and may leave out
--store when the session has one. With --db instead of --url, the store
is in a database file, as for the other store commands.

Each line of standard input is one tool input, exactly as in a tool_use
block:

  {"command":"create","path":"/memories/notes.md","file_text":"hello\n"}

Each command answers with one line on standard output, in order, flushed at
once:

  {"ok":true,"output":"File created successfully at: /memories/notes.md"}
  {"ok":false,"error":"Error: File /memories/notes.md already exists"}

The error text is what a tool_result with is_error carries. Blank lines are
skipped; a malformed line gets an ok:false answer. The command exits 0 at
the end of input.

'tool prune' removes files that were neither read nor written for DURATION
(such as 90m, 36h, 30d or 2w) and the directories this leaves empty, and
prints each removed file. It works on a local directory only. It asks
first on a terminal; --yes confirms for scripts (a cron job).
`

func runTool(ctx context.Context, e env, args []string) error {
	if len(args) > 0 && args[0] == "prune" {
		return runToolPrune(ctx, e, args[1:])
	}
	fs := newFlags(e, "tool", toolHelp)
	root := fs.String("root", "", "host directory that /memories maps to")
	bf := &backendFlags{cmd: "tool", kinds: withDB | withKey | withToken}
	fs.StringVar(&bf.url, "url", "", "memstore server `URL`, without /v1, whose store /memories maps to (or MEMSTORE_URL)")
	fs.StringVar(&bf.apiKey, "api-key", "", "API `KEY` for --url (or MEMSTORE_API_KEY)")
	fs.StringVar(&bf.token, "token", "", "session `TOKEN` for --url, instead of an API key (or MEMSTORE_TOKEN)")
	fs.StringVar(&bf.store, "store", "", "memory store `NAME` or ID that /memories maps to (or MEMSTORE_STORE)")
	fs.StringVar(&bf.db, "db", "", "memstore database `FILE` or postgres:// URL holding the store, instead of --url (or MEMSTORE_DB)")
	fs.StringVar(&bf.workspace, "workspace", "", "workspace `NAME` or ID of the store with --db (or MEMSTORE_WORKSPACE; default \"default\")")
	var opts memorytool.Options
	fs.Int64Var(&opts.MaxFileBytes, "max-file-bytes", 0, "refuse writes that make a file larger than `N` bytes (0: no limit)")
	fs.IntVar(&opts.MaxViewChars, "max-view-chars", 0, "cut view output after `N` characters, with a note on how to read on (0: no limit)")
	fs.BoolVar(&opts.DenySecrets, "deny-secrets", false, "refuse to store text that looks like a credential")
	expire := fs.String("expire-after", "", "remove files not read or written for `DURATION` (such as 30d; --root only)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore tool: unexpected argument %q", fs.Arg(0))
	}
	if opts.MaxFileBytes < 0 || opts.MaxViewChars < 0 {
		return usageError(e, "memstore tool: --max-file-bytes and --max-view-chars must be 0 or more")
	}
	storeFlags := bf.url != "" || bf.db != "" || bf.apiKey != "" || bf.token != "" || bf.store != "" || bf.workspace != ""
	switch {
	case *root != "" && storeFlags:
		return usageError(e, "memstore tool: give --root for a local directory or --url (or --db) for a memory store, not both")
	case *root == "" && !storeFlags && e.getenv("MEMSTORE_URL") == "":
		return usageError(e, "memstore tool: --root is required (the directory that /memories maps to), or --url with --store for a memory store")
	}
	if *expire != "" {
		if *root == "" {
			return usageError(e, "memstore tool: --expire-after works with --root only: a memory store keeps every version and records no reads")
		}
		d, err := parseDuration(*expire)
		if err != nil {
			return usageError(e, "memstore tool: --expire-after: %v", err)
		}
		opts.ExpireAfter = d
	}
	var tool memorytool.Handler
	if *root != "" {
		local, err := memorytool.OpenLocal(*root, opts)
		if err != nil {
			return err
		}
		defer local.Close()
		tool = local
	} else {
		store, closeStore, err := openToolStore(ctx, e, bf, opts)
		if err != nil {
			return err
		}
		defer closeStore()
		tool = store
	}
	return serveJSONLines(ctx, tool, e.stdin, e.raw())
}

// openToolStore opens the memory store that the flags and environment
// name as a memory tool handler, and checks that it can be read, so that a
// wrong URL, credential or store is reported at once rather than on every
// command.
func openToolStore(ctx context.Context, e env, bf *backendFlags, opts memorytool.Options) (*memorytool.Store, func() error, error) {
	c, err := bf.open(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	storeID := c.store
	if storeID != "" {
		storeID, err = c.resolveStore(ctx, storeID, false)
	} else if c.caller != nil && c.caller.Session != nil {
		storeID, err = sessionStore(c.caller.Session)
	} else if storeID == "" {
		err = usageError(e, "memstore tool: --store ID (or MEMSTORE_STORE) is required: the memory store that /memories maps to ('memstore stores ls' lists them)")
	}
	if err == nil {
		if _, err = c.Memories(ctx, c.caller, storeID, memstore.MemoryFilter{Limit: 1}); err != nil {
			err = fmt.Errorf("cannot use memory store %s: %w", storeID, err)
		}
	}
	var tool *memorytool.Store
	if err == nil {
		tool, err = memorytool.NewStore(c, c.caller, storeID, opts)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return tool, c.Close, nil
}

// sessionStore is the store of session s when it has exactly one;
// otherwise an error listing them.
func sessionStore(s *memstore.Session) (string, error) {
	atts := s.Attachments
	switch len(atts) {
	case 1:
		return atts[0].StoreID, nil
	case 0:
		return "", fmt.Errorf("session %s has no memory store", s.ID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session %s has %d memory stores; pick one with --store ID or MEMSTORE_STORE:", s.ID, len(atts))
	for _, a := range atts {
		fmt.Fprintf(&b, "\n  %s  %s  %s", a.StoreID, a.Access, cell(a.Name))
	}
	return "", errors.New(b.String())
}

// toolAnswer is one line of the tool command's output.
type toolAnswer struct {
	OK     bool   `json:"ok"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// appendToolAnswer appends a's line, the bytes printJSON writes for it.
func appendToolAnswer(dst []byte, a toolAnswer) []byte {
	dst = append(dst, `{"ok":`...)
	dst = strconv.AppendBool(dst, a.OK)
	if a.Output != "" {
		dst = append(dst, `,"output":`...)
		dst = appendJSONString(dst, a.Output)
	}
	if a.Error != "" {
		dst = append(dst, `,"error":`...)
		dst = appendJSONString(dst, a.Error)
	}
	return append(dst, "}\n"...)
}

// serveJSONLines runs each input line through h and writes one answer line
// per command (as printJSON writes it: nothing a terminal obeys), flushed
// before the input is waited for, so that a caller can converse line by
// line; answers to commands that were sent together go out
// together, in one write. A line longer than lines.Max is answered with an
// error, unread.
func serveJSONLines(ctx context.Context, h memorytool.Handler, in io.Reader, out io.Writer) (err error) {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	defer func() {
		// Every answer given goes out, whatever ends the loop.
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}()
	var answerBuf []byte
	for {
		// Before a read that may wait for the caller, the answers so far
		// go out; a blank line waiting counts as a line, so it never
		// holds an answer back.
		if w.Buffered() > 0 && !lineWaiting(r) {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		line, tooLong, err := lines.Read(r, lines.Max)
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			var answer toolAnswer
			if tooLong {
				answer.Error = fmt.Sprintf("Error: the input line is longer than %d bytes, the limit; nothing was done", lines.Max)
			} else if res := memorytool.Execute(ctx, h, line); res.IsError {
				answer.Error = res.Content
			} else {
				answer = toolAnswer{OK: true, Output: res.Content}
			}
			answerBuf = appendToolAnswer(answerBuf[:0], answer)
			if _, err := w.Write(answerBuf); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// lineWaiting reports whether r holds a whole next line already, which
// can be read without waiting for the caller.
func lineWaiting(r *bufio.Reader) bool {
	next, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(next, '\n') >= 0
}

func runToolPrune(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tool prune", toolHelp)
	root := fs.String("root", "", "host directory that /memories maps to (required)")
	olderThan := fs.String("older-than", "", "remove files not read or written for `DURATION` (required; such as 30d)")
	dryRun := fs.Bool("dry-run", false, "print what would be removed, remove nothing")
	asJSON := fs.Bool("json", false, "print a JSON object instead of lines")
	yes := addYesFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *root == "" || *olderThan == "" {
		return usageError(e, "memstore tool prune: --root and --older-than are required")
	}
	d, err := parseDuration(*olderThan)
	if err != nil {
		return usageError(e, "memstore tool prune: --older-than: %v", err)
	}
	if !*dryRun {
		if err := confirm(e, "tool prune", *yes, fmt.Sprintf("remove the files of %s not read or written for %s", *root, *olderThan)); err != nil {
			return err
		}
	}
	tool, err := memorytool.OpenLocal(*root, memorytool.Options{})
	if err != nil {
		return err
	}
	defer tool.Close()
	removed, err := tool.Prune(ctx, time.Now().Add(-d), *dryRun)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if *asJSON {
		if removed == nil {
			removed = []string{}
		}
		return printJSON(e.stdout, struct {
			DryRun  bool     `json:"dry_run"`
			Removed []string `json:"removed"`
		}{*dryRun, removed})
	}
	verb := "removed"
	if *dryRun {
		verb = "would remove"
	}
	for _, p := range removed {
		fmt.Fprintf(e.stdout, "%s %s\n", verb, p)
	}
	if len(removed) == 0 {
		fmt.Fprintln(e.stderr, "nothing to remove")
	} else {
		fmt.Fprintf(e.stderr, "%s %s\n", verb, plural(len(removed), "file", "files"))
	}
	return nil
}

// parseDuration is time.ParseDuration plus the units d (24h) and w (7d),
// as a whole number before them: 30d, 2w.
func parseDuration(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("%q is not a duration such as 30d or 2w", s)
			}
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 90m, 36h or 30d", s)
	}
	return d, nil
}
