// Package loadgen drives a memstore server with a mix of memory store
// requests from many concurrent clients and reports throughput and latency
// percentiles: the engine of `memstore bench`.
//
// It speaks plain HTTP with a keep-alive connection per client, and reads
// only the fields it needs from responses, so that the figures measure the
// server rather than the generator.
package loadgen

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The mixes of requests.
const (
	MixRead  = "read"  // retrieve a random memory
	MixWrite = "write" // per client: create a memory, update it, delete it
	// MixIngest: per client, create a memory of varied text and update it
	// with other text, keeping it: the store grows, and search indexes
	// every memory written.
	MixIngest = "ingest"
	MixList   = "list"  // walk the store's memories 100 at a time, from the start again at the end
	MixMixed  = "mixed" // 80% read, 10% list, 10% write
	// MixSearch: search the store for one to three words of prose, the
	// text it seeds, drawn as prose draws them: common words more often.
	MixSearch = "search"
)

// Mixes lists the mixes, for help texts and validation.
var Mixes = []string{MixRead, MixWrite, MixIngest, MixList, MixMixed, MixSearch}

// Config is one run.
type Config struct {
	URL         string // the server's base URL
	APIKey      string
	Concurrency int           // clients, each with one connection
	Duration    time.Duration // measured time, after seeding
	Mix         string
	// StoreID is the store to use; "" makes a throwaway store, deleted at
	// the end.
	StoreID string
	// Stores spreads the clients of the write and ingest mixes over this
	// many throwaway stores, client i writing to store i mod Stores, so
	// that writes to different stores can be told from writes to one (a
	// backend orders each store's writes); 0 or 1 is one store, at most
	// Concurrency. The memories seeded go to the first.
	Stores int
	// Memories is how many memories to seed before measuring (in a
	// throwaway store, or added to StoreID's).
	Memories int
	// ContentBytes is the size of each memory's content.
	ContentBytes int
	// SearchMode is the mode of each search of the search mix (lexical,
	// semantic or hybrid, checked by the server); "" sends none, for the
	// server's default.
	SearchMode string
	// Progress, when set, is told about seeding now and then.
	Progress func(done, total int)
	// TLS configures https connections; nil uses the system's roots.
	TLS *tls.Config
}

// Op is one kind of request, as reported.
type Op string

// The kinds of request.
const (
	OpRetrieve Op = "retrieve"
	OpCreate   Op = "create"
	OpUpdate   Op = "update"
	OpDelete   Op = "delete"
	OpList     Op = "list"
	OpSearch   Op = "search"
)

// Ops are the kinds of request, in the order reports list them.
var Ops = []Op{OpRetrieve, OpCreate, OpUpdate, OpDelete, OpList, OpSearch}

// Stats is what one kind of request did during the run.
type Stats struct {
	Op        Op             `json:"op"`
	Requests  int            `json:"requests"`
	PerSecond float64        `json:"requests_per_second"`
	P50       time.Duration  `json:"p50_ns"`
	P99       time.Duration  `json:"p99_ns"`
	P999      time.Duration  `json:"p999_ns"`
	Max       time.Duration  `json:"max_ns"`
	Errors    map[string]int `json:"errors,omitempty"` // by status (or "network")
}

// Report is the outcome of a run: one Stats for all requests and one per
// kind.
type Report struct {
	Mix         string        `json:"mix"`
	Concurrency int           `json:"concurrency"`
	Stores      int           `json:"stores"`
	Duration    time.Duration `json:"duration_ns"`
	Memories    int           `json:"memories"`
	Total       Stats         `json:"total"`
	Ops         []Stats       `json:"ops"`
}

// sample is one request's outcome.
type sample struct {
	op     Op
	took   time.Duration
	status int // 0 for a network error
}

// Run seeds the store, then runs the mix for cfg.Duration and reports.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if !slices.Contains(Mixes, cfg.Mix) {
		return nil, fmt.Errorf("unknown mix %q (want one of %s)", cfg.Mix, strings.Join(Mixes, ", "))
	}
	if cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.Memories < 0 || cfg.ContentBytes < 0 {
		return nil, fmt.Errorf("concurrency must be at least 1, duration positive, memories and content size not negative")
	}
	if cfg.Memories == 0 && (cfg.Mix == MixRead || cfg.Mix == MixMixed) {
		return nil, fmt.Errorf("the %s mix reads memories: seed at least one", cfg.Mix)
	}
	if cfg.SearchMode != "" && cfg.Mix != MixSearch {
		return nil, fmt.Errorf("a search mode applies to the search mix only, not to the %s mix", cfg.Mix)
	}
	if cfg.Stores > 1 && (cfg.StoreID != "" || (cfg.Mix != MixWrite && cfg.Mix != MixIngest)) {
		return nil, fmt.Errorf("several stores are for the write and ingest mixes, on throwaway stores: leave out the store, or ask for one")
	}
	if cfg.Stores < 0 || cfg.Stores > cfg.Concurrency {
		return nil, fmt.Errorf("stores must be between 1 and the concurrency (%d), not %d", cfg.Concurrency, cfg.Stores)
	}
	if cfg.Memories == 0 && cfg.StoreID == "" && cfg.Mix == MixSearch {
		return nil, fmt.Errorf("the search mix searches memories: seed at least one, or give a store that has some")
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	stores := []string{cfg.StoreID}
	if cfg.StoreID == "" {
		cn := c.conn()
		defer cn.Close()
		stores = nil
		name := "memstore bench " + time.Now().UTC().Format(time.RFC3339)
		for i := range max(cfg.Stores, 1) {
			var s struct{ ID string }
			if i > 0 {
				name = fmt.Sprintf("%s (%d)", name, i+1)
			}
			if err := cn.do(ctx, "POST", "/v1/memory_stores", map[string]any{"name": name}, &s); err != nil {
				return nil, fmt.Errorf("create a throwaway store: %w", err)
			}
			stores = append(stores, s.ID)
			defer cn.do(context.WithoutCancel(ctx), "DELETE", "/v1/memory_stores/"+s.ID, nil, nil)
		}
	}
	memories := func(store string) string { return "/v1/memory_stores/" + store + "/memories" }
	base := memories(stores[0])
	// Paths unique to this run, so that runs can add to one store.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	search := base + "/search?"
	if cfg.SearchMode != "" {
		search += "mode=" + url.QueryEscape(cfg.SearchMode) + "&"
	}
	if cfg.Mix == MixSearch {
		// One search first, before seeding: a server or a mode that
		// refuses searches fails the run at once, rather than after
		// minutes of seeding or at every request of it.
		cn := c.conn()
		err := cn.do(ctx, "GET", search+"q=memstore", nil, nil)
		cn.Close()
		switch {
		case err != nil && cfg.SearchMode != "":
			return nil, fmt.Errorf("the server refused a search of mode %q (%w): check the mode, and that the server has an embedding model for semantic and hybrid search", cfg.SearchMode, err)
		case err != nil:
			return nil, fmt.Errorf("the server refused a search (%w): it does not serve the search mix", err)
		}
	}

	ids, err := seed(ctx, c, base, run, cfg)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	results := make([][]sample, cfg.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn := c.conn()
			defer cn.Close()
			results[w] = (&worker{c: cn, base: memories(stores[w%len(stores)]), search: search, ids: ids, id: w, tag: run, mix: cfg.Mix, content: content(cfg.ContentBytes)}).run(ctx)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	return report(cfg, len(ids), elapsed, results), nil
}

// seed creates cfg.Memories memories with all clients and returns their
// IDs.
func seed(ctx context.Context, c *client, base, run string, cfg Config) ([]string, error) {
	ids := make([]string, cfg.Memories)
	var (
		mu   sync.Mutex
		done int
		next = make(chan int)
		errs = make(chan error, cfg.Concurrency)
		wg   sync.WaitGroup
	)
	for g := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn := c.conn()
			defer cn.Close()
			// The search mix seeds prose, for its queries to find.
			rng := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			body := content(cfg.ContentBytes)
			for i := range next {
				if cfg.Mix == MixSearch {
					body = prose(rng, cfg.ContentBytes)
				}
				var m struct{ ID string }
				path := fmt.Sprintf("/bench/%s/%03d/%06d.md", run, i%1000, i)
				if err := cn.do(ctx, "POST", base, map[string]any{"path": path, "content": body}, &m); err != nil {
					errs <- fmt.Errorf("seed %s: %w", path, err)
					return
				}
				ids[i] = m.ID
				mu.Lock()
				done++
				if cfg.Progress != nil && (done%1000 == 0 || done == cfg.Memories) {
					cfg.Progress(done, cfg.Memories)
				}
				mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for i := range cfg.Memories {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return ids, err
}

func content(n int) string {
	return strings.Repeat("memstore bench line\n", n/20+1)[:n]
}

// worker is one client's loop.
type worker struct {
	c       *conn
	base    string
	search  string // the search's path, up to its query
	ids     []string
	id      int
	mix     string
	content string
	tag     string // names this run's memories apart from other runs'
	n       int    // requests made, to name created memories
	page    string // list cursor
}

func (w *worker) run(ctx context.Context) []sample {
	rng := rand.New(rand.NewPCG(uint64(w.id), uint64(time.Now().UnixNano())))
	out := make([]sample, 0, 1<<14)
	for ctx.Err() == nil {
		mix := w.mix
		if mix == MixMixed {
			switch r := rng.IntN(10); {
			case r < 8:
				mix = MixRead
			case r == 8:
				mix = MixList
			default:
				mix = MixWrite
			}
		}
		switch mix {
		case MixRead:
			out = w.time(ctx, out, OpRetrieve, "GET", w.base+"/"+w.ids[rng.IntN(len(w.ids))], nil, nil)
		case MixList:
			var p struct {
				NextPage *string `json:"next_page"`
			}
			q := "?limit=100"
			if w.page != "" {
				q += "&page=" + url.QueryEscape(w.page)
			}
			out = w.time(ctx, out, OpList, "GET", w.base+q, nil, &p)
			w.page = ""
			if p.NextPage != nil {
				w.page = *p.NextPage
			}
		case MixWrite:
			out = w.writeCycle(ctx, out)
		case MixIngest:
			out = w.ingestCycle(ctx, out, rng)
		case MixSearch:
			out = w.time(ctx, out, OpSearch, "GET", w.search+"q="+url.QueryEscape(query(rng)), nil, nil)
		}
	}
	return out
}

// writeCycle creates a memory, updates it and deletes it, so that a long
// write run leaves the store's size (and its memory limit) unchanged.
func (w *worker) writeCycle(ctx context.Context, out []sample) []sample {
	w.n++
	var m struct{ ID string }
	path := fmt.Sprintf("/bench-write/%s/%d/%d.md", w.tag, w.id, w.n)
	out = w.time(ctx, out, OpCreate, "POST", w.base, map[string]any{"path": path, "content": w.content}, &m)
	if m.ID == "" {
		return out
	}
	out = w.time(ctx, out, OpUpdate, "POST", w.base+"/"+m.ID, map[string]any{"content": w.content + strconv.Itoa(w.n)}, nil)
	// The delete runs even after the deadline, so that nothing is left.
	return w.time(context.WithoutCancel(ctx), out, OpDelete, "DELETE", w.base+"/"+m.ID, nil, nil)
}

// ingestCycle creates a memory of varied text and updates it with
// other text of the same size.
func (w *worker) ingestCycle(ctx context.Context, out []sample, rng *rand.Rand) []sample {
	w.n++
	var m struct{ ID string }
	path := fmt.Sprintf("/bench-ingest/%s/%d/%d.md", w.tag, w.id, w.n)
	out = w.time(ctx, out, OpCreate, "POST", w.base, map[string]any{"path": path, "content": prose(rng, len(w.content))}, &m)
	if m.ID == "" {
		return out
	}
	return w.time(ctx, out, OpUpdate, "POST", w.base+"/"+m.ID, map[string]any{"content": prose(rng, len(w.content))}, nil)
}

// vocabulary is prose's words: 2,000 made-up words of 2 to 10 letters.
var vocabulary = func() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 2000)
	for i := range words {
		b := make([]byte, 2+rng.IntN(9))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	return words
}()

// prose makes n bytes of text: words of the vocabulary, the common ones
// far more often than the rare ones, as in writing, in lines of about
// 60 bytes.
func prose(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	line := 0
	for b.Len() < n {
		w := word(rng)
		switch {
		case line == 0:
		case line+len(w) > 60:
			b.WriteByte('\n')
			line = 0
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()[:n]
}

// word draws a word of the vocabulary: the square of a uniform number
// favours the first words.
func word(rng *rand.Rand) string {
	f := rng.Float64()
	return vocabulary[int(f*f*float64(len(vocabulary)))]
}

// query makes a search query of one to three words of prose.
func query(rng *rand.Rand) string {
	q := word(rng)
	for range rng.IntN(3) {
		q += " " + word(rng)
	}
	return q
}

func (w *worker) time(ctx context.Context, out []sample, op Op, method, path string, body, into any) []sample {
	t := time.Now()
	status, err := w.c.send(ctx, method, path, body, into)
	took := time.Since(t)
	if ctx.Err() != nil && err != nil {
		return out // cut short by the end of the run
	}
	return append(out, sample{op: op, took: took, status: status})
}

func report(cfg Config, memories int, elapsed time.Duration, results [][]sample) *Report {
	r := &Report{Mix: cfg.Mix, Concurrency: cfg.Concurrency, Stores: max(cfg.Stores, 1), Duration: elapsed, Memories: memories}
	byOp := map[Op][]sample{}
	var all []sample
	for _, rs := range results {
		all = append(all, rs...)
		for _, s := range rs {
			byOp[s.op] = append(byOp[s.op], s)
		}
	}
	r.Total = stats("all", all, elapsed)
	for _, op := range Ops {
		if len(byOp[op]) > 0 {
			r.Ops = append(r.Ops, stats(op, byOp[op], elapsed))
		}
	}
	return r
}

func stats(op Op, ss []sample, elapsed time.Duration) Stats {
	st := Stats{Op: op, Requests: len(ss)}
	if len(ss) == 0 {
		return st
	}
	st.PerSecond = float64(len(ss)) / elapsed.Seconds()
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = s.took
		if s.status < 200 || s.status > 299 {
			if st.Errors == nil {
				st.Errors = map[string]int{}
			}
			k := "network"
			if s.status != 0 {
				k = strconv.Itoa(s.status)
			}
			st.Errors[k]++
		}
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	st.P50, st.P99, st.P999, st.Max = q(0.50), q(0.99), q(0.999), d[len(d)-1]
	return st
}
