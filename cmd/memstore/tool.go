package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore/memorytool"
)

const toolHelp = `Usage: memstore tool --root DIR [flags]
       memstore tool prune --root DIR --older-than DURATION [--dry-run] [--json]

Runs the memory tool (memory_20250818) on a local directory, for agents in
any language. /memories maps to DIR, which is created (mode 0700) if missing;
nothing outside it can be reached.

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
prints each removed file.
`

func runTool(ctx context.Context, e env, args []string) error {
	if len(args) > 0 && args[0] == "prune" {
		return runToolPrune(ctx, e, args[1:])
	}
	fs := newFlags(e, "tool", toolHelp)
	root := fs.String("root", "", "host directory that /memories maps to (required)")
	var opts memorytool.Options
	fs.Int64Var(&opts.MaxFileBytes, "max-file-bytes", 0, "refuse writes that make a file larger than `N` bytes (0: no limit)")
	fs.IntVar(&opts.MaxViewChars, "max-view-chars", 0, "cut view output after `N` characters, with a note on how to read on (0: no limit)")
	fs.BoolVar(&opts.DenySecrets, "deny-secrets", false, "refuse to store text that looks like a credential")
	expire := fs.String("expire-after", "", "remove files not read or written for `DURATION` (such as 30d)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *root == "" {
		return usageError(e, "memstore tool: --root is required (the directory that /memories maps to)")
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore tool: unexpected argument %q", fs.Arg(0))
	}
	if opts.MaxFileBytes < 0 || opts.MaxViewChars < 0 {
		return usageError(e, "memstore tool: --max-file-bytes and --max-view-chars must be 0 or more")
	}
	if *expire != "" {
		d, err := parseDuration(*expire)
		if err != nil {
			return usageError(e, "memstore tool: --expire-after: %v", err)
		}
		opts.ExpireAfter = d
	}
	tool, err := memorytool.OpenLocal(*root, opts)
	if err != nil {
		return err
	}
	defer tool.Close()
	return serveJSONLines(ctx, tool, e.stdin, e.stdout)
}

// toolAnswer is one line of the tool command's output.
type toolAnswer struct {
	OK     bool   `json:"ok"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// serveJSONLines runs each input line through h and writes one answer line
// per command, flushed at once so that a caller can converse line by line.
// Lines may be of any length.
func serveJSONLines(ctx context.Context, h memorytool.Handler, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			res := memorytool.Execute(ctx, h, line)
			answer := toolAnswer{OK: !res.IsError, Output: res.Content}
			if res.IsError {
				answer = toolAnswer{Error: res.Content}
			}
			if err := enc.Encode(answer); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
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

func runToolPrune(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tool prune", toolHelp)
	root := fs.String("root", "", "host directory that /memories maps to (required)")
	olderThan := fs.String("older-than", "", "remove files not read or written for `DURATION` (required; such as 30d)")
	dryRun := fs.Bool("dry-run", false, "print what would be removed, remove nothing")
	asJSON := fs.Bool("json", false, "print a JSON object instead of lines")
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
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
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
	fmt.Fprintf(e.stderr, "%d file(s) %s\n", len(removed), verb)
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
