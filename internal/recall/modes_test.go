package recall_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/internal/recall"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func TestReciprocalRankFusion(t *testing.T) {
	got := recall.ReciprocalRankFusion([]string{"a", "b", "c"}, []string{"c", "d", "a"})
	// a: 1/61 + 1/63; c: 1/63 + 1/61; b: 1/62; d: 1/62: ties in the order
	// first seen.
	if want := []string{"a", "c", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("fused %q, want %q", got, want)
	}
}

// TestHybridOnGloVe holds hybrid search, with real word vectors (GloVe,
// pooled as a model2vec model) and the default weight, to what the
// weight was chosen for: on the hand-written and generated chats of
// testdata, at least lexical search's recall@10 and above semantic
// search's, with and without conversation context. (The comparison with
// rank-only fusion, which needs the larger generated conversations, is
// memstore bench recall's: docs/search.md.)
func TestHybridOnGloVe(t *testing.T) {
	model, err := embed.LoadModel2Vec(embedtest.GloveModel(t, filepath.Join("..", "..", "embed", "testdata", "glove")))
	if err != nil {
		t.Fatal(err)
	}
	all := corpora(t)
	for _, name := range []string{"chat", "synth"} {
		t.Run(name, func(t *testing.T) {
			docs, qs := all[name].docs, all[name].queries
			db := sqlitetest.Open(t, sqlite.Options{})
			core := memstore.NewCore(db, memstore.WithEmbedder(model))
			opts := recall.Options{Caller: loader}
			systems, err := recall.Compare(context.Background(), core, docs, qs, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := embedindex.New(embedindex.Config{Storage: db, Embedder: model}).Drain(t.Context()); err != nil {
				t.Fatal(err)
			}
			more, err := recall.CompareModes(context.Background(), core, systems[0].StoreID, docs, qs, opts)
			if err != nil {
				t.Fatal(err)
			}
			at10 := map[string]float64{}
			for _, s := range append(systems, more...) {
				key := fmt.Sprintf("%s/%s/%v", s.Name, s.Mode, s.Context)
				at10[key] = s.Recall[1].Recall
				t.Logf("%-24s recall@5 %.3f  recall@10 %.3f  MRR %.3f", key, s.Recall[0].Recall, s.Recall[1].Recall, s.MRR)
			}
			for _, ctx := range []bool{false, true} {
				h, l, s := at10[fmt.Sprintf("memstore/hybrid/%v", ctx)], at10[fmt.Sprintf("memstore//%v", ctx)], at10["memstore/semantic/false"]
				if h < l || h <= s {
					t.Errorf("context %v: hybrid recall@10 %.3f, lexical %.3f, semantic %.3f: want hybrid at least lexical and above semantic", ctx, h, l, s)
				}
			}
		})
	}
}
