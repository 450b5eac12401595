// Package recall measures the retrieval quality of memstore's search: it
// loads documents into a fresh memory store, runs queries whose relevant
// documents are known, and reports recall@k and the mean reciprocal rank.
// It is the engine of `memstore bench recall`, and the measure by which
// the search's tokenization and ranking are tuned.
//
// Documents and queries are read as JSON lines:
//
//	{"id": "d1", "path": "/notes/a.md", "content": "..."}   (path optional: "/" + id)
//	{"query": "...", "relevant": ["d1", "d7"]}
package recall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/memstore/memstore"
)

// A Doc is a document to search.
type Doc struct {
	ID      string `json:"id"`
	Path    string `json:"path,omitempty"` // "" is "/" and the ID
	Content string `json:"content"`
}

// A Query is a search and the IDs of the documents it should find.
type Query struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// Backend is what the evaluation needs of memstore: a store to load the
// documents into, and the search.
type Backend interface {
	memstore.StoreService
	memstore.MemoryService
	memstore.SearchService
}

// Options configure a run.
type Options struct {
	// Caller makes the store in its workspace and writes the documents.
	Caller *memstore.Caller
	// Ks are the cutoffs of recall@k, 1-memstore.MaxSearchLimit; nil
	// means 5 and 10.
	Ks []int
	// Context ranks the documents as turns of conversations
	// (memstore.SearchQuery.Conversation).
	Context bool
}

// A Report is the outcome of a run.
type Report struct {
	StoreID string        `json:"store_id"` // where the documents were loaded
	Docs    int           `json:"docs"`
	Queries int           `json:"queries"`
	Recall  []RecallAt    `json:"recall"` // mean recall@k over the queries, by k
	MRR     float64       `json:"mrr"`    // mean reciprocal rank of the first relevant result, 0 past the largest k
	Results []QueryResult `json:"results"`
}

// RecallAt is the mean recall at one cutoff.
type RecallAt struct {
	K      int     `json:"k"`
	Recall float64 `json:"recall"`
}

// A QueryResult is what one query found.
type QueryResult struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	// Found are the IDs of the results, best first, up to the largest k.
	Found []string `json:"found"`
	// Rank is the position (from 1) of the first relevant result; 0 when
	// none is in Found.
	Rank int `json:"rank"`
}

// ReadDocs reads documents as JSON lines. Every document needs an ID,
// unique, and a path, unique, that memstore accepts.
func ReadDocs(r io.Reader) ([]Doc, error) {
	var docs []Doc
	ids, paths := map[string]bool{}, map[string]bool{}
	err := readLines(r, func(b []byte) error {
		var d Doc
		if err := strictUnmarshal(b, &d); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New(`"id" is missing`)
		}
		if ids[d.ID] {
			return fmt.Errorf("id %q is used twice", d.ID)
		}
		if d.Path == "" {
			d.Path = "/" + d.ID
		}
		if err := memstore.ValidatePath(d.Path); err != nil {
			return fmt.Errorf("document %q: %s", d.ID, memstore.ErrorMessage(err))
		}
		if paths[d.Path] {
			return fmt.Errorf("path %q is used twice", d.Path)
		}
		if err := memstore.ValidateContent(d.Content); err != nil {
			return fmt.Errorf("document %q: %s", d.ID, memstore.ErrorMessage(err))
		}
		ids[d.ID], paths[d.Path] = true, true
		docs = append(docs, d)
		return nil
	})
	return docs, err
}

// ReadQueries reads queries as JSON lines. Every query needs text that
// memstore accepts and at least one relevant document.
func ReadQueries(r io.Reader) ([]Query, error) {
	var qs []Query
	err := readLines(r, func(b []byte) error {
		var q Query
		if err := strictUnmarshal(b, &q); err != nil {
			return err
		}
		if err := memstore.ValidateSearchQuery(memstore.SearchQuery{Text: q.Query}); err != nil {
			return errors.New(memstore.ErrorMessage(err))
		}
		if len(q.Relevant) == 0 {
			return errors.New(`"relevant" lists no document`)
		}
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

// readLines calls fn for each line of r that is not blank, and adds the
// line number to its error.
func readLines(r io.Reader, fn func(b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 8*memstore.MaxContentBytes) // content escaped in JSON
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object of the expected fields: %v", err)
	}
	if d.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// Run loads docs into a new store of the workspace and runs the queries,
// each for one page of the largest k results, through memstore's search.
// The store is left in place (Report.StoreID): the caller decides
// whether to keep it. It fails when a query names a document that is not
// among docs.
func Run(ctx context.Context, b Backend, docs []Doc, queries []Query, opts Options) (*Report, error) {
	ks, docs, err := prepare(docs, queries, opts)
	if err != nil {
		return nil, err
	}
	s, err := b.CreateStore(ctx, opts.Caller, memstore.StoreCreate{Name: "recall benchmark"})
	if err != nil {
		return nil, err
	}
	if err := load(ctx, b, opts, s.ID, docs); err != nil {
		return nil, err
	}
	rep, err := evaluate(queries, ks, searcher(ctx, b, opts.Caller, s.ID, docs, ks[len(ks)-1], memstore.SearchQuery{Conversation: new(opts.Context)}))
	if err != nil {
		return nil, err
	}
	rep.StoreID, rep.Docs = s.ID, len(docs)
	return rep, nil
}

// prepare checks the cutoffs and the queries, and gives every document a
// path.
func prepare(docs []Doc, queries []Query, opts Options) ([]int, []Doc, error) {
	ks := slices.Clone(opts.Ks)
	if len(ks) == 0 {
		ks = []int{5, 10}
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if ks[0] < 1 || ks[len(ks)-1] > memstore.MaxSearchLimit {
		return nil, nil, fmt.Errorf("k must be between 1 and %d", memstore.MaxSearchLimit)
	}
	docs = slices.Clone(docs)
	ids := make(map[string]bool, len(docs))
	for i, d := range docs {
		if d.Path == "" {
			docs[i].Path = "/" + d.ID
		}
		ids[d.ID] = true
	}
	for i, q := range queries {
		for _, id := range q.Relevant {
			if !ids[id] {
				return nil, nil, fmt.Errorf("query %d (%q): relevant document %q is not among the documents", i+1, q.Query, id)
			}
		}
	}
	return ks, docs, nil
}

// A ranker returns the IDs of the documents a query finds, best first.
type ranker func(query string) ([]string, error)

// searcher ranks by memstore's search of the store, the first limit
// results of the query q with its text: with conversation context or not,
// in q's mode.
func searcher(ctx context.Context, b Backend, c *memstore.Caller, storeID string, docs []Doc, limit int, q memstore.SearchQuery) ranker {
	byPath := make(map[string]string, len(docs))
	for _, d := range docs {
		byPath[d.Path] = d.ID
	}
	return func(query string) ([]string, error) {
		sq := q // the queries run at once: each its own copy
		sq.Text, sq.Limit = query, limit
		page, err := b.SearchMemories(ctx, c, []string{storeID}, sq)
		if err != nil {
			return nil, err
		}
		found := []string{}
		for _, it := range page.Items {
			found = append(found, byPath[it.Memory.Path])
		}
		return found, nil
	}
}

// evaluate runs the queries through rank and measures what it finds,
// as many queries at once as the process has cores.
func evaluate(queries []Query, ks []int, rank ranker) (*Report, error) {
	rep := &Report{Results: make([]QueryResult, len(queries))}
	errs := make([]error, len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(queries); i = int(next.Add(1) - 1) {
				q := queries[i]
				found, err := rank(q.Query)
				if err != nil {
					errs[i] = fmt.Errorf("query %q: %w", q.Query, err)
					return
				}
				res := QueryResult{Query: q.Query, Relevant: q.Relevant, Found: found[:min(len(found), ks[len(ks)-1])]}
				for j, id := range res.Found {
					if slices.Contains(q.Relevant, id) {
						res.Rank = j + 1
						break
					}
				}
				rep.Results[i] = res
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep.measure(ks)
	return rep, nil
}

// measure sets the report's Queries, Recall at each of ks and MRR from
// its Results.
func (r *Report) measure(ks []int) {
	r.Queries, r.Recall, r.MRR = len(r.Results), nil, 0
	sums := make([]float64, len(ks))
	for _, res := range r.Results {
		if res.Rank > 0 {
			r.MRR += 1 / float64(res.Rank)
		}
		for j, k := range ks {
			hit := 0
			for _, id := range res.Found[:min(k, len(res.Found))] {
				if slices.Contains(res.Relevant, id) {
					hit++
				}
			}
			sums[j] += float64(hit) / float64(len(res.Relevant))
		}
	}
	for j, k := range ks {
		at := RecallAt{K: k}
		if r.Queries > 0 {
			at.Recall = sums[j] / float64(r.Queries)
		}
		r.Recall = append(r.Recall, at)
	}
	if r.Queries > 0 {
		r.MRR /= float64(r.Queries)
	}
}

// Subset is the report of the queries whose number (from 0) keep
// accepts, measured as if they alone had been asked.
func (r *Report) Subset(keep func(i int) bool) *Report {
	out := &Report{StoreID: r.StoreID, Docs: r.Docs}
	for i, res := range r.Results {
		if keep(i) {
			out.Results = append(out.Results, res)
		}
	}
	ks := make([]int, len(r.Recall))
	for j, at := range r.Recall {
		ks[j] = at.K
	}
	out.measure(ks)
	return out
}

// load creates the documents in the store one by one, in order, so that
// the ranking's ties (the newer first) are the same from run to run.
func load(ctx context.Context, b Backend, opts Options, storeID string, docs []Doc) error {
	for _, d := range docs {
		if _, err := b.CreateMemory(ctx, opts.Caller, storeID, memstore.MemoryCreate{Path: d.Path, Content: d.Content}); err != nil {
			return fmt.Errorf("load document %q: %w", d.ID, err)
		}
	}
	return nil
}
