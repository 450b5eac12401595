package recall

import (
	"context"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/bm25"
	"github.com/memstore/memstore/internal/searchtext"
)

// A System is one ranking measured by Compare.
type System struct {
	Name    string `json:"name"`           // "memstore", "bm25" or "rrf" (CompareModes)
	Mode    string `json:"mode,omitempty"` // memstore's search mode; "" for lexical
	Context bool   `json:"context"`        // turns ranked with their neighbours
	*Report
}

// Compare measures memstore's search against plain BM25 (package bm25)
// on the same documents and queries, each without and with conversation
// context: memstore's with SearchQuery.Conversation, BM25's by adding
// each document's neighbours' scores as searchtext.ContextScores does. The
// documents are loaded once, into a new store left in place, in order:
// both rankings list the later of equal documents first.
func Compare(ctx context.Context, b Backend, docs []Doc, queries []Query, opts Options) ([]System, error) {
	opts.Context = false
	plain, err := Run(ctx, b, docs, queries, opts)
	if err != nil {
		return nil, err
	}
	ks, docs, err := prepare(docs, queries, opts)
	if err != nil {
		return nil, err
	}
	out := []System{{Name: "memstore", Report: plain}}
	withContext, err := evaluate(queries, ks, searcher(ctx, b, opts.Caller, plain.StoreID, docs, ks[len(ks)-1], memstore.SearchQuery{Conversation: new(true)}))
	if err != nil {
		return nil, err
	}
	out = append(out, System{Name: "memstore", Context: true, Report: withContext})
	ix := bm25.New()
	paths := make([]string, len(docs))
	for i, d := range docs {
		ix.Add(d.Content) // the text alone: plain BM25 knows no paths
		paths[i] = d.Path
	}
	for _, context := range []bool{false, true} {
		rep, err := evaluate(queries, ks, func(query string) ([]string, error) {
			scores := ix.Scores(query)
			if context {
				scores = searchtext.ContextScores(paths, scores)
			}
			var found []string
			for _, d := range bm25.Top(scores, ks[len(ks)-1]) {
				found = append(found, docs[d].ID)
			}
			return found, nil
		})
		if err != nil {
			return nil, err
		}
		rep.Docs = len(docs)
		out = append(out, System{Name: "bm25", Context: context, Report: rep})
	}
	for i := range out[1:] {
		out[i+1].StoreID, out[i+1].Docs = plain.StoreID, len(docs)
	}
	return out, nil
}
