package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Hybrid search: the lexical ranking and the semantic one, each of its
// best FusionCandidates, fused by normalised score (Fuse). Rank-only
// fusion (reciprocal rank fusion) was measured against it and found
// less on average: see docs/search.md.

// Fusion of hybrid search.
const (
	// DefaultSemanticWeight is the semantic ranking's weight in hybrid
	// search's fusion, the lexical one's being 1 minus it; memstore
	// serve --search-semantic-weight changes it. Chosen by measurement
	// with memstore bench recall (docs/search.md): the best mean
	// recall@10 over the benchmarks, and the least loss against lexical
	// search alone on any of them.
	DefaultSemanticWeight = 0.2
	// FusionCandidates is how many of each ranking's best memories hybrid
	// search fuses: the pool the page is taken from. Measured: with 50 or
	// 30, answers found by meaning alone, deep in the semantic ranking,
	// were lost (docs/search.md).
	FusionCandidates = MaxSearchLimit
	// QueryEmbeddingTimeout is how long a search waits for the model to
	// embed its query: a model that hangs fails a semantic search after
	// it, and a default one answers lexically, rather than holding the
	// request for the model client's own timeout.
	QueryEmbeddingTimeout = 5 * time.Second
	// MaxSemanticSearchesPerWorkspace bounds a workspace's semantic and
	// hybrid searches in progress in a server, each of which holds the
	// model while it embeds the query, then a read connection and the
	// cores while it scans the vectors: so that one workspace's flood
	// leaves the model, the connections (SQLite reads on four) and the
	// cores to the others. A search past it waits for its turn, within
	// QueryEmbeddingTimeout, and is then refused (ERateLimited) or, in
	// the default mode, answers lexically.
	MaxSemanticSearchesPerWorkspace = 2
)

// ValidateSemanticWeight checks a weight of the semantic ranking in
// hybrid search (EInvalid): 0 to 1.
func ValidateSemanticWeight(w float64) error {
	if !(w >= 0 && w <= 1) {
		return Errorf(EInvalid, "the semantic weight of hybrid search is %v; it must be between 0 and 1 (--search-semantic-weight)", w)
	}
	return nil
}

// WithSemanticWeight sets the semantic ranking's weight in hybrid
// search's fusion (DefaultSemanticWeight without it); w must pass
// ValidateSemanticWeight.
func WithSemanticWeight(w float64) CoreOption {
	return func(co *Core) { co.semanticWeight = w }
}

// Fuse merges a lexical ranking (each result's Relevance its score) and a
// semantic one (each result's Score its cosine similarity), best first,
// into one of at most limit results: each score normalised over its list
// to 0-1, the highest 1 and, for the lexical scores, 0 itself 0 (so that
// the last of a few words' matches keeps its worth), for the cosines the
// list's lowest; the fused score is the weighted sum, semanticWeight
// times the semantic one plus 1 minus it times the lexical one, a memory
// missing from a list having 0 there.
// Results are one memory when they have the same Memory.ID; a fused
// result keeps its lexical result's Memory, Relevance and Snippet, with
// the fused score as Score. Ties keep the lexical ranking's order, then
// the semantic one's.
func Fuse(lexical, semantic []SearchResult, semanticWeight float64, limit int) []SearchResult {
	lex := normalised(lexical, func(r SearchResult) float64 { return r.Relevance }, true)
	sem := normalised(semantic, func(r SearchResult) float64 { return r.Score }, false)
	out := make([]SearchResult, 0, len(lexical)+len(semantic))
	at := make(map[string]int, len(lexical)+len(semantic))
	fused := make([]bool, 0, cap(out)) // out[i] has its semantic score
	for i, r := range lexical {
		k := r.Memory.ID
		if _, dup := at[k]; dup {
			continue
		}
		at[k] = len(out)
		r.Score = (1 - semanticWeight) * lex[i]
		out, fused = append(out, r), append(fused, false)
	}
	for i, r := range semantic {
		k := r.Memory.ID
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			r.Score, r.Relevance = 0, 0
			out, fused = append(out, r), append(fused, false)
		}
		if !fused[j] {
			out[j].Score += semanticWeight * sem[i]
			fused[j] = true
		}
	}
	slices.SortStableFunc(out, func(a, b SearchResult) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(len(out), limit)]
}

// normalised is each result's score, by score, scaled to 0-1 over rs:
// the highest 1, and 0 the lowest, or 0 itself when fromZero (for scores
// whose 0 means no match), every one 1 when they are all equal.
func normalised(rs []SearchResult, score func(SearchResult) float64, fromZero bool) []float64 {
	out := make([]float64, len(rs))
	if len(rs) == 0 {
		return out
	}
	lo, hi := score(rs[0]), score(rs[0])
	for _, r := range rs {
		lo, hi = min(lo, score(r)), max(hi, score(r))
	}
	if fromZero {
		lo = min(lo, 0)
	}
	for i, r := range rs {
		out[i] = 1
		if hi > lo {
			out[i] = (score(r) - lo) / (hi - lo)
		}
	}
	return out
}

// searchMode is the mode a query runs in: its own, or the server's
// default (hybrid with an embedding model, lexical without). A semantic
// or hybrid search on a server without a model is refused (EInvalid),
// as is a page of a default search that is not lexical.
func (co *Core) searchMode(q SearchQuery) (string, error) {
	_, stores := co.b.(VectorStorage)
	semantic := co.embedder != nil && stores
	switch {
	case q.Mode == "" && semantic && q.Page != "":
		return "", Errorf(EInvalid, "this server's default search is %s, which answers one page; leave page out, or ask for mode %s to page", ModeHybrid, ModeLexical)
	case q.Mode == "" && semantic:
		return ModeHybrid, nil
	case q.Mode == "":
		return ModeLexical, nil
	case q.Mode != ModeLexical && !semantic:
		return "", Errorf(EInvalid, "%s search is off: this server has no embedding model; ask for mode %s, or start memstore serve with --embed-url and --embed-model, or --embed-model-file (docs/search.md)", q.Mode, ModeLexical)
	}
	return q.Mode, nil
}

// searchIn runs a checked query in mode, in c's workspace: the lexical
// search of the backend, the semantic one of its vectors, or both fused.
// A default search (q.Mode "") that is hybrid answers lexically when the
// model fails to embed the query, or the workspace has its share of
// semantic searches in progress; one that asked for hybrid fails
// (EOverloaded, ERateLimited), as a semantic one does.
func (co *Core) searchIn(ctx context.Context, c *Caller, storeIDs []string, q SearchQuery, mode string) (Page[SearchResult], error) {
	if mode == ModeLexical {
		return co.b.SearchMemories(ctx, c.WorkspaceID, storeIDs, q)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	var page Page[SearchResult]
	if mode == ModeSemantic {
		near, err := co.nearest(ctx, c.WorkspaceID, storeIDs, q, limit)
		if err != nil {
			return page, err
		}
		page.Items, err = co.b.ReadResults(ctx, c.WorkspaceID, q, near, nil)
		return page, err
	}
	// The candidates are ranked alone, by ID, and only the page's
	// memories are read, with the snippets of those the words found.
	lq := q
	lq.Limit, lq.Mode = FusionCandidates, ModeLexical
	lexical, err := co.b.RankMemories(ctx, c.WorkspaceID, storeIDs, lq)
	if err != nil {
		return page, err
	}
	near, err := co.nearest(ctx, c.WorkspaceID, storeIDs, q, FusionCandidates)
	if code := ErrorCode(err); q.Mode == "" && (code == EOverloaded || code == ERateLimited) {
		near, err = nil, nil
	}
	if err != nil {
		return page, err
	}
	fused := Fuse(lexical, near, co.semanticWeight, limit)
	lexicalIDs := make(map[string]bool, len(lexical))
	for _, r := range lexical {
		lexicalIDs[r.Memory.ID] = true
	}
	snippet := make([]bool, len(fused))
	for i, r := range fused {
		snippet[i] = lexicalIDs[r.Memory.ID]
	}
	page.Items, err = co.b.ReadResults(ctx, c.WorkspaceID, q, fused, snippet)
	return page, err
}

// nearest embeds q.Text and returns the limit memories of the stores
// nearest to it (VectorStorage.NearestMemories), each store searched
// once however often it is named; EOverloaded when the model fails to
// embed it within QueryEmbeddingTimeout, ERateLimited when the workspace
// has MaxSemanticSearchesPerWorkspace in progress.
func (co *Core) nearest(ctx context.Context, workspaceID string, storeIDs []string, q SearchQuery, limit int) ([]SearchResult, error) {
	// The wait for the workspace's turn counts in the model's time.
	start := time.Now()
	ectx, cancel := context.WithTimeout(ctx, QueryEmbeddingTimeout)
	defer cancel()
	release, err := co.semantic.take(ectx, workspaceID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := Errorf(ERateLimited, "too many semantic searches at once: workspace %s may run %d at a time (memstore.MaxSemanticSearchesPerWorkspace), and none ended within %v; %s, or ask for mode %s",
			workspaceID, MaxSemanticSearchesPerWorkspace, QueryEmbeddingTimeout, WaitAndRetry(semanticRetry), ModeLexical)
		e.Retry, e.RetryAfter = true, semanticRetry
		return nil, e
	}
	defer release() // after the scan too
	waited := time.Since(start)
	vecs, err := co.embedder.Embed(ectx, []string{q.Text})
	if err != nil || len(vecs) != 1 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A search that waited long for its turn left the model little
		// of the time: the message says which part took it.
		return nil, Errorf(EOverloaded, "semantic search is unavailable: the embedding model did not embed the query within %v, of which %v went waiting for this workspace's turn; try again later, or ask for mode %s",
			QueryEmbeddingTimeout, waited.Round(time.Millisecond), ModeLexical)
	}
	return co.b.(VectorStorage).NearestMemories(ctx, workspaceID, storeIDs, co.embedder.Model(), vecs[0], q.PathPrefix, limit)
}

// semanticRetry is the wait a search refused for its workspace's share is
// told to retry after: a semantic search takes milliseconds, or the
// model's time.
const semanticRetry = time.Second
