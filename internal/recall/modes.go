package recall

import (
	"context"
	"slices"

	"github.com/memstore/memstore"
)

// RRFK is the constant of reciprocal rank fusion: a result at rank r
// (from 1) of a ranking adds 1/(RRFK+r), as the method was published.
const RRFK = 60

// CompareModes measures memstore's semantic and hybrid search on the
// store storeID, where Compare or Run loaded docs and whose memories the
// backend's embedding model has embedded: semantic search, hybrid search
// without and with conversation context, and, for comparison with
// hybrid's fusion by normalised score, reciprocal rank fusion ("rrf") of
// the same two rankings, memstore.FusionCandidates of each.
func CompareModes(ctx context.Context, b Backend, storeID string, docs []Doc, queries []Query, opts Options) ([]System, error) {
	ks, docs, err := prepare(docs, queries, opts)
	if err != nil {
		return nil, err
	}
	k := ks[len(ks)-1]
	var out []System
	add := func(name, mode string, context bool, rank ranker) error {
		rep, err := evaluate(queries, ks, rank)
		if err != nil {
			return err
		}
		rep.StoreID, rep.Docs = storeID, len(docs)
		out = append(out, System{Name: name, Mode: mode, Context: context, Report: rep})
		return nil
	}
	if err := add("memstore", memstore.ModeSemantic, false, searcher(ctx, b, opts.Caller, storeID, docs, k, memstore.SearchQuery{Mode: memstore.ModeSemantic})); err != nil {
		return nil, err
	}
	for _, context := range []bool{false, true} {
		if err := add("memstore", memstore.ModeHybrid, context, searcher(ctx, b, opts.Caller, storeID, docs, k, memstore.SearchQuery{Mode: memstore.ModeHybrid, Conversation: new(context)})); err != nil {
			return nil, err
		}
	}
	for _, context := range []bool{false, true} {
		lexical := searcher(ctx, b, opts.Caller, storeID, docs, memstore.FusionCandidates, memstore.SearchQuery{Mode: memstore.ModeLexical, Conversation: new(context)})
		semantic := searcher(ctx, b, opts.Caller, storeID, docs, memstore.FusionCandidates, memstore.SearchQuery{Mode: memstore.ModeSemantic})
		err := add("rrf", "", context, func(query string) ([]string, error) {
			l, err := lexical(query)
			if err != nil {
				return nil, err
			}
			s, err := semantic(query)
			if err != nil {
				return nil, err
			}
			fused := ReciprocalRankFusion(l, s)
			return fused[:min(k, len(fused))], nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReciprocalRankFusion merges rankings of IDs, best first: each ID scores
// the sum over the rankings of 1/(RRFK+rank), and the IDs are ordered by
// it, ties in the order first seen.
func ReciprocalRankFusion(rankings ...[]string) []string {
	score := map[string]float64{}
	var ids []string
	for _, r := range rankings {
		for i, id := range r {
			if _, seen := score[id]; !seen {
				ids = append(ids, id)
			}
			score[id] += 1 / float64(RRFK+i+1)
		}
	}
	slices.SortStableFunc(ids, func(a, b string) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	return ids
}
