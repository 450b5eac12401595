package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/recall"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// bigShare: generated-100 asks one of every bigShare of its questions,
// spread over every conversation, old and new, with all of its memories
// loaded (every term as common), so that a run under the race detector
// stays within a minute.
const bigShare = 5

// corpora are the query sets the ranking is held to: the generated
// conversations, and the hand-written and generated chats of testdata.
func corpora(t *testing.T) map[string][2]any {
	gen, genQ, err := recall.Generate(1, 24).Docs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]any{"generated": {gen, genQ}}
	if !testing.Short() {
		// Enough conversations that a person's name and a fact's words
		// are in more memories than a search reads of each term
		// (searchtext.Window).
		big, bigQ, err := recall.Generate(1, 100).Docs()
		if err != nil {
			t.Fatal(err)
		}
		var asked []recall.Query
		for i := 0; i < len(bigQ); i += bigShare {
			asked = append(asked, bigQ[i])
		}
		out["generated-100"] = [2]any{big, asked}
	}
	for _, name := range []string{"chat", "synth"} {
		docs := readFile(t, filepath.Join("testdata", name+"_docs.jsonl"), func(r *os.File) ([]recall.Doc, error) { return recall.ReadDocs(r) })
		qs := readFile(t, filepath.Join("testdata", name+"_queries.jsonl"), func(r *os.File) ([]recall.Query, error) { return recall.ReadQueries(r) })
		out[name] = [2]any{docs, qs}
	}
	return out
}

// TestCompareWithBM25: on every query set, memstore's ranking finds at
// least what plain BM25 finds (recall@5, recall@10 and MRR), each without
// and with conversation context; and on the generated conversations,
// context finds more than without.
func TestCompareWithBM25(t *testing.T) {
	all := corpora(t)
	for _, name := range []string{"generated", "generated-100", "chat", "synth"} {
		c, ok := all[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each in its own database
			docs, qs := c[0].([]recall.Doc), c[1].([]recall.Query)
			systems, err := recall.Compare(context.Background(), memstore.NewCore(sqlitetest.Open(t, sqlite.Options{})), docs, qs, recall.Options{Caller: loader})
			if err != nil {
				t.Fatal(err)
			}
			by := map[string]*recall.Report{}
			for _, s := range systems {
				key := fmt.Sprintf("%s/%v", s.Name, s.Context)
				by[key] = s.Report
				t.Logf("%-16s recall@5 %.3f  recall@10 %.3f  MRR %.3f", key, s.Recall[0].Recall, s.Recall[1].Recall, s.MRR)
			}
			for _, ctx := range []bool{false, true} {
				m, b := by[fmt.Sprintf("memstore/%v", ctx)], by[fmt.Sprintf("bm25/%v", ctx)]
				for i := range m.Recall {
					if m.Recall[i].Recall < b.Recall[i].Recall {
						t.Errorf("context %v: memstore's recall@%d %.3f < plain BM25's %.3f", ctx, m.Recall[i].K, m.Recall[i].Recall, b.Recall[i].Recall)
					}
				}
				if m.MRR < b.MRR {
					t.Errorf("context %v: memstore's MRR %.3f < plain BM25's %.3f", ctx, m.MRR, b.MRR)
				}
			}
			if name == "generated" {
				without, with := by["memstore/false"], by["memstore/true"]
				if with.Recall[1].Recall <= without.Recall[1].Recall || with.MRR <= without.MRR {
					t.Errorf("memstore with context: recall@10 %.3f, MRR %.3f; without: %.3f, %.3f; want more with it",
						with.Recall[1].Recall, with.MRR, without.Recall[1].Recall, without.MRR)
				}
			}
		})
	}
}
