package memdir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/memdir"
)

func recallDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	writeFiles(tb, dir, map[string]string{
		"MEMORY.md":                  "- [Deploys](deploy_friday.md) — deploy day\n",
		"deploy_friday.md":           topic("Deploys", "we deploy on Fridays with the blue-green switch", "project"),
		"feedback_testing.md":        topic("Testing", "integration tests must hit a real database", "feedback"),
		"user_role.md":               topic("Role", "the user is a data engineer who knows Postgres well", "user"),
		"dashboards.md":              topic("Grafana", "latency dashboards for the API live in Grafana", "reference"),
		"notes.md":                   "---\nname: Notes\ndescription: miscellany\ntype: user\n---\nThe staging cluster is called kestrel.\n",
		"team/style.md":              topic("Style", "the team formats SQL in upper case", "project"),
		"pastry.md":                  topic("Pastry", "the café on the corner sells ÉCLAIRS", "reference"),
		"logs/2026/01/2026-01-01.md": "- 09:00 deploy deploy deploy\n",
	})
	return dir
}

// TestRecallRanking checks what each query finds first, and that the
// description counts for more than the name.
func TestRecallRanking(t *testing.T) {
	dir := recallDir(t)
	tests := []struct {
		query string
		opts  memdir.RecallOptions
		first string // "" when nothing should match
	}{
		{"when do we deploy?", memdir.RecallOptions{}, "deploy_friday.md"},
		{"Deploying on friday", memdir.RecallOptions{}, "deploy_friday.md"},
		{"database tests", memdir.RecallOptions{}, "feedback_testing.md"},
		{"postgres", memdir.RecallOptions{}, "user_role.md"},
		{"grafana latency", memdir.RecallOptions{}, "dashboards.md"},
		{"kestrel", memdir.RecallOptions{}, ""},                   // only in a body
		{"kestrel", memdir.RecallOptions{Body: true}, "notes.md"}, // found with --body
		{"SQL upper case", memdir.RecallOptions{}, ""},            // team/ is left out
		{"SQL upper case", memdir.RecallOptions{Team: true}, "team/style.md"},
		{"the of and", memdir.RecallOptions{}, "error"}, // only stop words
		{"zebra", memdir.RecallOptions{}, ""},
		{"Éclair at the CAFÉ", memdir.RecallOptions{}, "pastry.md"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := memdir.Recall(t.Context(), dir, tt.query, tt.opts)
			if tt.first == "error" {
				if err == nil {
					t.Fatalf("no error; hits %+v", hits)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.first == "" {
				if len(hits) != 0 {
					t.Fatalf("hits %+v, want none", hits)
				}
				return
			}
			if len(hits) == 0 || hits[0].File != tt.first {
				t.Fatalf("hits %+v, want %s first", hits, tt.first)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("hits out of order: %+v", hits)
				}
			}
		})
	}
}

// TestRecallDescriptionWeight checks that a word in the description
// outranks the same word in the name.
func TestRecallDescriptionWeight(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.md": topic("Kubernetes", "cluster notes", "project"),
		"b.md": topic("Cluster", "kubernetes notes", "project"),
	})
	hits, err := memdir.Recall(t.Context(), dir, "kubernetes", memdir.RecallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].File != "b.md" {
		t.Fatalf("hits %+v, want b.md (in the description) first", hits)
	}
}

// TestRecallNewest checks that only the 200 newest files are searched and
// that the limit holds.
func TestRecallNewest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 210 {
		files[fmt.Sprintf("m%03d.md", i)] = topic(fmt.Sprintf("Memory %d", i), "about the widget", "project")
	}
	writeFiles(t, dir, files)
	base := time.Now().Add(-300 * time.Hour)
	for i := range 210 {
		ts := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("m%03d.md", i)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	// The oldest file is the only one that says "gadget": out of reach.
	writeFiles(t, dir, map[string]string{"m000.md": topic("Memory 0", "about the gadget", "project")})
	if err := os.Chtimes(filepath.Join(dir, "m000.md"), base, base); err != nil {
		t.Fatal(err)
	}
	hits, err := memdir.Recall(t.Context(), dir, "gadget", memdir.RecallOptions{})
	if err != nil || len(hits) != 0 {
		t.Errorf("the 201st newest file was searched: %+v, %v", hits, err)
	}
	hits, err = memdir.Recall(t.Context(), dir, "widget", memdir.RecallOptions{Limit: 3})
	if err != nil || len(hits) != 3 {
		t.Fatalf("limit 3: %d hits, %v", len(hits), err)
	}
	// Equal scores: the newest first.
	if hits[0].File != "m209.md" || hits[1].File != "m208.md" {
		t.Errorf("equal scores not newest first: %s, %s", hits[0].File, hits[1].File)
	}
}

// TestRecallCap checks that a hit's content is capped at 200 lines and
// 4,096 bytes.
func TestRecallCap(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"lines.md": topic("Lines", "many lines", "project") + strings.Repeat("l\n", 300),
		"bytes.md": topic("Bytes", "many bytes", "project") + strings.Repeat("é", 3000),
		"small.md": topic("Small", "few lines", "project"),
	})
	for _, tt := range []struct {
		query string
		cut   bool
	}{{"many lines", true}, {"many bytes", true}, {"few", false}} {
		hits, err := memdir.Recall(t.Context(), dir, tt.query, memdir.RecallOptions{Limit: 1})
		if err != nil || len(hits) != 1 {
			t.Fatalf("%s: %+v, %v", tt.query, hits, err)
		}
		h := hits[0]
		if h.Truncated != tt.cut {
			t.Errorf("%s: truncated %v", tt.query, h.Truncated)
		}
		if n := strings.Count(h.Content, "\n"); n > memdir.RecallMaxLines || len(h.Content) > memdir.RecallMaxBytes {
			t.Errorf("%s: %d lines, %d bytes", tt.query, n, len(h.Content))
		}
		if !strings.HasPrefix(h.Content, "---\nname: ") {
			t.Errorf("%s: content %q", tt.query, h.Content[:20])
		}
	}
}

func TestCapContent(t *testing.T) {
	tests := []struct {
		name, text   string
		lines, bytes int
		want         string
		cut          bool
	}{
		{"short", "a\nb\n", 3, 100, "a\nb\n", false},
		{"exactly the lines", "a\nb\nc\n", 3, 100, "a\nb\nc\n", false},
		{"exactly the lines, no final LF", "a\nb\nc", 3, 100, "a\nb\nc", false},
		{"over the lines", "a\nb\nc\nd\n", 3, 100, "a\nb\nc\n", true},
		{"over the bytes, at a line end", "aaa\nbbb\nccc\n", 10, 9, "aaa\nbbb\n", true},
		{"over the bytes, one line", "ééééé", 10, 5, "éé", true},
	}
	for _, tt := range tests {
		got, cut := memdir.CapContent(tt.text, tt.lines, tt.bytes)
		if got != tt.want || cut != tt.cut {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, cut, tt.want, tt.cut)
		}
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		t    time.Time
		want string
	}{
		{now.Add(time.Hour), "today"},
		{now.Add(-23 * time.Hour), "today"},
		{now.Add(-25 * time.Hour), "yesterday"},
		{now.Add(-72 * time.Hour), "3 days ago"},
		{now.Add(-400 * 24 * time.Hour), "400 days ago"},
	}
	for _, tt := range tests {
		if got := memdir.Age(tt.t, now); got != tt.want {
			t.Errorf("Age(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

// benchWords are the words of benchTopics' files.
var benchWords = strings.Fields("deploy database cluster latency release incident review style tabs python golang schema backup dashboard alert budget roadmap customer onboarding migration")

// benchTopics is a directory of 2,000 topic files of benchWords, for the
// benchmarks of recall.
func benchTopics(b *testing.B) string {
	dir := b.TempDir()
	words := benchWords
	files := map[string]string{}
	for i := range 2000 {
		w1, w2, w3 := words[i%len(words)], words[(i/7)%len(words)], words[(i/31)%len(words)]
		files[fmt.Sprintf("topic_%04d.md", i)] = fmt.Sprintf("---\nname: %s %s %d\ndescription: how the team handles %s when %s meets %s\nmetadata:\n  type: project\n---\n%s\n",
			w1, w2, i, w1, w2, w3, strings.Repeat("Some body text about "+w3+" and more. ", 40))
	}
	writeFiles(b, dir, files)
	return dir
}

// BenchmarkRecall measures recall over 2,000 topic files (of which the
// newest 200 are searched), with and without their bodies.
func BenchmarkRecall(b *testing.B) {
	dir := benchTopics(b)
	for _, body := range []bool{false, true} {
		b.Run(fmt.Sprintf("body=%v", body), func(b *testing.B) {
			for b.Loop() {
				hits, err := memdir.Recall(b.Context(), dir, "how do we handle a database migration incident?", memdir.RecallOptions{Body: body})
				if err != nil || len(hits) == 0 {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}

// TestRecallSearchText checks that recall reads words as search does, with
// diacritics folded, and leaves out the stop words of prompts
// (searchtext.Prompts).
func TestRecallSearchText(t *testing.T) {
	dir := recallDir(t)
	writeFiles(t, dir, map[string]string{
		"sam.md":     topic("Sam", "Sam runs the on-call rota", "user"),
		"against.md": topic("Against", "arguments against the rewrite", "project"),
	})
	tests := []struct{ query, first string }{
		{"cafe eclair", "pastry.md"},             // folded, as "café" and "ÉCLAIRS"
		{"who is Sam?", "sam.md"},                // a name, not a form of "same"
		{"please make sure the thing works", ""}, // "works" alone matches nothing
		{"against", "against.md"},                // what a short prompt may be about
		{"why did she do it herself", "error"},   // stop words of search
		{"please make sure of it", "error"},      // the words of a request
	}
	for _, tt := range tests {
		hits, err := memdir.Recall(t.Context(), dir, tt.query, memdir.RecallOptions{})
		switch {
		case tt.first == "error":
			if !errors.Is(err, memdir.ErrEmptyQuery) {
				t.Errorf("%q: %v, hits %+v; want ErrEmptyQuery", tt.query, err, hits)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.query, err)
		case tt.first == "" && len(hits) != 0:
			t.Errorf("%q: hits %+v, want none", tt.query, hits)
		case tt.first != "" && (len(hits) == 0 || hits[0].File != tt.first):
			t.Errorf("%q: hits %+v, want %s first", tt.query, hits, tt.first)
		}
	}
}

// TestRecallConversation: with Conversation, a turn of a conversation
// (chats/NAME/0003.md) ranks with its neighbours, so the answer beside
// the turns that share the query's other word comes first, and a turn
// beside a match is found; topic files rank as without it.
func TestRecallConversation(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"chats/c1/0001.md": "Ana: we adopted a rescue dog from the shelter, finally a dog of our own\n",
		"chats/c1/0002.md": "Ben: a dog! what breed is the dog?\n",
		"chats/c1/0003.md": "Ana: a beagle called Biscuit, who sleeps all day long on the sofa\n",
		"chats/c2/0001.md": "Cem: beagle\n",
		"chats/c2/0002.md": "Dee: the weather is awful\n",
		"pets.md":          topic("Pets", "the beagle of the office", "reference"),
		"dogs.md":          topic("Dogs", "walking the office dog, a beagle, on Fridays", "reference"),
	})
	files := func(hits []memdir.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.File)
		}
		return out
	}
	rank := func(conv bool) []string {
		t.Helper()
		hits, err := memdir.Recall(t.Context(), dir, "dog beagle", memdir.RecallOptions{Limit: 10, Body: true, Conversation: conv})
		if err != nil {
			t.Fatal(err)
		}
		return files(hits)
	}
	before := func(got []string, a, b string) bool {
		i, j := slices.Index(got, a), slices.Index(got, b)
		return i >= 0 && j >= 0 && i < j
	}
	without, with := rank(false), rank(true)
	if before(without, "chats/c1/0003.md", "chats/c2/0001.md") {
		t.Fatalf("without context %q: the data does not tell context apart", without)
	}
	if !before(with, "chats/c1/0003.md", "chats/c2/0001.md") {
		t.Errorf("with context %q; want the answer above the lone beagle", with)
	}
	// A turn beside a match is found, below the matches.
	if i := slices.Index(with, "chats/c2/0002.md"); i < 0 || i < slices.Index(with, "chats/c2/0001.md") {
		t.Errorf("with context %q: want the turn beside the lone beagle found, below it", with)
	}
	if slices.Contains(without, "chats/c2/0002.md") {
		t.Errorf("without context %q: a turn without the words is found", without)
	}
	topics := func(got []string) []string {
		return slices.DeleteFunc(slices.Clone(got), func(f string) bool { return strings.HasPrefix(f, "chats/") })
	}
	if !slices.Equal(topics(with), topics(without)) {
		t.Errorf("topic files with context %q, without %q; want the same order", topics(with), topics(without))
	}
}
