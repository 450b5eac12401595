package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/internal/recall"
)

// writeRecallFiles writes a small benchmark: three documents and three
// queries, two found first and one not found at all.
func writeRecallFiles(tb testing.TB) (docs, queries string) {
	tb.Helper()
	dir := tb.TempDir()
	docs, queries = filepath.Join(dir, "docs.jsonl"), filepath.Join(dir, "queries.jsonl")
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	write(docs, `{"id":"d1","path":"/chat/1.md","content":"Ana: we adopted a beagle called Rocket"}
{"id":"d2","path":"/chat/2.md","content":"Ben: my flight to Lisbon leaves on 2024-10-12"}
{"id":"d3","content":"Ana: the bakery reopened on Monday"}
`)
	write(queries, `{"query":"What is the name of Ana's dog? Rocket?","relevant":["d1"]}
{"query":"When does Ben fly to Lisbon?","relevant":["d2"]}
{"query":"Which cake did they eat?","relevant":["d3"]}
`)
	return docs, queries
}

func TestBenchRecall(t *testing.T) {
	clearEnv(t)
	docs, queries := writeRecallFiles(t)
	code, stdout, stderr := run(t, "", "bench", "recall", "--docs", docs, "--queries", queries, "--k", "1,5", "--misses")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"3 documents, 3 queries\n",
		"ranking   context  recall@1  recall@5  MRR\n",
		"memstore  off      0.667     0.667     0.667\n",
		"memstore  on       0.667     0.667     0.667\n",
		"bm25      off      ",
		"bm25      on       ",
		"Which cake did they eat?", // the miss, listed
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "When does Ben") {
		t.Errorf("a query found first is listed among the misses:\n%s", stdout)
	}

	code, stdout, stderr = run(t, "", "bench", "recall", "--docs", docs, "--queries", queries, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var out struct {
		Docs    int
		Systems []recall.System
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("--json output %q: %v", stdout, err)
	}
	if out.Docs != 3 || len(out.Systems) != 4 {
		t.Fatalf("report %+v", out)
	}
	for i, s := range out.Systems {
		if name, ctx := []string{"memstore", "memstore", "bm25", "bm25"}[i], i%2 == 1; s.Name != name || s.Context != ctx {
			t.Errorf("system %d: %s, context %v; want %s, %v", i, s.Name, s.Context, name, ctx)
		}
	}
	rep := out.Systems[0]
	if len(rep.Recall) != 2 || rep.Recall[0].K != 5 || rep.Recall[1].K != 10 || len(rep.Results) != 3 || rep.Results[0].Rank != 1 || rep.Results[2].Rank != 0 {
		t.Errorf("report %+v", rep)
	}
}

// With an embedding model, bench recall also measures semantic and
// hybrid search and rank fusion, on the same store.
func TestBenchRecallModes(t *testing.T) {
	clearEnv(t)
	docs, queries := writeRecallFiles(t)
	emb := embedtest.New(t, 64)
	code, stdout, stderr := run(t, "", "bench", "recall", "--docs", docs, "--queries", queries, "--json",
		"--embed-url", emb.BaseURL(), "--embed-model", "word-hash", "--search-semantic-weight", "0.5")
	var out struct{ Systems []recall.System }
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Systems) != 9 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want nine systems", code, stdout, stderr)
	}
	var names []string
	for _, s := range out.Systems {
		names = append(names, fmt.Sprintf("%s %s %v", s.Name, s.Mode, s.Context))
	}
	want := "memstore  false,memstore  true,bm25  false,bm25  true,memstore semantic false,memstore hybrid false,memstore hybrid true,rrf  false,rrf  true"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("systems %s, want %s", got, want)
	}
	// The cake question shares no word with its answer: words do not
	// find it; semantic search ranks every embedded document, so it does.
	if r := out.Systems[4].Results[2]; r.Rank == 0 || out.Systems[0].Results[2].Rank != 0 {
		t.Errorf("semantic search found %v for %q (rank %d); lexical rank %d", r.Found, r.Query, r.Rank, out.Systems[0].Results[2].Rank)
	}
	if emb.Texts() < 3 {
		t.Errorf("the endpoint embedded %d texts, want the 3 documents at least", emb.Texts())
	}
	code, stdout, _ = run(t, "", "bench", "recall", "--docs", docs, "--queries", queries, "--embed-url", emb.BaseURL(), "--embed-model", "word-hash")
	if code != 0 || !strings.Contains(stdout, "memstore hybrid    on ") || !strings.Contains(stdout, "rrf                off ") {
		t.Errorf("table: exit %d:\n%s", code, stdout)
	}
	code, _, stderr = run(t, "", "bench", "recall", "--docs", docs, "--queries", queries, "--search-semantic-weight", "2")
	if code != 2 || !strings.Contains(stderr, "memstore bench recall: the semantic weight of hybrid search is 2") {
		t.Errorf("a bad weight: exit %d, stderr %q", code, stderr)
	}
}

// TestBenchRecallConversations: generated conversations, and a file of
// conversations, each measured against plain BM25 with and without
// context.
func TestBenchRecallConversations(t *testing.T) {
	clearEnv(t)
	code, stdout, stderr := run(t, "", "bench", "recall", "--generate", "4", "--seed", "7")
	if code != 0 || !strings.Contains(stdout, "documents, 72 queries\n") || strings.Count(stdout, "memstore  ") != 2 || strings.Count(stdout, "bm25  ") != 2 {
		t.Errorf("--generate 4: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	file := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(file, []byte(`{"conversations": [{"id": "c1", "turns": [
		{"speaker": "Ana", "date": "2024-03-12", "text": "We adopted a dog!"},
		{"speaker": "Ben", "text": "What breed?"},
		{"speaker": "Ana", "text": "A beagle called Biscuit."}]}],
		"questions": [{"question": "Which dog did they adopt?", "evidence": [{"conversation": "c1", "turn": 3}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "", "bench", "recall", "--conversations", file, "--json")
	var out struct{ Systems []recall.System }
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Systems) != 4 {
		t.Fatalf("--conversations: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The answer shares no word with the question but a neighbour does:
	// each ranking finds it with context only (memstore's, as the turn
	// beside a match).
	for _, s := range out.Systems {
		if r := s.Results[0]; r.Relevant[0] != "/conversations/c1/0003.md" || (r.Rank > 0) != s.Context {
			t.Errorf("%s, context %v: found %v, rank %d", s.Name, s.Context, r.Found, r.Rank)
		}
	}
}

func TestBenchRecallErrors(t *testing.T) {
	clearEnv(t)
	docs, queries := writeRecallFiles(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"x\",\"content\":\"y\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.jsonl")
	if err := os.WriteFile(unknown, []byte(`{"query":"dog","relevant":["d9"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"--docs", docs}, 2, "--docs and --queries are required together"},
		{nil, 2, "give one of --docs and --queries, --conversations or --generate"},
		{[]string{"--generate", "3", "--conversations", docs}, 2, "give one of"},
		{[]string{"--generate", "1001"}, 2, "--generate 1001: give 1 to 1000"},
		{[]string{"--conversations", bad}, 1, "bad.jsonl: not a JSON object of conversations"},
		{[]string{"--docs", docs, "--queries", queries, "--k", "0"}, 2, "--k"},
		{[]string{"--docs", docs, "--queries", queries, "--k", "5,x"}, 2, "--k"},
		{[]string{"--docs", docs, "--queries", queries, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--docs", filepath.Join(dir, "missing.jsonl"), "--queries", queries}, 1, "missing.jsonl"},
		{[]string{"--docs", bad, "--queries", queries}, 1, "bad.jsonl: line 2: not a JSON object"},
		{[]string{"--docs", docs, "--queries", unknown}, 1, `relevant document "d9" is not among the documents`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"bench", "recall"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr containing %q", code, stderr, tt.code, tt.wantStderr)
			}
		})
	}
	// The help of bench names the subcommand.
	if _, stdout, _ := run(t, "", "bench", "--help"); !strings.Contains(stdout, "memstore bench recall") {
		t.Errorf("bench --help does not mention bench recall: %s", stdout)
	}
}
