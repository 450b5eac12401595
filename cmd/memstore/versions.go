package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/textdiff"
)

const logHelp = `Usage: memstore log [--store ID] [PATH|MEMORY_ID]

Lists the versions of the memory at PATH, newest first: each create,
change and deletion, who made it, and the size and hash of the content it
left. A memory that was deleted is found by its ID (mem_...). Without an
argument, lists the versions of the whole store.
` + backendHelp

const showHelp = `Usage: memstore show [--store ID] [--raw] VERSION

Prints a version (memver_...): a block of its fields, a blank line, then
the content it left. Control characters a terminal would obey are shown
as visible symbols; --raw prints the content exactly as stored. A
deletion and a redacted version have no content.
` + backendHelp

const diffHelp = `Usage: memstore diff [--store ID] [--raw] VERSION [VERSION]

Prints a unified diff between VERSION and the version of the same memory
before it or, given two versions, from the first to the second. A
deletion or a redacted version counts as empty, with a note on stderr.
Control characters a terminal would obey are shown as visible symbols;
--raw prints the lines exactly as stored.
` + backendHelp

const redactHelp = `Usage: memstore redact [--store ID] VERSION [--yes]

Erases the path and content of a version, for good, and prints what
remains. The live memory keeps its content even when VERSION holds it.
Redacting again changes nothing. There is no undo: it asks first on a
terminal; --yes confirms for scripts.
` + backendHelp

func runLog(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "log", logHelp)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError(e, "memstore log: give at most one PATH or MEMORY_ID")
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()

	f := memstore.VersionFilter{Limit: 100}
	if len(pos) == 1 {
		if strings.HasPrefix(pos[0], "/") {
			m, err := c.findMemory(ctx, storeID, pos[0])
			if err != nil {
				return err
			}
			f.MemoryID = m.ID
		} else {
			f.MemoryID = pos[0]
		}
	}
	var versions []memstore.Version
	err = c.eachVersion(ctx, storeID, f, func(v *memstore.Version) error {
		versions = append(versions, *v)
		return nil
	})
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, versions, func(v *memstore.Version) httpapi.VersionJSON { return httpapi.NewVersionJSON(v, false) })
	}
	return printTable(e, versions, "no versions", []string{"VERSION", "TIME", "OPERATION", "ACTOR", "SIZE", "SHA256", "PATH"},
		func(v *memstore.Version) []string {
			size, sum, path := "", "", v.Path
			if v.HasContent {
				size, sum = strconv.FormatInt(v.ContentSize, 10), shortSHA(v.ContentSHA256)
			}
			if v.Redacted() {
				path = "(redacted)"
			}
			return []string{v.ID, fmtTime(v.CreatedAt), string(v.Operation), fmtActor(v.CreatedBy), size, sum, path}
		})
}

func runShow(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "show", showHelp)
	out := addRawFlag(fs, e)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one VERSION")
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Version(ctx, c.caller, storeID, pos[0])
	if err != nil {
		return err
	}
	return c.printVersion(out(), v, true)
}

func runRedact(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "redact", redactHelp)
	yes := addYesFlag(fs)
	c, storeID, pos, err := storeArgs(ctx, e, fs, bf, args, 1, "one VERSION")
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Version(ctx, c.caller, storeID, pos[0])
	if err != nil {
		return err
	}
	if !v.Redacted() {
		if err := confirm(e, "redact", *yes, fmt.Sprintf("erase the path and content of version %s (%s of %s)", v.ID, v.Operation, cell(v.Path))); err != nil {
			return err
		}
	}
	v, err = c.RedactVersion(ctx, c.caller, storeID, pos[0])
	if err != nil {
		return err
	}
	return c.printVersion(c.e.stdout, v, false)
}

// printVersion prints a version to w as the API's object or as a block of
// fields followed, when withContent, by a blank line and its content.
func (c *conn) printVersion(w io.Writer, v *memstore.Version, withContent bool) error {
	if c.json {
		return printJSON(w, httpapi.NewVersionJSON(v, withContent))
	}
	pairs := [][2]string{
		{"version", v.ID},
		{"memory", v.MemoryID},
		{"store", v.StoreID},
		{"operation", string(v.Operation)},
		{"path", v.Path},
		{"created_at", fmtTime(v.CreatedAt)},
		{"created_by", fmtActor(v.CreatedBy)},
	}
	if v.HasContent {
		pairs = append(pairs, [2]string{"size", strconv.FormatInt(v.ContentSize, 10)}, [2]string{"sha256", v.ContentSHA256})
	}
	if v.Redacted() {
		pairs[4][1] = "(redacted)"
		by := ""
		if v.RedactedBy != nil {
			by = fmtActor(*v.RedactedBy)
		}
		pairs = append(pairs, [2]string{"redacted_at", fmtTimePtr(v.RedactedAt)}, [2]string{"redacted_by", by})
	}
	if err := block(w, pairs...); err != nil {
		return err
	}
	if withContent && v.HasContent {
		_, err := io.WriteString(w, "\n"+v.Content)
		return err
	}
	return nil
}

func runDiff(ctx context.Context, e env, args []string) error {
	fs, bf := memoryFlags(e, "diff", diffHelp)
	out := addRawFlag(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError(e, "memstore diff: give one VERSION, or two to compare")
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()

	var from, to *memstore.Version
	if to, err = c.Version(ctx, c.caller, storeID, pos[len(pos)-1]); err != nil {
		return err
	}
	fromID := ""
	if len(pos) == 2 {
		fromID = pos[0]
	} else if fromID, err = c.previousVersion(ctx, storeID, to); err != nil {
		return err
	}
	if fromID != "" {
		if from, err = c.Version(ctx, c.caller, storeID, fromID); err != nil {
			return err
		}
	}

	oldText, oldLabel := diffSide(e, from)
	newText, newLabel := diffSide(e, to)
	d, err := textdiff.Unified(oldLabel, newLabel, oldText, newText)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if c.json {
		out := struct {
			From *httpapi.VersionJSON `json:"from"`
			To   httpapi.VersionJSON  `json:"to"`
			Diff string               `json:"diff"`
		}{To: httpapi.NewVersionJSON(to, false), Diff: d}
		if from != nil {
			j := httpapi.NewVersionJSON(from, false)
			out.From = &j
		}
		return printJSON(e.stdout, out)
	}
	if d == "" {
		note := "no difference in content"
		if from != nil && !from.Redacted() && !to.Redacted() && from.Path != to.Path {
			note += fmt.Sprintf(" (renamed %s to %s)", cell(from.Path), cell(to.Path))
		}
		fmt.Fprintln(e.stderr, note)
	}
	_, err = io.WriteString(out(), d)
	return err
}

// previousVersion is the ID of the version of v's memory just before v,
// "" when v is the first.
func (c *conn) previousVersion(ctx context.Context, storeID string, v *memstore.Version) (string, error) {
	prev, seen := "", false
	err := c.eachVersion(ctx, storeID, memstore.VersionFilter{MemoryID: v.MemoryID, Limit: 100}, func(o *memstore.Version) error {
		if seen {
			prev = o.ID
			return errStop
		}
		seen = o.ID == v.ID
		return nil
	})
	return prev, err
}

// diffSide is the text and label of one side of a diff: a version's
// content, or empty with a note on stderr when it has none.
func diffSide(e env, v *memstore.Version) (text, label string) {
	switch {
	case v == nil:
		return "", "/dev/null"
	case v.Redacted():
		fmt.Fprintf(e.stderr, "note: %s is redacted; shown as empty\n", cell(v.ID))
		return "", "(redacted)\t" + cell(v.ID)
	case !v.HasContent:
		fmt.Fprintf(e.stderr, "note: %s deleted the memory; shown as empty\n", cell(v.ID))
	}
	return v.Content, cell(v.Path) + "\t" + cell(v.ID)
}
