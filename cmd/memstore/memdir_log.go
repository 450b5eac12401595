package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memstore/memstore/memdir"
)

const memdirLogHelp = `Usage: memstore memdir log [--cwd DIR] [--dir DIR] [--trust-project] [--settings FILE] [--json] TEXT...
       memstore memdir log [flags] -

Appends an entry to today's daily log of the memory directory,
logs/YYYY/MM/YYYY-MM-DD.md (local time): "- HH:MM TEXT", with the lines
after the first indented two spaces. The words of TEXT are joined with
spaces; "-" reads the text from standard input.

Missing directories are created (mode 0700) and the log file too (0600).
The file is only ever appended to, in one write under an advisory lock, so
entries of several writers at once, in as many processes, are neither
lost nor mixed.

--dir names the memory directory itself, instead of finding the project's.
It prints the log's path ("logged to PATH"); --json prints the path and
the entry written.

Exit status: 0 logged; 2 usage (nothing to log); 3 memory is disabled;
5 the log cannot be written.
`

func runMemdirLog(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "memdir log", memdirLogHelp)
	t := addMemdirTarget(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	const cmd = "memdir log"
	var text string
	switch {
	case len(pos) == 0:
		return usageError(e, "memstore %s: say what to log: TEXT..., or - to read it from standard input", cmd)
	case len(pos) == 1 && pos[0] == "-":
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
		text = string(b)
	default:
		text = strings.Join(pos, " ")
	}
	now := time.Now()
	if _, err := memdir.LogEntry(now, text); err != nil {
		return usageError(e, "memstore %s: %v", cmd, err)
	}
	loc, err := t.locateEnabled(e, cmd)
	if err != nil {
		return err
	}
	path := loc.LogPath(now)
	entry, err := memdir.AppendLog(path, now, text)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	if t.json {
		return printJSON(e.stdout, struct {
			Path  string `json:"path"`
			Entry string `json:"entry"`
		}{path, entry})
	}
	_, err = fmt.Fprintf(e.stdout, "logged to %s\n", cell(path))
	return err
}
