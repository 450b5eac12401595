package agenttool_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// hit is one result line of memory_search: number, path, size, score.
var hit = regexp.MustCompile(`(?m)^(\d+)\. (/mnt/memory/\S+)  \((\d+ bytes?), score (-?\d+\.\d\d)\)\n   (.+)$`)

func hits(text string) []string {
	var paths []string
	for _, m := range hit.FindAllStringSubmatch(text, -1) {
		paths = append(paths, m[2])
	}
	return paths
}

func TestSearch(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	prefs := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "User Preferences"})
	deploy := "To deploy, run the migrations first,\nthen restart the servers."
	sqlitetest.Create(t, db, ws, notes.ID, "/deploy.md", deploy, admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/projects/web.md", "The web project uses React.", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/projects-old/web.md", "The old web project used React too.", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/todo.md", "Nothing about shipping.", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/links.md", "Bookmarks: the web console.", admin)
	sqlitetest.Create(t, db, ws, prefs.ID, "/style.md", "Prefer tabs. Never deploy on Fridays.", admin)
	svc := services(db)
	ts := newToolset(t, svc, newSession(attach{store: notes}, attach{store: prefs, readOnly: true}))

	got := ok(t, ts, "memory_search", map[string]any{"query": "deploy"})
	if !strings.HasPrefix(got, "2 memories in the attached memory stores match \"deploy\", best first:\n") {
		t.Errorf("header: %s", got)
	}
	if paths := hits(got); strings.Join(paths, " ") != "/mnt/memory/notes/deploy.md /mnt/memory/user-preferences/style.md" {
		t.Errorf("results %v: want deploy.md (the path matches too) before style.md, across both stores:\n%s", paths, got)
	}
	for _, m := range hit.FindAllStringSubmatch(got, -1) {
		if want := fmt.Sprintf("%d bytes", len(deploy)); m[2] == "/mnt/memory/notes/deploy.md" && m[3] != want {
			t.Errorf("size %s, want %s", m[3], want)
		}
		if strings.Contains(m[5], "\n") || m[5] == "" {
			t.Errorf("snippet %q", m[5])
		}
	}

	more := "\n[More memories match: raise limit (at most 50) or narrow the search with path_prefix or more words.]"
	tests := []struct {
		name  string
		args  map[string]any
		paths string   // the results in order; "" for none; "a|b": either
		want  []string // in the text
	}{
		{"one store", map[string]any{"query": "deploy", "path_prefix": "/mnt/memory/user-preferences"}, "/mnt/memory/user-preferences/style.md",
			[]string{"1 memory in /mnt/memory/user-preferences/ matches \"deploy\", best first:\n1. /mnt/memory/user-preferences/style.md  (37 bytes, score "}},
		{"a directory", map[string]any{"query": "react", "path_prefix": "/mnt/memory/notes/projects"}, "/mnt/memory/notes/projects/web.md",
			[]string{"1 memory in /mnt/memory/notes/projects/ matches \"react\""}},
		{"a directory with /", map[string]any{"query": "react", "path_prefix": "/mnt/memory/notes/projects-old/"}, "/mnt/memory/notes/projects-old/web.md", nil},
		{"no partial directory names", map[string]any{"query": "react", "path_prefix": "/mnt/memory/notes/proj"}, "",
			[]string{"No memory in /mnt/memory/notes/proj/ matches \"react\". Try other or fewer words, or look around with memory_list."}},
		{"the root of the mounts", map[string]any{"query": "tabs", "path_prefix": "/mnt/memory/"}, "/mnt/memory/user-preferences/style.md", []string{"in the attached memory stores"}},
		{"nothing", map[string]any{"query": "kubernetes"}, "",
			[]string{"No memory in the attached memory stores matches \"kubernetes\". Try other or fewer words, or look around with memory_list."}},
		{"a limit", map[string]any{"query": "react", "limit": 1}, "/mnt/memory/notes/projects-old/web.md|/mnt/memory/notes/projects/web.md",
			[]string{"The best match for \"react\" in the attached memory stores (more memories match):\n1. ", more}},
		{"a limit of two", map[string]any{"query": "web", "limit": 2}, "/mnt/memory/notes/projects-old/web.md /mnt/memory/notes/projects/web.md|/mnt/memory/notes/projects/web.md /mnt/memory/notes/projects-old/web.md",
			[]string{"The 2 best matches for \"web\" in the attached memory stores, best first (more memories match):\n", more}},
		{"the largest limit", map[string]any{"query": "web", "limit": 50},
			"/mnt/memory/notes/projects-old/web.md /mnt/memory/notes/projects/web.md /mnt/memory/notes/links.md|/mnt/memory/notes/projects/web.md /mnt/memory/notes/projects-old/web.md /mnt/memory/notes/links.md", []string{"3 memories in the attached memory stores match \"web\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ok(t, ts, "memory_search", tt.args)
			paths := strings.Join(hits(got), " ")
			if !slices.Contains(strings.Split(tt.paths, "|"), paths) {
				t.Errorf("results %q, want %q:\n%s", paths, tt.paths, got)
			}
			wantContains(t, got, tt.want...)
		})
	}

	for _, bad := range []struct{ name, query, prefix, want string }{
		{"blank query", "   ", "", "Error: the search query is empty; say what to look for."},
		{"long query", strings.Repeat("x", memstore.MaxSearchQuery+1), "", "Error: the search query is 1001 bytes; the limit is 1000."},
		{"ambiguous prefix", "deploy", "/projects", "Error: Several memory stores are attached, so /projects is ambiguous"},
		{"traversal", "deploy", "/mnt/memory/notes/../user-preferences", `has a ".." segment`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			args := map[string]any{"query": bad.query}
			if bad.prefix != "" {
				args["path_prefix"] = bad.prefix
			}
			wantContains(t, fails(t, ts, "memory_search", args), bad.want)
		})
	}

	t.Run("plain prefix with one store", func(t *testing.T) {
		one := newToolset(t, svc, newSession(attach{store: notes}))
		got := ok(t, one, "memory_search", map[string]any{"query": "react", "path_prefix": "/projects/"})
		if paths := strings.Join(hits(got), " "); paths != "/mnt/memory/notes/projects/web.md" {
			t.Errorf("results %q:\n%s", paths, got)
		}
	})

	t.Run("sees the tools' writes at once", func(t *testing.T) {
		ok(t, ts, "memory_write", map[string]any{"path": "/mnt/memory/notes/kube.md", "content": "We run on kubernetes."})
		if paths := strings.Join(hits(ok(t, ts, "memory_search", map[string]any{"query": "kubernetes"})), " "); paths != "/mnt/memory/notes/kube.md" {
			t.Errorf("after a write: %q", paths)
		}
		ok(t, ts, "memory_delete", map[string]any{"path": "/mnt/memory/notes/kube.md"})
		wantContains(t, ok(t, ts, "memory_search", map[string]any{"query": "kubernetes"}), "No memory in the attached memory stores matches")
	})

	t.Run("a deleted store", func(t *testing.T) {
		gone := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Gone"})
		ts := newToolset(t, svc, newSession(attach{store: notes}, attach{store: gone}))
		if err := db.DeleteStore(t.Context(), ws, gone.ID); err != nil {
			t.Fatal(err)
		}
		wantContains(t, fails(t, ts, "memory_search", map[string]any{"query": "deploy"}),
			"Error: A memory store attached to this session no longer exists. Search the stores one at a time with path_prefix to find which.")
		wantContains(t, fails(t, ts, "memory_search", map[string]any{"query": "deploy", "path_prefix": "/mnt/memory/gone/"}),
			"Error: The memory store mounted at /mnt/memory/gone/ no longer exists")
		if paths := strings.Join(hits(ok(t, ts, "memory_search", map[string]any{"query": "deploy", "path_prefix": "/mnt/memory/notes"})), " "); paths != "/mnt/memory/notes/deploy.md" {
			t.Errorf("the store still attached: %q", paths)
		}
	})
}

// memory_search's mode and conversation reach the core: lexical by
// default without a model, semantic and hybrid with one, and an error
// that says how to configure one without.
func TestSearchModes(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes",
		"/pets.md", "our beagle biscuit: a beagle of a beagle family",
		"/chat/0001.md", "we adopted a dog last spring",
		"/chat/0002.md", "what breed is it",
		"/chat/0003.md", "a beagle",
		"/chat/0004.md", "lovely",
		"/work.md", "deploy on fridays only")
	session := newSession(attach{store: notes})

	plain := newToolset(t, services(db), session)
	if paths := hits(ok(t, plain, "memory_search", map[string]any{"query": "beagle biscuit"})); strings.Join(paths, " ") != "/mnt/memory/notes/pets.md /mnt/memory/notes/chat/0003.md" {
		t.Errorf("default search without a model: %q, want the two beagles, by words", paths)
	}
	for _, mode := range []string{"semantic", "hybrid"} {
		wantContains(t, fails(t, plain, "memory_search", map[string]any{"query": "beagle", "mode": mode}), "no embedding model", "--embed-url")
	}
	// conversation: the turns of the breed and the beagle, each with the
	// other beside it, rank above the other beagle; without it, below.
	// With it, the turns beside them are found too, after the matches.
	for conversation, want := range map[bool]string{
		false: "/mnt/memory/notes/chat/0002.md /mnt/memory/notes/pets.md /mnt/memory/notes/chat/0003.md",
		true:  "/mnt/memory/notes/chat/0002.md /mnt/memory/notes/chat/0003.md /mnt/memory/notes/pets.md /mnt/memory/notes/chat/0001.md /mnt/memory/notes/chat/0004.md",
	} {
		got := hits(ok(t, plain, "memory_search", map[string]any{"query": "breed beagle", "mode": "lexical", "conversation": conversation}))
		if strings.Join(got, " ") != want {
			t.Errorf("conversation %v: %q, want %s", conversation, got, want)
		}
	}
	e := embedtest.New(t, 128).Embedder(t, "word-hash")
	if err := embedindex.New(embedindex.Config{Storage: db, Embedder: e}).Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	model := newToolset(t, services(db, memstore.WithEmbedder(e)), session)
	text := ok(t, model, "memory_search", map[string]any{"query": "fridays deploy", "mode": "semantic", "limit": 2})
	if paths := hits(text); len(paths) != 2 || paths[0] != "/mnt/memory/notes/work.md" {
		t.Errorf("semantic search: %q, want two, work.md first:\n%s", paths, text)
	}
	// The default is hybrid: every memory, the words' match first; a
	// memory found by meaning alone says so instead of a snippet.
	text = ok(t, model, "memory_search", map[string]any{"query": "biscuit", "limit": 50})
	if paths := hits(text); len(paths) != 6 || paths[0] != "/mnt/memory/notes/pets.md" {
		t.Errorf("hybrid search: %q, want all six, pets.md first:\n%s", paths, text)
	}
	wantContains(t, text, "(no words of the query in its text: found by its path or its meaning)")
}
