package agenttool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// FuzzCall runs arbitrary arguments through every tool of a session with
// a read-write store and a read-only one, in a workspace with a third
// store the session does not have. Whatever the input: no panic, a result
// whose text agrees with its error flag, never the internal-error message
// (which would mean that bad input reached the backend as a failure), and
// no change to any store but the read-write one. The seed corpus is in
// testdata/fuzz/FuzzCall.
func FuzzCall(f *testing.F) {
	for _, seed := range []struct {
		tool uint8
		args string
	}{
		{0, `{}`},
		{0, `{"path_prefix":"/mnt/memory/notes/","depth":0}`},
		{0, `{"path_prefix":"/mnt/memory/../../etc","depth":-1}`},
		{1, `{"query":"tea","limit":3}`},
		{1, `{"query":"\"OR\" NEAR(a b) *","path_prefix":"/mnt/memory/reference/"}`},
		{2, `{"path":"/mnt/memory/notes/a.md","start_line":2,"end_line":1}`},
		{2, `{"path":"/mnt/memory/notes/%2e%2e/secret.md"}`},
		{3, `{"path":"/mnt/memory/notes/new.md","content":"x"}`},
		{3, `{"path":"/mnt/memory/reference/new.md","content":"pwned"}`},
		{3, `{"path":"/mnt/memory/notes/../../other/x.md","content":"pwned"}`},
		{3, "{\"path\":\"/mnt/memory/notes/a\\u0000.md\",\"content\":\"x\"}"},
		{4, `{"path":"/mnt/memory/notes/a.md","old_str":"tea","new_str":"coffee"}`},
		{4, `{"path":"/mnt/memory/notes/a.md","old_str":"tea","new_str":"x","expected_sha256":"zz"}`},
		{5, `{"path":"/mnt/memory/reference/r.md"}`},
		{5, `{"path":"/mnt/memory/notes"}`},
		{5, `[1,2,3]`},
		{2, `{"path":123}`},
		{3, `{"path":"/mnt/memory/notes/x.md","content":"x","extra":{"a":[[[[[[]]]]]]}}`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	db := sqlitetest.Open(f, sqlite.Options{})
	notes := newStore(f, db, "Notes", "/a.md", "I like tea.\nAnd cake.\n")
	ref := newStore(f, db, "Reference", "/r.md", "reference text\n")
	other := newStore(f, db, "Other", "/secret.md", "not for this session\n")
	frozen := map[string]string{ref.ID: snapshot(f, db, ref.ID), other.ID: snapshot(f, db, other.ID)}
	ts := newToolset(f, services(db, memstore.MaxMemoriesPerStore(50)), newSession(attach{store: notes}, attach{store: ref, readOnly: true}))
	names := make([]string, 0, 6)
	for _, t := range ts.Tools() {
		names = append(names, t.Name)
	}

	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		name := names[int(tool)%len(names)]
		r := ts.Call(context.Background(), name, args)
		if r.IsError != strings.HasPrefix(r.Text, "Error: ") {
			t.Fatalf("%s %q: IsError %v with text %q", name, args, r.IsError, r.Text)
		}
		if strings.Contains(r.Text, "internal error") {
			t.Fatalf("%s %q: bad input failed inside: %s", name, args, r.Text)
		}
		for id, want := range frozen {
			if got := snapshot(t, db, id); got != want {
				t.Fatalf("%s %q changed store %s, which the session may not change:\n%s\nwant:\n%s", name, args, id, got, want)
			}
		}
	})
}

// snapshot is every memory of a store, path and content, in path order.
func snapshot(tb testing.TB, db *sqlite.DB, storeID string) string {
	tb.Helper()
	var sb strings.Builder
	page := ""
	for {
		p, err := db.Memories(context.Background(), ws, storeID, memstore.MemoryFilter{Limit: 20, Page: page, Full: true})
		if err != nil {
			tb.Fatal(err)
		}
		for _, it := range p.Items {
			sb.WriteString(it.Memory.Path + "\x00" + it.Memory.Content + "\x00")
		}
		if page = p.Next; page == "" {
			return sb.String()
		}
	}
}
