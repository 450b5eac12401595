package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memstore/memstore/internal/loadgen"
)

const benchHelp = `Usage: memstore bench --url URL --api-key KEY [flags]

Measures a memstore server: seeds memories, then runs many concurrent
clients for a while and reports requests per second and latency
percentiles (p50, p99, p99.9), overall and per kind of request.

Mixes:
  read    retrieve random memories
  write   each client creates a memory, updates it and deletes it, so the
          store's size stays the same
  ingest  each client creates a memory of varied text and updates it with
          other text, keeping it: the store grows, and search indexes every
          memory written (needs --max-memories-per-store 0 on the server)
  list    walk the store 100 memories per page, from the start again at the end
  mixed   80% read, 10% list, 10% write
  search  search the store for one to three words of the varied text it
          seeds; with --store, the words of memories seeded so before;
          --search-mode lexical, semantic or hybrid sends that mode with
          each search (semantic and hybrid need a server with an
          embedding model; without the flag, the server's default)

Unless --store is given, the run uses a throwaway store, deleted at the end.
Seeding many memories needs a server with a large enough
--max-memories-per-store (0 for unlimited).

The URL and key may also come from MEMSTORE_URL and MEMSTORE_API_KEY.

'memstore bench recall' measures the quality of search instead: see
'memstore bench recall --help'.
`

func runBench(ctx context.Context, e env, args []string) error {
	if len(args) > 0 && args[0] == "recall" {
		return runBenchRecall(ctx, e, args[1:])
	}
	fs := newFlags(e, "bench", benchHelp)
	var cfg loadgen.Config
	bf := &backendFlags{cmd: "bench", kinds: withKey}
	fs.StringVar(&bf.url, "url", "", "base `URL` of the server (such as http://127.0.0.1:6366)")
	fs.StringVar(&bf.apiKey, "api-key", "", "API `KEY`")
	fs.IntVar(&cfg.Concurrency, "concurrency", 32, "concurrent clients")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to measure")
	fs.StringVar(&cfg.Mix, "mix", loadgen.MixRead, "`MIX` of requests: "+strings.Join(loadgen.Mixes, ", "))
	fs.StringVar(&cfg.StoreID, "store", "", "use this store (`NAME` or ID) instead of a throwaway one")
	fs.IntVar(&cfg.Memories, "memories", 100, "memories to seed before measuring")
	fs.IntVar(&cfg.ContentBytes, "content-bytes", 1024, "size of each memory's content")
	fs.StringVar(&cfg.SearchMode, "search-mode", "", "`MODE` of each search of the search mix: lexical, semantic or hybrid (default: the server's)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore bench: unexpected argument %q", fs.Arg(0))
	}
	// The clients are loadgen's own, many of them, on the selected server.
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	cfg.URL, cfg.APIKey = sel.url, sel.secret
	if cfg.StoreID != "" {
		c, err := sel.open(ctx, e)
		if err != nil {
			return err
		}
		cfg.StoreID, err = c.resolveStore(ctx, cfg.StoreID, false)
		c.Close()
		if err != nil {
			return err
		}
	}
	start := time.Now()
	cfg.Progress = func(done, total int) {
		fmt.Fprintf(e.stderr, "seeded %d/%d memories (%.0f/s)\n", done, total, float64(done)/time.Since(start).Seconds())
	}
	fmt.Fprintf(e.stderr, "seeding %d memories, then %s of %s with %d clients\n", cfg.Memories, cfg.Duration, cfg.Mix, cfg.Concurrency)
	r, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(newJSONWriter(e.raw()))
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(e.stdout, "%s mix, %d clients, %s, %d memories\n\n", r.Mix, r.Concurrency, r.Duration.Round(time.Millisecond), r.Memories)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\trequests\treq/s\tp50\tp99\tp99.9\tmax\terrors\t")
	for _, s := range append(r.Ops, r.Total) {
		errs := "0"
		if len(s.Errors) > 0 {
			var parts []string
			for k, n := range s.Errors {
				parts = append(parts, fmt.Sprintf("%d×%s", n, k))
			}
			errs = strings.Join(parts, " ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", s.Op, s.Requests, s.PerSecond, ms(s.P50), ms(s.P99), ms(s.P999), ms(s.Max), errs)
	}
	return tw.Flush()
}

// ms prints a latency in milliseconds with three decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }
