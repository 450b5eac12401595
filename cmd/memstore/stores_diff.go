package main

import (
	"context"
	"fmt"
	"io"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/storediff"
)

const storesDiffHelp = `Usage: memstore stores diff [--stat] [--raw] A B

Compares two memory stores of the workspace path by path: the paths only
B has (added), those only A has (removed), and those both have with
different content (changed), each with a unified diff from A to B
(labelled a/PATH and b/PATH, /dev/null for a missing side). Content with
a NUL byte is not diffed: a line says it differs. A summary goes to
standard error; nothing printed means the stores hold the same memories.

A and B are stores, each by ID or by name, archived ones too. With
--stat, one line per path with the lines added and deleted instead of
the diffs. With --json, one object: the two stores, and each change with
its path, kind, the memories on either side, the counts and the diff
(not with --stat).
`

// storeDiffJSON is the --json of stores diff (and of dream, once done).
type storeDiffJSON struct {
	From    httpapi.StoreJSON `json:"from"`
	To      httpapi.StoreJSON `json:"to"`
	Changes []storeChangeJSON `json:"changes"`
	Same    int               `json:"same"`
}

type storeChangeJSON struct {
	Path         string `json:"path"`
	Kind         string `json:"kind"`
	FromMemoryID string `json:"from_memory_id,omitempty"`
	ToMemoryID   string `json:"to_memory_id,omitempty"`
	FromSHA256   string `json:"from_content_sha256,omitempty"`
	ToSHA256     string `json:"to_content_sha256,omitempty"`
	Added        int    `json:"lines_added"`
	Deleted      int    `json:"lines_deleted"`
	Binary       bool   `json:"binary"`
	Diff         string `json:"diff,omitempty"`
}

func runStoresDiff(ctx context.Context, e env, args []string) error {
	fs, bf := storeFlags(e, "diff", storesDiffHelp+"\n"+storeNameHelp+"\n")
	stat := fs.Bool("stat", false, "one line per changed path, with the lines added and deleted, instead of the diffs")
	out := addRawFlag(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError(e, "memstore stores diff: give two stores, A and B, each by name or ID (see 'memstore stores ls')")
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	var ids [2]string
	for i, ref := range pos {
		if ids[i], err = c.resolveStore(ctx, ref, true); err != nil {
			return err
		}
	}
	js, err := c.diffStores(ctx, out(), ids[0], ids[1], *stat)
	if err != nil || !c.json {
		return err
	}
	return printJSON(e.stdout, js)
}

// diffStores compares store fromID with store toID and prints the
// changes as stores diff does: with --json nothing, the result being
// returned to print; a table of counts with stat; otherwise each
// change's unified diff to w; a summary on standard error. The content
// of one change at a time is held.
func (c *conn) diffStores(ctx context.Context, w io.Writer, fromID, toID string, stat bool) (*storeDiffJSON, error) {
	d, err := storediff.Compare(ctx, c, c.caller, fromID, toID)
	if err != nil {
		return nil, err
	}
	js := storeDiffJSON{From: httpapi.NewStoreJSON(d.From), To: httpapi.NewStoreJSON(d.To), Changes: []storeChangeJSON{}, Same: d.Same}
	tw := newTable(c.e.stdout)
	counts := map[storediff.Kind]int{}
	var added, deleted int
	for _, ch := range d.Changes {
		t, err := d.Text(ctx, c, c.caller, ch)
		if err != nil {
			return nil, err
		}
		counts[ch.Kind]++
		added += t.Added
		deleted += t.Deleted
		switch {
		case c.json:
			j := storeChangeJSON{Path: ch.Path, Kind: string(ch.Kind), Added: t.Added, Deleted: t.Deleted, Binary: t.Binary}
			if ch.From != nil {
				j.FromMemoryID, j.FromSHA256 = ch.From.ID, ch.From.ContentSHA256
			}
			if ch.To != nil {
				j.ToMemoryID, j.ToSHA256 = ch.To.ID, ch.To.ContentSHA256
			}
			if !stat {
				j.Diff = t.Diff
			}
			js.Changes = append(js.Changes, j)
		case stat:
			counts := fmt.Sprintf("+%d -%d", t.Added, t.Deleted)
			if t.Binary {
				counts = "binary"
			}
			row(tw, string(ch.Kind), ch.Path, counts)
		default:
			if _, err := io.WriteString(w, t.Diff); err != nil {
				return nil, err
			}
		}
	}
	if c.json {
		return &js, nil
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	if len(d.Changes) == 0 {
		fmt.Fprintf(c.e.stderr, "no differences: %s and %s hold the same %d memories\n", cell(d.From.Name), cell(d.To.Name), d.Same)
	} else {
		fmt.Fprintf(c.e.stderr, "%d changed, %d added, %d removed (%d lines added, %d deleted); %d paths alike\n",
			counts[storediff.Changed], counts[storediff.Added], counts[storediff.Removed], added, deleted, d.Same)
	}
	return &js, nil
}
