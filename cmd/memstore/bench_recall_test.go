package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		"recall@1  0.667\n", "recall@5  0.667\n", "MRR       0.667\n",
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
	var rep recall.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output %q: %v", stdout, err)
	}
	if rep.Docs != 3 || len(rep.Recall) != 2 || rep.Recall[0].K != 5 || rep.Recall[1].K != 10 || len(rep.Results) != 3 || rep.Results[0].Rank != 1 || rep.Results[2].Rank != 0 {
		t.Errorf("report %+v", rep)
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
		{[]string{"--docs", docs}, 2, "--docs and --queries are required"},
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
