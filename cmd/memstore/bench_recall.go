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
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/internal/recall"
)

const benchRecallHelp = `Usage: memstore bench recall (--docs DOCS.jsonl --queries QUERIES.jsonl | --conversations FILE.json | --generate N) [--k 5,10] [--misses] [--json]
                             [--embed-url URL --embed-model MODEL | --embed-model-file DIR] [--search-semantic-weight W]

Measures the quality of memstore's search against plain BM25 (Porter
stemming, k1 1.2, b 0.75, no stop words) on the same data, each without
and with conversation context (a turn ranked with its neighbours). Loads
the documents into a fresh store of a throwaway database, runs each
query, and reports recall@k (the share of a query's relevant documents
among its first k results, averaged over the queries) and MRR (the
mean, over the queries, of 1 divided by the rank of the first relevant
result; 0 when none is in the first k, for the largest k).

  DOCS.jsonl     one document per line:
                 {"id": "d1", "path": "/notes/a.md", "content": "..."}
                 (the path may be left out: "/" and the id)
  QUERIES.jsonl  one query per line, with the ids of the documents it
                 should find: {"query": "...", "relevant": ["d1", "d7"]}
  FILE.json      conversations, one memory a turn, and questions:
                 {"conversations": [{"id": "c1", "turns": [{"speaker": "Ana",
                   "date": "2024-03-12", "text": "..."}]}],
                  "questions": [{"question": "...",
                   "evidence": [{"conversation": "c1", "turn": 1}]}]}
                 (turns numbered from 1; speaker and date optional)
  --generate N   N generated conversations (1-1000), the same for the
                 same --seed

With an embedding model (the flags of memstore serve: --embed-url and
--embed-model, or --embed-model-file), the documents are embedded too,
and memstore's semantic search, its hybrid search (fused with the weight
--search-semantic-weight) and, for comparison, reciprocal rank fusion of
the same two rankings ("rrf") are measured as well (docs/search.md).
`

// maxGenerated bounds --generate: a thousand conversations are about
// 20,000 turns, minutes to load.
const maxGenerated = 1000

func runBenchRecall(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "bench recall", benchRecallHelp)
	docsFile := fs.String("docs", "", "documents, as JSON lines (`FILE`)")
	queriesFile := fs.String("queries", "", "queries and their relevant documents, as JSON lines (`FILE`)")
	convFile := fs.String("conversations", "", "conversations and questions, as one JSON object (`FILE`)")
	generate := fs.Int("generate", 0, "generate `N` conversations and their questions")
	seed := fs.Uint64("seed", 1, "the seed of --generate")
	ks := fs.String("k", "5,10", "the cutoffs of recall@k, comma-separated (`LIST`, each 1-100)")
	misses := fs.Bool("misses", false, "also list the queries whose first result by memstore is not relevant")
	asJSON := fs.Bool("json", false, "print the report as JSON, with every query's results")
	model := embedFlags{cmd: "bench recall"}
	model.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := applyEnv(e, "bench recall", fs, embedEnv); err != nil {
		return err
	}
	if err := model.resolve(e); err != nil {
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
	sources := 0
	for _, given := range []bool{*docsFile != "" || *queriesFile != "", *convFile != "", *generate != 0} {
		if given {
			sources++
		}
	}
	switch {
	case fs.NArg() > 0:
		return usageError(e, "memstore bench recall: unexpected argument %q", fs.Arg(0))
	case sources != 1:
		return usageError(e, "memstore bench recall: give one of --docs and --queries, --conversations or --generate")
	case (*docsFile != "") != (*queriesFile != ""):
		return usageError(e, "memstore bench recall: --docs and --queries are required together")
	case *generate < 0 || *generate > maxGenerated:
		return usageError(e, "memstore bench recall: --generate %d: give 1 to %d conversations", *generate, maxGenerated)
	}
	var docs []recall.Doc
	var queries []recall.Query
	var err error
	switch {
	case *generate > 0:
		docs, queries, err = recall.Generate(*seed, *generate).Docs()
	case *convFile != "":
		docs, queries, err = readConversations(*convFile)
	default:
		if docs, err = readJSONLines(*docsFile, recall.ReadDocs); err == nil {
			queries, err = readJSONLines(*queriesFile, recall.ReadQueries)
		}
	}
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
	core := newCore(db, dbOptions{embedder: model.embedder, semanticWeight: model.weight})
	opts := recall.Options{
		Caller: &memstore.Caller{WorkspaceID: "recall", Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_recall"}},
		Ks:     cutoffs,
	}
	systems, err := recall.Compare(ctx, core, docs, queries, opts)
	if err != nil {
		return err
	}
	if model.embedder != nil {
		vs, ok := db.(memstore.VectorStorage)
		if !ok {
			return errNoVectors
		}
		fmt.Fprintf(e.stderr, "embedding %d documents with %s\n", len(docs), model.embedder.Model())
		if err := embedindex.New(embedindex.Config{Storage: vs, Embedder: model.embedder}).Drain(ctx); err != nil {
			return fmt.Errorf("cannot embed the documents: %w", err)
		}
		more, err := recall.CompareModes(ctx, core, systems[0].StoreID, docs, queries, opts)
		if err != nil {
			return err
		}
		systems = append(systems, more...)
	}
	if *asJSON {
		return printJSON(e.stdout, struct {
			Docs    int             `json:"docs"`
			Queries int             `json:"queries"`
			Systems []recall.System `json:"systems"`
		}{len(docs), len(queries), systems})
	}
	fmt.Fprintf(e.stdout, "%d documents, %d queries\n", len(docs), len(queries))
	tw := newTable(e.stdout)
	head := []string{"ranking", "context"}
	for _, r := range systems[0].Recall {
		head = append(head, fmt.Sprintf("recall@%d", r.K))
	}
	row(tw, append(head, "MRR")...)
	for _, s := range systems {
		cells := []string{strings.TrimSpace(s.Name + " " + s.Mode), map[bool]string{false: "off", true: "on"}[s.Context]}
		for _, r := range s.Recall {
			cells = append(cells, fmt.Sprintf("%.3f", r.Recall))
		}
		row(tw, append(cells, fmt.Sprintf("%.3f", s.MRR))...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !*misses {
		return nil
	}
	fmt.Fprintln(e.stdout, "\nqueries whose first result by memstore is not relevant (rank 0: none in the results):")
	tw = newTable(e.stdout)
	row(tw, "rank", "query", "relevant", "found")
	for _, r := range systems[0].Results {
		if r.Rank != 1 {
			row(tw, strconv.Itoa(r.Rank), shorten(r.Query, 60), strings.Join(r.Relevant, " "), shorten(strings.Join(r.Found, " "), 60))
		}
	}
	return tw.Flush()
}

// readConversations reads a file of conversations, naming the file in
// its error.
func readConversations(name string) ([]recall.Doc, []recall.Query, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	docs, qs, err := recall.ReadConversations(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return docs, qs, nil
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
