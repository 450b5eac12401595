package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

Unless --store is given, the run uses a throwaway store, deleted at the end;
--stores N spreads the write and ingest mixes' clients over N of them
(client i on store i mod N): each store's writes are ordered one at a
time, so this shows what writes to many stores do at once.
Seeding many memories needs a server with a large enough
--max-memories-per-store (0 for unlimited).

The URL and key may also come from MEMSTORE_URL and MEMSTORE_API_KEY.

Comparing: --compare URL runs the same mix against a second server too,
in alternating rounds (--rounds, 3 by default), each round on a fresh
throwaway store of each, and prints the medians of the rounds of both
and their ratios, memstore's figure divided by the other's. The
yardstick, a minimal server kept in memstore's source for this, gives
the floor of what a server of these requests costs: on SQLite with
memstore's driver and settings, or over a map in memory. It does not
search. From a checkout:
  go run ./internal/yardstick/cmd/yardstick --engine sqlite|map --db FILE --addr 127.0.0.1:6399

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
	fs.IntVar(&cfg.Stores, "stores", 1, "with the write and ingest mixes, spread the clients over this many throwaway stores")
	fs.IntVar(&cfg.Memories, "memories", 100, "memories to seed before measuring")
	fs.IntVar(&cfg.ContentBytes, "content-bytes", 1024, "size of each memory's content")
	fs.StringVar(&cfg.SearchMode, "search-mode", "", "`MODE` of each search of the search mix: lexical, semantic or hybrid (default: the server's)")
	var cmp benchCompare
	fs.StringVar(&cmp.url, "compare", "", "base `URL` of a second server to run the same mix against, side by side")
	fs.StringVar(&cmp.apiKey, "compare-api-key", "", "API `KEY` of the --compare server (default: the --api-key)")
	fs.IntVar(&cmp.rounds, "rounds", 3, "with --compare, the rounds on each server, alternating")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore bench: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case cmp.url == "" && (set["rounds"] || set["compare-api-key"]):
		return usageError(e, "memstore bench: --rounds and --compare-api-key go with --compare URL")
	case cmp.url != "" && cfg.StoreID != "":
		return usageError(e, "memstore bench: --compare runs every round on a fresh throwaway store of each server: leave out --store")
	case cmp.url != "" && cmp.rounds < 1:
		return usageError(e, "memstore bench: --rounds must be at least 1, not %d", cmp.rounds)
	}
	if cmp.url != "" {
		if err := checkBaseURL(cmp.url); err != nil {
			return usageError(e, "memstore bench: --compare %q %v", cmp.url, err)
		}
	}
	// The clients are loadgen's own, many of them, on the selected server.
	sel, err := bf.selectBackend(e)
	if err != nil {
		return err
	}
	cfg.URL, cfg.APIKey = sel.url, sel.secret
	if cmp.url != "" {
		if cmp.apiKey == "" {
			cmp.apiKey = cfg.APIKey
		}
		return cmp.run(ctx, e, cfg, *asJSON)
	}
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
	stores := ""
	if r.Stores > 1 {
		stores = fmt.Sprintf(" over %d stores", r.Stores)
	}
	fmt.Fprintf(e.stdout, "%s mix, %d clients%s, %s, %d memories\n\n", r.Mix, r.Concurrency, stores, r.Duration.Round(time.Millisecond), r.Memories)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\trequests\treq/s\tp50\tp99\tp99.9\tmax\terrors\t")
	for _, s := range append(r.Ops, r.Total) {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", s.Op, s.Requests, s.PerSecond, ms(s.P50), ms(s.P99), ms(s.P999), ms(s.Max), errorCounts(s))
	}
	return tw.Flush()
}

// errorCounts prints the failed requests of s by status, "0" for none.
func errorCounts(s loadgen.Stats) string {
	if len(s.Errors) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Errors)) {
		parts = append(parts, fmt.Sprintf("%d×%s", s.Errors[k], k))
	}
	return strings.Join(parts, " ")
}

func roundsText(n int) string {
	if n == 1 {
		return "1 round"
	}
	return strconv.Itoa(n) + " rounds"
}

// benchCompare is a run of bench --compare.
type benchCompare struct {
	url, apiKey string
	rounds      int
}

// compareReport is the outcome of bench --compare: each server's rounds
// and their medians, and the ratios of the medians, memstore's divided
// by the other's.
type compareReport struct {
	Mix         string          `json:"mix"`
	Concurrency int             `json:"concurrency"`
	Duration    time.Duration   `json:"duration_ns"` // of each round on each server
	Memories    int             `json:"memories"`
	Rounds      int             `json:"rounds"`
	Memstore    compareSide     `json:"memstore"`
	Compare     compareSide     `json:"compare"`
	Ratios      []loadgen.Ratio `json:"ratios"`
}

type compareSide struct {
	URL    string            `json:"url"`
	Median *loadgen.Report   `json:"median"`
	Runs   []*loadgen.Report `json:"runs"`
}

// run measures both servers in alternating rounds, the first server
// first in odd rounds and second in even ones, so that a drift of the
// machine weighs on both alike.
func (c benchCompare) run(ctx context.Context, e env, cfg loadgen.Config, asJSON bool) error {
	rep := compareReport{
		Mix: cfg.Mix, Concurrency: cfg.Concurrency, Duration: cfg.Duration, Memories: cfg.Memories, Rounds: c.rounds,
		Memstore: compareSide{URL: cfg.URL}, Compare: compareSide{URL: c.url},
	}
	type server struct {
		flag, url, key string
		side           *compareSide
	}
	servers := []server{{"--url", cfg.URL, cfg.APIKey, &rep.Memstore}, {"--compare", c.url, c.apiKey, &rep.Compare}}
	fmt.Fprintf(e.stderr, "%s of %s of %s with %d clients on each server, each seeding %d memories\n", roundsText(c.rounds), cfg.Duration, cfg.Mix, cfg.Concurrency, cfg.Memories)
	for round := 1; round <= c.rounds; round++ {
		for i := range servers {
			s := servers[(i+round+1)%2]
			run := cfg
			run.URL, run.APIKey = s.url, s.key
			r, err := loadgen.Run(ctx, run)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					err = fmt.Errorf("%w: is the server running?", err)
				}
				return fmt.Errorf("round %d on the server of %s %s: %w", round, s.flag, s.url, err)
			}
			s.side.Runs = append(s.side.Runs, r)
			t := r.Total
			fmt.Fprintf(e.stderr, "round %d/%d, %s: %.0f requests/s, p50 %s, p99 %s, p99.9 %s, errors %s\n",
				round, c.rounds, s.url, t.PerSecond, ms(t.P50), ms(t.P99), ms(t.P999), errorCounts(t))
		}
	}
	rep.Memstore.Median, rep.Compare.Median = loadgen.Median(rep.Memstore.Runs), loadgen.Median(rep.Compare.Runs)
	rep.Ratios = loadgen.Ratios(rep.Memstore.Median, rep.Compare.Median)
	if asJSON {
		enc := json.NewEncoder(newJSONWriter(e.raw()))
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(e.stdout, "%s mix, %d clients, %d memories, %s of %s on each server\n", rep.Mix, rep.Concurrency, rep.Memories, roundsText(rep.Rounds), rep.Duration)
	fmt.Fprintf(e.stdout, "memstore: %s\ncompare:  %s\n", rep.Memstore.URL, rep.Compare.URL)
	fmt.Fprintf(e.stdout, "Medians of the rounds; ratio is memstore's divided by compare's (above 1: more requests/s, or a longer latency).\n\n")
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tserver\treq/s\tp50\tp99\tp99.9\terrors\t")
	for _, r := range rep.Ratios {
		for _, side := range []struct {
			name string
			r    *loadgen.Report
		}{{"memstore", rep.Memstore.Median}, {"compare", rep.Compare.Median}} {
			s := side.r.Total
			if i := slices.IndexFunc(side.r.Ops, func(s loadgen.Stats) bool { return s.Op == r.Op }); i >= 0 {
				s = side.r.Ops[i]
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t\n", r.Op, side.name, s.PerSecond, ms(s.P50), ms(s.P99), ms(s.P999), errorCounts(s))
		}
		fmt.Fprintf(tw, "%s\tratio\t%.2f\t%.2f\t%.2f\t%.2f\t\t\n", r.Op, r.PerSecond, r.P50, r.P99, r.P999)
	}
	return tw.Flush()
}

// ms prints a latency in milliseconds with three decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }
