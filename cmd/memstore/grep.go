package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

const grepHelp = `Usage: memstore grep QUERY [--store ID] [--prefix PATH] [--limit N] [--mode MODE] [--conversation[=false]]

Searches the live memories of a store, best first, and prints each match's
path, score and a snippet around it. The words of QUERY are matched with
their inflections ("deploy" finds "deploying"), and any run of three or
more characters is found inside words and identifiers too; a match in a
path counts more than one in the text.

--mode semantic finds memories by meaning, with the embedding model of a
server (memstore serve --embed-url or --embed-model-file); hybrid, a
server's default when it has one, ranks by both (docs/search.md).
--conversation ranks the memories as turns of conversations, each with
its neighbours, or not (=false); without it, the session and the store
say (see 'memstore stores --help').
`

func runGrep(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "grep", grepHelp+backendHelp)
	bf := addBackendFlags(fs, "grep", true)
	prefix := fs.String("prefix", "", "search only below `PATH` (e.g. /notes/)")
	limit := fs.Int("limit", memstore.DefaultSearchLimit, "print at most `N` matches (1-100)")
	mode := newChoice("", memstore.ModeLexical, memstore.ModeSemantic, memstore.ModeHybrid)
	fs.Var(mode, "mode", "match by words (lexical), by meaning (semantic) or both (hybrid); default the server's")
	conversation := fs.Bool("conversation", false, "rank the memories as turns of conversations, with their neighbours (=false: not); default: as the session and the store say")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError(e, "memstore grep: say what to look for: memstore grep QUERY")
	}
	if *limit < 1 || *limit > memstore.MaxSearchLimit {
		return usageError(e, "memstore grep: --limit must be from 1 to %d", memstore.MaxSearchLimit)
	}
	q := memstore.SearchQuery{Text: strings.Join(pos, " "), PathPrefix: *prefix, Limit: *limit, Mode: mode.value}
	if flagGiven(fs, "conversation") {
		q.Conversation = conversation
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	page, err := c.SearchMemories(ctx, c.caller, []string{storeID}, q)
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, page.Items, httpapi.NewSearchResultJSON)
	}
	if len(page.Items) == 0 {
		fmt.Fprintln(e.stderr, "no memory matches")
		return exitCode(1) // like grep
	}
	for _, r := range page.Items {
		fmt.Fprintf(e.stdout, "%s  (%s, score %s)\n", cell(r.Memory.Path), plural(int(r.Memory.ContentSize), "byte", "bytes"), strconv.FormatFloat(r.Score, 'f', 2, 64))
		if r.Snippet != "" {
			fmt.Fprintf(e.stdout, "    %s\n", cell(r.Snippet))
		}
	}
	return nil
}
