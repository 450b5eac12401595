package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/recall"
)

const benchRecallHelp = `Usage: memstore bench recall --docs DOCS.jsonl --queries QUERIES.jsonl [--k 5,10] [--misses] [--json]

Measures the quality of memstore's search. Loads the documents into a
fresh store of a throwaway database, runs each query, and reports
recall@k (the share of a query's relevant documents among its first k
results, averaged over the queries) and MRR (the mean, over the queries,
of 1 divided by the rank of the first relevant result; 0 when none is in
the first k, for the largest k).

  DOCS.jsonl     one document per line:
                 {"id": "d1", "path": "/notes/a.md", "content": "..."}
                 (the path may be left out: "/" and the id)
  QUERIES.jsonl  one query per line, with the ids of the documents it
                 should find: {"query": "...", "relevant": ["d1", "d7"]}
`

func runBenchRecall(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "bench recall", benchRecallHelp)
	docsFile := fs.String("docs", "", "documents, as JSON lines (`FILE`)")
	queriesFile := fs.String("queries", "", "queries and their relevant documents, as JSON lines (`FILE`)")
	ks := fs.String("k", "5,10", "the cutoffs of recall@k, comma-separated (`LIST`, each 1-100)")
	misses := fs.Bool("misses", false, "also list the queries whose first result is not relevant")
	asJSON := fs.Bool("json", false, "print the report as JSON, with every query's results")
	if err := parse(fs, args); err != nil {
		return err
	}
	var cutoffs []int
	for _, s := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 || k > memstore.MaxSearchLimit {
			return usageError(e, "memstore bench recall: --k %q: give numbers from 1 to %d, such as 5,10", *ks, memstore.MaxSearchLimit)
		}
		cutoffs = append(cutoffs, k)
	}
	switch {
	case fs.NArg() > 0:
		return usageError(e, "memstore bench recall: unexpected argument %q", fs.Arg(0))
	case *docsFile == "" || *queriesFile == "":
		return usageError(e, "memstore bench recall: --docs and --queries are required")
	}
	docs, err := readJSONLines(*docsFile, recall.ReadDocs)
	if err != nil {
		return err
	}
	queries, err := readJSONLines(*queriesFile, recall.ReadQueries)
	if err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "memstore-recall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := openDatabase(ctx, filepath.Join(dir, "recall.db"), dbOptions{create: true})
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintf(e.stderr, "loading %d documents, then running %d queries\n", len(docs), len(queries))
	rep, err := recall.Run(ctx, memstore.NewCore(db), docs, queries, recall.Options{
		Caller: &memstore.Caller{WorkspaceID: "recall", Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_recall"}},
		Ks:     cutoffs,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "%d documents, %d queries\n", rep.Docs, rep.Queries)
	tw := newTable(e.stdout)
	for _, r := range rep.Recall {
		fmt.Fprintf(tw, "recall@%d\t%.3f\n", r.K, r.Recall)
	}
	fmt.Fprintf(tw, "MRR\t%.3f\n", rep.MRR)
	if err := tw.Flush(); err != nil {
		return err
	}
	if !*misses {
		return nil
	}
	fmt.Fprintln(e.stdout, "\nqueries whose first result is not relevant (rank 0: none in the results):")
	tw = newTable(e.stdout)
	row(tw, "rank", "query", "relevant", "found")
	for _, r := range rep.Results {
		if r.Rank != 1 {
			row(tw, strconv.Itoa(r.Rank), shorten(r.Query, 60), strings.Join(r.Relevant, " "), shorten(strings.Join(r.Found, " "), 60))
		}
	}
	return tw.Flush()
}

// readJSONLines reads a file with read, naming the file in its error.
func readJSONLines[T any](name string, read func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
