package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// runSearch runs the conformance tests of memstore.SearchService. open
// returns a fresh, empty backend for each subtest.
//
// The tests rely on the contract of SearchQuery and SearchResult only:
// which memories are found, the order where the contract fixes it (a
// path match above a body match, more of the terms above fewer), never on
// score values.
func runSearch(t *testing.T, openSearch func(t *testing.T) Services) {
	runSearchCases(t, func(t *testing.T) searchBackend {
		b := openSearch(t)
		v := viewOf(b)
		v.search, v.sessions = b, b
		return v
	})
}

// runSearchCases runs the conformance tests of lexical search on the
// backends open returns.
func runSearchCases(t *testing.T, open func(t *testing.T) searchBackend) {
	t.Run("Ranking", func(t *testing.T) { testSearchRanking(t, open) })
	t.Run("Stemming", func(t *testing.T) { testSearchStemming(t, open) })
	t.Run("Substrings", func(t *testing.T) { testSearchSubstrings(t, open) })
	t.Run("Snippet", func(t *testing.T) { testSearchSnippet(t, open) })
	t.Run("Freshness", func(t *testing.T) { testSearchFreshness(t, open) })
	t.Run("OldMatches", func(t *testing.T) { testSearchOldMatches(t, open) })
	t.Run("Redaction", func(t *testing.T) { testSearchRedaction(t, open) })
	t.Run("PathPrefix", func(t *testing.T) { testSearchPathPrefix(t, open) })
	t.Run("Stores", func(t *testing.T) { testSearchStores(t, open) })
	t.Run("Paging", func(t *testing.T) { testSearchPaging(t, open) })
	t.Run("Validation", func(t *testing.T) { testSearchValidation(t, open) })
	t.Run("Unicode", func(t *testing.T) { testSearchUnicode(t, open) })
	t.Run("QuerySyntax", func(t *testing.T) { testSearchQuerySyntax(t, open) })
	t.Run("Questions", func(t *testing.T) { testSearchQuestions(t, open) })
	t.Run("Conversation", func(t *testing.T) { testSearchConversation(t, open) })
	t.Run("ConversationOption", func(t *testing.T) { testSearchConversationOption(t, open) })
}

func newSearchStore(t *testing.T, open func(*testing.T) searchBackend) (searchBackend, string) {
	t.Helper()
	b := open(t)
	return b, mustCreateStore(t, b, wsA, "search store").ID
}

// search returns the first page of a search in workspace A.
func search(t *testing.T, b searchBackend, storeIDs []string, q memstore.SearchQuery) memstore.Page[memstore.SearchResult] {
	t.Helper()
	p, err := b.SearchMemories(t.Context(), wsA, storeIDs, q)
	if err != nil {
		t.Fatalf("SearchMemories(%q): %v", q.Text, err)
	}
	if len(p.Items) == 0 && p.Next != "" {
		t.Fatalf("SearchMemories(%q): empty page with Next %q", q.Text, p.Next)
	}
	for i, r := range p.Items {
		if r.Memory.Content != "" {
			t.Errorf("SearchMemories(%q): result %s has its content", q.Text, r.Memory.Path)
		}
		if i > 0 && r.Score > p.Items[i-1].Score {
			t.Errorf("SearchMemories(%q): result %d scores %v, above the one before (%v)", q.Text, i, r.Score, p.Items[i-1].Score)
		}
	}
	return p
}

// found returns the paths of a search's first page, best first.
func found(t *testing.T, b searchBackend, storeID, text string) []string {
	t.Helper()
	p := search(t, b, []string{storeID}, memstore.SearchQuery{Text: text, Limit: memstore.MaxSearchLimit})
	return resultPaths(p.Items)
}

func resultPaths(rs []memstore.SearchResult) []string {
	paths := make([]string, len(rs))
	for i, r := range rs {
		paths[i] = r.Memory.Path
	}
	return paths
}

// wantFound checks that text finds exactly the memories at paths, in any
// order.
func wantFound(t *testing.T, b searchBackend, storeID, text string, paths ...string) {
	t.Helper()
	got := found(t, b, storeID, text)
	if !sameSet(got, paths) {
		t.Errorf("search %q found %q, want %q", text, got, paths)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func testSearchRanking(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/misc/standup.md", "Notes: we talked about the deploy once, then lunch.")
	mustCreateMemory(t, b, wsA, sid, "/runbooks/deploy.md", "Checklist for Fridays: freeze, tag, announce.")
	mustCreateMemory(t, b, wsA, sid, "/infra/cluster.md", "The cluster upgrade failed twice; plan the cluster upgrade again for March.")
	mustCreateMemory(t, b, wsA, sid, "/infra/sizes.md", "Cluster sizes: three nodes in staging, five in production.")
	mustCreateMemory(t, b, wsA, sid, "/other.md", "Nothing relevant here.")

	got := found(t, b, sid, "deploy")
	if !slices.Equal(got, []string{"/runbooks/deploy.md", "/misc/standup.md"}) {
		t.Errorf("deploy: %q, want the path match first, then the body match", got)
	}
	got = found(t, b, sid, "cluster upgrade")
	if len(got) != 2 || got[0] != "/infra/cluster.md" {
		t.Errorf("cluster upgrade: %q, want the memory with both words first, then the one with one", got)
	}
	p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "cluster upgrade"})
	for _, r := range p.Items {
		if r.Score <= 0 {
			t.Errorf("score %v of %s: want above 0", r.Score, r.Memory.Path)
		}
		if r.Memory.StoreID != sid || r.Memory.ID == "" || r.Memory.ContentSHA256 == "" || r.Memory.ContentSize == 0 {
			t.Errorf("result memory %+v: want its fields but the content", r.Memory)
		}
	}
	if p.Items[0].Score == p.Items[1].Score {
		t.Errorf("both words and one word score the same (%v)", p.Items[0].Score)
	}
	wantFound(t, b, sid, "kubernetes")
}

func testSearchStemming(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/habits.md", "She was running every morning before the studies began.")
	mustCreateMemory(t, b, wsA, sid, "/other.md", "A quiet evening.")
	for _, q := range []string{"run", "runs", "running", "RUNNING", "study", "studied", "mornings"} {
		wantFound(t, b, sid, q, "/habits.md")
	}
}

func testSearchSubstrings(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/code/startup.md",
		"Call ParseConfig before Start. The legacy loader is parse_config. Release on 2026-11-21; questions to bob.smith@example.com.")
	mustCreateMemory(t, b, wsA, sid, "/notes/config.md", "The config lives in /etc.")
	mustCreateMemory(t, b, wsA, sid, "/code/loader.md", "Call LoadConfigFile first.")
	mustCreateMemory(t, b, wsA, sid, "/other.md", "Unrelated text about gardening.")
	for _, q := range []string{
		"ParseConfig", "parseconfig", "arseConf", "parseconf", "parse_config", "se_con",
		"2026-11-21", "2026-11", "bob.smith@example.com", "smith@example", "example.com",
	} {
		wantFound(t, b, sid, q, "/code/startup.md")
	}
	// "config" is a word of two memories (parse_config is two words) and
	// only part of a word in a third: all are found, the words first.
	if got := found(t, b, sid, "config"); len(got) != 3 || !sameSet(got[:2], []string{"/notes/config.md", "/code/startup.md"}) || got[2] != "/code/loader.md" {
		t.Errorf("config: %q, want the memories with the word first, then the one with LoadConfigFile", got)
	}
	wantFound(t, b, sid, "LoadConfig", "/code/loader.md")
	// A part of a path is found too.
	wantFound(t, b, sid, "tartu", "/code/startup.md")
	// Fewer than three characters are no substring.
	wantFound(t, b, sid, "rs")
}

func testSearchSnippet(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	long := filler + "the quarterly budget review moved to Thursday\n\nbecause of the offsite " + filler
	mustCreateMemory(t, b, wsA, sid, "/long.md", long)
	mustCreateMemory(t, b, wsA, sid, "/short.md", "Budget:\n  small.")
	mustCreateMemory(t, b, wsA, sid, "/budget/plan.md", "Nothing in the body matches.")

	p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "budget review"})
	snippets := map[string]string{}
	for _, r := range p.Items {
		snippets[r.Memory.Path] = r.Snippet
	}
	s := snippets["/long.md"]
	switch {
	case !strings.Contains(s, "quarterly budget review moved to Thursday because"):
		t.Errorf("snippet %q: want the text around the match, whitespace collapsed", s)
	case utf8.RuneCountInString(s) > 200:
		t.Errorf("snippet of %d characters: want at most 200", utf8.RuneCountInString(s))
	case !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…"):
		t.Errorf("snippet %q: want … where the content was cut", s)
	}
	// Cut at word boundaries: every word of the snippet is a word of the
	// content.
	for _, w := range strings.Fields(strings.Trim(s, "…")) {
		if !slices.Contains(strings.Fields(long), w) {
			t.Errorf("snippet word %q is not a word of the content", w)
		}
	}
	if s := snippets["/short.md"]; s != "Budget: small." {
		t.Errorf("snippet of a short memory: %q, want all of it", s)
	}
	if s, ok := snippets["/budget/plan.md"]; !ok || s != "" {
		t.Errorf("snippet of a path match: %q (found %v), want \"\"", s, ok)
	}
}

func testSearchFreshness(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	ctx := t.Context()
	m := mustCreateMemory(t, b, wsA, sid, "/drafts/alpha.md", "pelican harbour")
	wantFound(t, b, sid, "pelican", "/drafts/alpha.md")

	mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("flamingo harbour")}, actorKey)
	wantFound(t, b, sid, "pelican")
	wantFound(t, b, sid, "flamingo", "/drafts/alpha.md")

	mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/final/omega.md")}, actorKey)
	wantFound(t, b, sid, "alpha")
	wantFound(t, b, sid, "omega", "/final/omega.md")
	wantFound(t, b, sid, "drafts")

	// An upsert that changes the content, and one that changes nothing.
	for _, c := range []string{"heron harbour", "heron harbour"} {
		if _, err := b.CreateMemory(ctx, wsA, sid, memstore.MemoryCreate{Path: "/final/omega.md", Content: c, Upsert: true}, actorKey); err != nil {
			t.Fatal(err)
		}
	}
	wantFound(t, b, sid, "flamingo")
	wantFound(t, b, sid, "heron", "/final/omega.md")

	mustDeleteMemory(t, b, wsA, sid, m.ID, actorKey)
	wantFound(t, b, sid, "heron")
	wantFound(t, b, sid, "harbour")
	wantFound(t, b, sid, "omega")

	// A new memory at the same path is found, the deleted one is not.
	mustCreateMemory(t, b, wsA, sid, "/final/omega.md", "cormorant")
	wantFound(t, b, sid, "cormorant", "/final/omega.md")
	wantFound(t, b, sid, "heron")

	// An archived store is still searched.
	mustArchiveStore(t, b, wsA, sid)
	wantFound(t, b, sid, "cormorant", "/final/omega.md")

	// A deleted store is gone, and its memories with it.
	other := mustCreateStore(t, b, wsA, "other").ID
	mustCreateMemory(t, b, wsA, other, "/o.md", "cormorant too")
	if err := b.DeleteStore(ctx, wsA, sid); err != nil {
		t.Fatal(err)
	}
	_, err := b.SearchMemories(ctx, wsA, []string{sid}, memstore.SearchQuery{Text: "cormorant"})
	wantCode(t, err, memstore.ENotFound, "search of a deleted store")
	wantFound(t, b, other, "cormorant", "/o.md")
}

// testSearchOldMatches: the best matches are found whatever their age.
// An old memory with a term in its path, or with every term of the
// query, ranks first although hundreds of newer memories have each term
// (more than a backend may read of a term's newest memories).
func testSearchOldMatches(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/birds/egret.md", "Seen by the river at dawn.")
	mustCreateMemory(t, b, wsA, sid, "/old.md", "A heron and a kingfisher fished together.")
	const newer = 450
	for i := range newer {
		bird := "heron"
		if i%2 == 1 {
			bird = "kingfisher"
		}
		mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/new/%03d.md", i), "A "+bird+" and an egret flew by the lake.")
	}
	if got := found(t, b, sid, "egret"); len(got) == 0 || got[0] != "/birds/egret.md" {
		t.Errorf("egret: %d found, beginning %q; want the old path match first", len(got), got[:min(len(got), 1)])
	}
	if got := found(t, b, sid, "heron kingfisher"); len(got) == 0 || got[0] != "/old.md" {
		t.Errorf("heron kingfisher: %d found, beginning %q; want the old memory with both first", len(got), got[:min(len(got), 1)])
	}
}

func testSearchRedaction(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	ctx := t.Context()
	m := mustCreateMemory(t, b, wsA, sid, "/creds.md", "database password zanzibar42")
	mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("database password [removed]")}, actorKey)
	if _, err := b.RedactVersion(ctx, wsA, sid, m.VersionID, actorUser); err != nil {
		t.Fatal(err)
	}
	// The redacted content is in no live memory: it never matches.
	wantFound(t, b, sid, "zanzibar42")
	wantFound(t, b, sid, "zanzibar")
	wantFound(t, b, sid, "anzib")
	wantFound(t, b, sid, "database", "/creds.md")

	// A deleted memory's versions are never searched either.
	d := mustCreateMemory(t, b, wsA, sid, "/gone.md", "quokka")
	mustDeleteMemory(t, b, wsA, sid, d.ID, actorKey)
	wantFound(t, b, sid, "quokka")

	// Redacting the current version leaves the live memory as it is, and
	// search finds what Memory returns.
	cur := mustMemory(t, b, wsA, sid, m.ID)
	if _, err := b.RedactVersion(ctx, wsA, sid, cur.VersionID, actorUser); err != nil {
		t.Fatal(err)
	}
	live, err := b.Memory(ctx, wsA, sid, m.ID)
	if err == nil && strings.Contains(live.Content, "database") {
		wantFound(t, b, sid, "database", "/creds.md")
	} else {
		wantFound(t, b, sid, "database")
	}
}

func testSearchPathPrefix(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	for _, p := range []string{"/a/x.md", "/a/y.md", "/ab/z.md", "/b/w.md", "/a.md"} {
		mustCreateMemory(t, b, wsA, sid, p, "kiwi")
	}
	for _, tt := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"/a/x.md", "/a/y.md", "/ab/z.md", "/b/w.md", "/a.md"}},
		{"/", []string{"/a/x.md", "/a/y.md", "/ab/z.md", "/b/w.md", "/a.md"}},
		{"/a/", []string{"/a/x.md", "/a/y.md"}},
		{"/a", []string{"/a/x.md", "/a/y.md", "/ab/z.md", "/a.md"}},
		{"/a/x", []string{"/a/x.md"}},
		{"/c/", nil},
	} {
		p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "kiwi", PathPrefix: tt.prefix, Limit: 100})
		if got := resultPaths(p.Items); !sameSet(got, tt.want) {
			t.Errorf("prefix %q: %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

func testSearchStores(t *testing.T, open func(*testing.T) searchBackend) {
	b := open(t)
	ctx := t.Context()
	s1 := mustCreateStore(t, b, wsA, "one").ID
	s2 := mustCreateStore(t, b, wsA, "two").ID
	s3 := mustCreateStore(t, b, wsA, "three").ID
	sB := mustCreateStore(t, b, wsB, "other workspace").ID
	mustCreateMemory(t, b, wsA, s1, "/m.md", "mango one")
	mustCreateMemory(t, b, wsA, s2, "/m.md", "mango two")
	mustCreateMemory(t, b, wsA, s3, "/m.md", "mango three")
	mustCreateMemory(t, b, wsB, sB, "/m.md", "mango other")

	wantStores := func(p memstore.Page[memstore.SearchResult], as string) {
		t.Helper()
		var stores []string
		for _, r := range p.Items {
			stores = append(stores, r.Memory.StoreID)
		}
		if !sameSet(stores, []string{s1, s2}) {
			t.Errorf("stores of the results as %s %q, want %q", as, stores, []string{s1, s2})
		}
	}
	_, oneStore := b.(*asKeys).search.(KeySearchesOneStore)
	if !oneStore {
		wantStores(search(t, b, []string{s1, s2, s1}, memstore.SearchQuery{Text: "mango"}), "an API key")
	}
	// A session's search of several of its stores finds in those alone.
	_, _, secret, err := b.(*asKeys).CreateSession(ctx, wsA, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: s1}, {StoreID: s2}, {StoreID: s3}}})
	if err != nil {
		t.Fatal(err)
	}
	session, err := b.(*asKeys).AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.(*asKeys).search.SearchMemories(ctx, session, []string{s1, s2, s1}, memstore.SearchQuery{Text: "mango"})
	if err != nil {
		t.Fatalf("a session's search: %v", err)
	}
	wantStores(p, "a session")
	for _, ids := range [][]string{{sB}, {s1, sB}, {"memstore_missing"}} {
		if oneStore && len(ids) > 1 {
			continue
		}
		_, err := b.SearchMemories(ctx, wsA, ids, memstore.SearchQuery{Text: "mango"})
		wantCode(t, err, memstore.ENotFound, fmt.Sprintf("search of %v from workspace A", ids))
	}
	if p := search(t, b, nil, memstore.SearchQuery{Text: "mango"}); len(p.Items) != 0 {
		t.Errorf("search of no store: %d results", len(p.Items))
	}
	_, err = b.SearchMemories(ctx, wsA, nil, memstore.SearchQuery{Text: " "})
	wantCode(t, err, memstore.EInvalid, "search of no store with an empty query")
}

func testSearchPaging(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	ctx := t.Context()
	const n = 25
	for i := range n {
		// Varied counts and lengths, so that scores differ.
		mustCreateMemory(t, b, wsA, sid, fmt.Sprintf("/p/%02d.md", i), strings.Repeat("pear ", 1+i%4)+strings.Repeat("filler ", i))
	}
	all := search(t, b, []string{sid}, memstore.SearchQuery{Text: "pear", Limit: n + 5})
	if len(all.Items) != n || all.Next != "" {
		t.Fatalf("one page: %d results, next %q; want %d and none", len(all.Items), all.Next, n)
	}
	for _, limit := range []int{1, 7, 12, n} {
		q := memstore.SearchQuery{Text: "pear", Limit: limit}
		var paths []string
		for page := 0; ; page++ {
			if page > n {
				t.Fatalf("limit %d: more than %d pages", limit, n)
			}
			p := search(t, b, []string{sid}, q)
			if len(p.Items) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(p.Items))
			}
			paths = append(paths, resultPaths(p.Items)...)
			if p.Next == "" {
				break
			}
			q.Page = p.Next
		}
		if want := resultPaths(all.Items); !slices.Equal(paths, want) {
			t.Errorf("limit %d: pages %q, want the order of one page %q", limit, paths, want)
		}
	}
	// The default page size.
	if p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "pear"}); len(p.Items) != memstore.DefaultSearchLimit || p.Next == "" {
		t.Errorf("default limit: %d results, next %q", len(p.Items), p.Next)
	}
	// Cursors that are not this search's.
	first := search(t, b, []string{sid}, memstore.SearchQuery{Text: "pear", Limit: 5})
	other := mustCreateStore(t, b, wsA, "other").ID
	for name, q := range map[string]memstore.SearchQuery{
		"garbage":       {Text: "pear", Page: "page_!!!"},
		"not a cursor":  {Text: "pear", Page: "hello"},
		"other query":   {Text: "apple", Page: first.Next},
		"other prefix":  {Text: "pear", PathPrefix: "/p/", Page: first.Next},
		"list's cursor": {Text: "pear", Page: listCursor(t, b, sid)},
	} {
		_, err := b.SearchMemories(ctx, wsA, []string{sid}, q)
		wantCode(t, err, memstore.EInvalid, "cursor "+name)
	}
	_, err := b.SearchMemories(ctx, wsA, []string{sid, other}, memstore.SearchQuery{Text: "pear", Page: first.Next})
	wantCode(t, err, memstore.EInvalid, "cursor of other stores")
}

// listCursor returns a cursor of the memories list, which a search must
// refuse.
func listCursor(t *testing.T, b searchBackend, storeID string) string {
	t.Helper()
	p, err := b.Memories(t.Context(), wsA, storeID, memstore.MemoryFilter{Limit: 1})
	if err != nil || p.Next == "" {
		t.Fatalf("Memories: %v, next %q", err, p.Next)
	}
	return p.Next
}

func testSearchValidation(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	for name, q := range map[string]memstore.SearchQuery{
		"empty":        {},
		"spaces":       {Text: " \t\n"},
		"too long":     {Text: strings.Repeat("a", memstore.MaxSearchQuery+1)},
		"not utf-8":    {Text: "caf\xe9"},
		"limit -1":     {Text: "x", Limit: -1},
		"limit 101":    {Text: "x", Limit: memstore.MaxSearchLimit + 1},
		"prefix":       {Text: "x", PathPrefix: "notes/"},
		"prefix NUL":   {Text: "x", PathPrefix: "/a\x00"},
		"page garbage": {Text: "x", Page: "nonsense"},
		"mode unknown": {Text: "x", Mode: "fuzzy"},
		"mode case":    {Text: "x", Mode: "Lexical"},
		// A server without an embedding model searches by words only.
		"semantic": {Text: "x", Mode: memstore.ModeSemantic},
		"hybrid":   {Text: "x", Mode: memstore.ModeHybrid},
	} {
		if withModel(b) && (q.Mode == memstore.ModeSemantic || q.Mode == memstore.ModeHybrid) {
			continue
		}
		_, err := b.SearchMemories(t.Context(), wsA, []string{sid}, q)
		wantCode(t, err, memstore.EInvalid, "query "+name)
	}
	// At the limit is fine.
	search(t, b, []string{sid}, memstore.SearchQuery{Text: strings.Repeat("a", memstore.MaxSearchQuery), Limit: memstore.MaxSearchLimit})
	// Lexical is the default of a server without a model, and pages.
	mustCreateMemory(t, b, wsA, sid, "/a.md", "alpha")
	mustCreateMemory(t, b, wsA, sid, "/b.md", "alpha")
	p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "alpha", Mode: memstore.ModeLexical, Limit: 1})
	if p.Next == "" {
		t.Fatal("lexical search answered no next page")
	}
	if p = search(t, b, []string{sid}, memstore.SearchQuery{Text: "alpha", Limit: 1, Page: p.Next}); len(p.Items) != 1 {
		t.Errorf("the default search's next page of a lexical one: %d results, want 1", len(p.Items))
	}
	if withModel(b) {
		return
	}
	_, err := b.SearchMemories(t.Context(), wsA, []string{sid}, memstore.SearchQuery{Text: "x", Mode: memstore.ModeHybrid})
	if !strings.Contains(fmt.Sprint(err), "--embed-url") {
		t.Errorf("hybrid search without a model: %v, want it to say how to configure one", err)
	}
}

// withModel tells whether b's core has an embedding model.
func withModel(b searchBackend) bool {
	v, ok := b.(*asKeys)
	return ok && v.mode != ""
}

func testSearchUnicode(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/voyages/zürich.md", "Café crème at the Hauptbahnhof; ΕΛΛΗΝΙΚΆ lessons; 東京タワー at night 🎉.")
	mustCreateMemory(t, b, wsA, sid, "/other.md", "plain ascii")
	for _, q := range []string{"café", "cafe", "CAFÉ", "creme", "zurich", "Zürich", "ελληνικά", "東京タワー", "京タワ", "hauptbahn", "night 🎉"} {
		wantFound(t, b, sid, q, "/voyages/zürich.md")
	}
}

func testSearchQuerySyntax(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/fruit.md", `apple pie: "grandma's" recipe (v2) near the top; col:value * ^`)
	mustCreateMemory(t, b, wsA, sid, "/veg.md", "carrot soup")
	for _, q := range []string{
		`"apple`, `apple"`, `"apple pie"`, `(apple`, `apple)`, `apple AND`, `apple OR`, `NOT apple`, `apple NOT pie`,
		`NEAR(apple pie)`, `apple*`, `^apple`, `{path}: apple`, `-apple`, `+apple`, `apple;`, `'apple'`,
		`apple AND OR NOT`, `\apple`, "apple\x00",
	} {
		wantFound(t, b, sid, q, "/fruit.md")
	}
	// Syntax alone finds what has it as a substring, or nothing, without
	// error.
	for _, q := range []string{`"`, `""`, `()`, `*`, `AND`, `NEAR`, `:`, `{}`, `^`, `-`, `""""`, `path:apple`, "ap\x00ple", `a"b"c`} {
		search(t, b, []string{sid}, memstore.SearchQuery{Text: q})
	}
	wantFound(t, b, sid, "col:value", "/fruit.md")
	wantFound(t, b, sid, "(v2)", "/fruit.md")
}

// searchSeveral searches several stores of workspace A: with an API key,
// or, where keys search one store only, as a session with the stores
// attached.
func searchSeveral(t *testing.T, b searchBackend, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	t.Helper()
	k := b.(*asKeys)
	if _, oneStore := k.search.(KeySearchesOneStore); !oneStore {
		return b.SearchMemories(t.Context(), wsA, storeIDs, q)
	}
	var attach []memstore.AttachmentCreate
	for _, id := range storeIDs {
		attach = append(attach, memstore.AttachmentCreate{StoreID: id})
	}
	_, _, secret, err := k.CreateSession(t.Context(), wsA, memstore.SessionCreate{Stores: attach})
	if err != nil {
		t.Fatal(err)
	}
	session, err := k.AuthenticateSession(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return k.search.SearchMemories(t.Context(), session, storeIDs, q)
}

// testSearchQuestions: a question finds by its words, not its question
// words; dates and numbers are kept; a query that no memory matches
// wholly finds those that match some of it.
func testSearchQuestions(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/chat/01.md", "Ana: we adopted a beagle from the shelter on 2024-03-14.")
	mustCreateMemory(t, b, wsA, sid, "/chat/02.md", "Ben: I ran 42 km last week, and what about you?")
	mustCreateMemory(t, b, wsA, sid, "/chat/03.md", "Ana: what would you do when it rains?")
	for q, want := range map[string]string{
		"When did Ana adopt the beagle?":        "/chat/01.md",
		"What happened on 2024-03-14?":          "/chat/01.md",
		"Who ran 42 km?":                        "/chat/02.md",
		"Which zebra did Ana adopt at the zoo?": "/chat/01.md", // zebra and zoo are nowhere
		"How many kilometres did Ben run, 42?":  "/chat/02.md",
		"what would you do":                     "/chat/03.md", // only stop words: those
	} {
		if got := found(t, b, sid, q); len(got) == 0 || got[0] != want {
			t.Errorf("%q found %q; want %s first", q, got, want)
		}
	}
}

// testSearchConversation: with SearchQuery.Conversation, a turn's score
// draws on its neighbours' in its conversation, the turns beside the best
// matches are found even without the words, pages follow that ranking,
// and memories that are no turns (topic files) rank as without it.
func testSearchConversation(t *testing.T, open func(*testing.T) searchBackend) {
	b, sid := newSearchStore(t, open)
	// The answer (turn 3) has one of the words; its neighbours the other.
	mustCreateMemory(t, b, wsA, sid, "/chats/c1/0001.md", "Ana: we adopted a rescue dog from the shelter, finally a dog of our own")
	mustCreateMemory(t, b, wsA, sid, "/chats/c1/0002.md", "Ben: a dog! what breed is the dog?")
	mustCreateMemory(t, b, wsA, sid, "/chats/c1/0003.md", "Ana: a beagle called Biscuit, who sleeps all day long on the sofa")
	mustCreateMemory(t, b, wsA, sid, "/chats/c2/0001.md", "Cem: beagle")
	mustCreateMemory(t, b, wsA, sid, "/chats/c2/0002.md", "Dee: the weather is awful")
	mustCreateMemory(t, b, wsA, sid, "/chats/c2/0004.md", "Eve: see you")
	// Turns named without zero padding, and a conversation of the same
	// directory in another store.
	mustCreateMemory(t, b, wsA, sid, "/chats/c3/9.md", "Fay: our beagle")
	mustCreateMemory(t, b, wsA, sid, "/chats/c3/10.md", "Gil: how old?")
	other := mustCreateStore(t, b, wsA, "other chats").ID
	mustCreateMemory(t, b, wsA, other, "/chats/c2/0003.md", "Hal: hello")
	q := memstore.SearchQuery{Text: "dog beagle", Limit: memstore.MaxSearchLimit, Conversation: new(true)}
	got := resultPaths(search(t, b, []string{sid}, q).Items)
	if i, j := slices.Index(got, "/chats/c1/0003.md"), slices.Index(got, "/chats/c2/0001.md"); i < 0 || j < 0 || i > j {
		t.Errorf("with context: %q; want the beagle of the dog's conversation above the lone beagle", got)
	}
	// A turn next to a match is found without the words, below it; one
	// three turns away, or in another store, is not.
	for match, beside := range map[string]string{"/chats/c2/0001.md": "/chats/c2/0002.md", "/chats/c3/9.md": "/chats/c3/10.md"} {
		if i, j := slices.Index(got, match), slices.Index(got, beside); i < 0 || j < i {
			t.Errorf("with context: %q; want %s, beside %s, found below it", got, beside, match)
		}
	}
	if slices.Contains(got, "/chats/c2/0004.md") {
		t.Errorf("with context: %q; want no turn three away", got)
	}
	// Over both stores (as a session where keys search one store only),
	// the other store's turn is of another conversation.
	both, err := searchSeveral(t, b, []string{sid, other}, q)
	if err != nil {
		t.Fatalf("a search of both stores: %v", err)
	}
	if got := resultPaths(both.Items); len(got) == 0 || slices.Contains(got, "/chats/c2/0003.md") {
		t.Errorf("both stores, with context: %q; want no turn of the other store", got)
	}
	if got := resultPaths(search(t, b, []string{sid}, memstore.SearchQuery{Text: "beagle", PathPrefix: "/chats/c2/0001", Conversation: new(true)}).Items); !slices.Equal(got, []string{"/chats/c2/0001.md"}) {
		t.Errorf("within the prefix /chats/c2/0001: %q; want its turn only", got)
	}
	if got := resultPaths(search(t, b, []string{sid}, memstore.SearchQuery{Text: "dog beagle", Limit: memstore.MaxSearchLimit}).Items); slices.Contains(got, "/chats/c2/0002.md") {
		t.Errorf("without context: %q; a turn without the words is found", got)
	}
	// Pages of one at a time give the same order.
	var paged []string
	for q.Limit = 1; ; {
		p := search(t, b, []string{sid}, q)
		paged = append(paged, resultPaths(p.Items)...)
		if p.Next == "" {
			break
		}
		q.Page = p.Next
	}
	if !slices.Equal(paged, got) {
		t.Errorf("pages of one: %q; want %q", paged, got)
	}
	// A plain search's cursor is not a conversation search's.
	plain := search(t, b, []string{sid}, memstore.SearchQuery{Text: "dog beagle", Limit: 1})
	_, err = b.SearchMemories(t.Context(), wsA, []string{sid}, memstore.SearchQuery{Text: "dog beagle", Limit: 1, Page: plain.Next, Conversation: new(true)})
	wantCode(t, err, memstore.EInvalid, "a plain search's cursor with conversation")

	// Topic files: the same results, scores and order either way.
	topics := mustCreateStore(t, b, wsA, "topics").ID
	mustCreateMemory(t, b, wsA, topics, "/misc/standup.md", "Notes: we talked about the deploy once, then lunch.")
	mustCreateMemory(t, b, wsA, topics, "/runbooks/deploy.md", "Checklist for Fridays: freeze, tag, announce the deploy.")
	mustCreateMemory(t, b, wsA, topics, "/infra/cluster.md", "The cluster upgrade failed twice; plan the deploy again.")
	for _, text := range []string{"deploy", "cluster deploy", "plan"} {
		without := search(t, b, []string{topics}, memstore.SearchQuery{Text: text})
		with := search(t, b, []string{topics}, memstore.SearchQuery{Text: text, Conversation: new(true)})
		if !slices.EqualFunc(without.Items, with.Items, func(a, b memstore.SearchResult) bool {
			return a.Memory.Path == b.Memory.Path && a.Score == b.Score
		}) {
			t.Errorf("%q in topic files: %q with context, %q without; want the same", text, resultPaths(with.Items), resultPaths(without.Items))
		}
	}
}

// testSearchConversationOption: a store whose metadata says its memories
// are turns of conversations (memstore.ConversationKey) is searched with
// context unless the request says otherwise; a session's metadata says
// it for every store it searches; a search of several stores gives
// context to the stores that say so alone, each conversation within its
// store; the key is "true" or "false" and nothing else.
func testSearchConversationOption(t *testing.T, open func(*testing.T) searchBackend) {
	b := open(t)
	ctx := t.Context()
	keys := b.(*asKeys)
	newStore := func(name string, meta map[string]string, turns map[string]string) string {
		t.Helper()
		s, err := b.CreateStore(ctx, wsA, memstore.StoreCreate{Name: name, Metadata: meta})
		if err != nil {
			t.Fatalf("CreateStore(%q, %v): %v", name, meta, err)
		}
		for _, p := range slices.Sorted(maps.Keys(turns)) {
			mustCreateMemory(t, b, wsA, s.ID, p, turns[p])
		}
		return s.ID
	}
	on := map[string]string{memstore.ConversationKey: "true"}
	off := map[string]string{memstore.ConversationKey: "false"}
	// The answer (c1's turn 3) has one of the words, its neighbours the
	// other; c2's lone beagle outranks it without context.
	chat := map[string]string{
		"/chats/c1/0001.md": "Ana: we adopted a rescue dog from the shelter, finally a dog of our own",
		"/chats/c1/0002.md": "Ben: a dog! what breed is the dog?",
		"/chats/c1/0003.md": "Ana: a beagle called Biscuit, who sleeps all day long on the sofa",
		"/chats/c2/0001.md": "Cem: beagle",
		"/chats/c2/0002.md": "Dee: the weather is awful",
	}
	chats := newStore("chats", on, chat)
	plain := newStore("plain", nil, chat)
	const text = "dog beagle"
	// above reports whether the answer ranks above the lone beagle among
	// the results of store.
	above := func(p memstore.Page[memstore.SearchResult], store string) bool {
		t.Helper()
		var got []string
		for _, r := range p.Items {
			if r.Memory.StoreID == store {
				got = append(got, r.Memory.Path)
			}
		}
		i, j := slices.Index(got, "/chats/c1/0003.md"), slices.Index(got, "/chats/c2/0001.md")
		if i < 0 || j < 0 {
			t.Fatalf("store %s: found %q; want both beagles", store, got)
		}
		return i < j
	}
	q := func(conv *bool) memstore.SearchQuery {
		return memstore.SearchQuery{Text: text, Limit: memstore.MaxSearchLimit, Conversation: conv}
	}
	if above(search(t, b, []string{plain}, q(nil)), plain) || !above(search(t, b, []string{plain}, q(new(true))), plain) {
		t.Fatal("the data does not tell a search with context from one without")
	}
	// The store says; the request overrides it either way.
	if !above(search(t, b, []string{chats}, q(nil)), chats) {
		t.Error("a store of conversations searched without context")
	}
	if above(search(t, b, []string{chats}, q(new(false))), chats) {
		t.Error("conversation=false: a store of conversations still searched with context")
	}
	// A store that stops saying so, by "false" or by removing the key.
	if _, err := keys.UpdateStore(ctx, wsA, chats, memstore.StoreUpdate{Metadata: map[string]*string{memstore.ConversationKey: new("false")}}); err != nil {
		t.Fatal(err)
	}
	if above(search(t, b, []string{chats}, q(nil)), chats) {
		t.Error(`a store updated to "false" still searched with context`)
	}
	if _, err := keys.UpdateStore(ctx, wsA, chats, memstore.StoreUpdate{Metadata: map[string]*string{memstore.ConversationKey: new("true")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.UpdateStore(ctx, wsA, plain, memstore.StoreUpdate{Metadata: map[string]*string{memstore.ConversationKey: nil}}); err != nil {
		t.Fatalf("removing the key: %v", err)
	}

	// A session: its metadata says for all its stores; without the key,
	// each store says for itself.
	// Store lone holds c1's turn 3 alone, at the same path as chats':
	// chats' turns are no neighbours of it.
	lone := newStore("lone", on, map[string]string{"/chats/c1/0003.md": chat["/chats/c1/0003.md"]})
	session := func(meta map[string]string) *memstore.Caller {
		t.Helper()
		_, _, secret, err := keys.CreateSession(ctx, wsA, memstore.SessionCreate{Metadata: meta,
			Stores: []memstore.AttachmentCreate{{StoreID: chats}, {StoreID: plain}, {StoreID: lone}}})
		if err != nil {
			t.Fatalf("CreateSession(%v): %v", meta, err)
		}
		c, err := keys.AuthenticateSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	searchAs := func(c *memstore.Caller, conv *bool) memstore.Page[memstore.SearchResult] {
		t.Helper()
		p, err := keys.search.SearchMemories(ctx, c, []string{chats, plain, lone}, q(conv))
		if err != nil {
			t.Fatalf("a session's search: %v", err)
		}
		return p
	}
	answer := func(p memstore.Page[memstore.SearchResult], store string) float64 {
		for _, r := range p.Items {
			if r.Memory.StoreID == store && r.Memory.Path == "/chats/c1/0003.md" {
				return r.Score
			}
		}
		t.Fatalf("store %s: the answer not found", store)
		return 0
	}
	p := searchAs(session(nil), nil)
	if !above(p, chats) || above(p, plain) {
		t.Error("a search of several stores: context not for the store of conversations alone")
	}
	for _, r := range p.Items {
		if r.Memory.StoreID == plain && r.Memory.Path == "/chats/c2/0002.md" {
			t.Error("a search of several stores: a turn without the words found in the store of topics")
		}
	}
	if answer(p, chats) <= answer(p, lone) {
		t.Errorf("the answer scores %v in chats, %v alone in lone; want the neighbours of chats to count there only", answer(p, chats), answer(p, lone))
	}
	if p := searchAs(session(on), nil); !above(p, chats) || !above(p, plain) {
		t.Error(`a session saying "true": context not for every store`)
	}
	if p := searchAs(session(off), nil); above(p, chats) || above(p, plain) {
		t.Error(`a session saying "false": context still for a store`)
	}
	if p := searchAs(session(on), new(false)); above(p, chats) || above(p, plain) {
		t.Error(`conversation=false in a session saying "true": context still for a store`)
	}
	// A session that changes its mind: its token's next request sees it,
	// whatever the server remembers of the token.
	_, _, secret, err := keys.CreateSession(ctx, wsA, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: plain}}})
	if err != nil {
		t.Fatal(err)
	}
	plainAs := func() bool {
		t.Helper()
		c, err := keys.AuthenticateSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		p, err := keys.search.SearchMemories(ctx, c, []string{plain}, q(nil))
		if err != nil {
			t.Fatal(err)
		}
		return above(p, plain)
	}
	if plainAs() {
		t.Error("a session without the key: context for a store without it")
	}
	sessionID, err := keys.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.UpdateSession(ctx, wsA, sessionID.Session.ID, memstore.SessionUpdate{Metadata: map[string]*string{memstore.ConversationKey: new("true")}}); err != nil {
		t.Fatal(err)
	}
	if !plainAs() {
		t.Error(`a session updated to "true": its token's next search without context`)
	}

	// "true" or "false", nothing else, wherever metadata is set.
	bad := map[string]string{memstore.ConversationKey: "yes"}
	_, err = b.CreateStore(ctx, wsA, memstore.StoreCreate{Name: "bad", Metadata: bad})
	wantCode(t, err, memstore.EInvalid, "a store created with conversation metadata yes")
	_, err = keys.UpdateStore(ctx, wsA, plain, memstore.StoreUpdate{Metadata: map[string]*string{memstore.ConversationKey: new("1")}})
	wantCode(t, err, memstore.EInvalid, "a store updated with conversation metadata 1")
	_, _, _, err = keys.CreateSession(ctx, wsA, memstore.SessionCreate{Metadata: bad, Stores: []memstore.AttachmentCreate{{StoreID: plain}}})
	wantCode(t, err, memstore.EInvalid, "a session created with conversation metadata yes")
	if s := mustStore(t, b, wsA, plain); len(s.Metadata) != 0 {
		t.Errorf("after the refused update, the store's metadata is %v; want none", s.Metadata)
	}
}
