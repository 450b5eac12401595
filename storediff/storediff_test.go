package storediff_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storediff"
)

// TestCompare compares two real stores, through the core and through a
// real server's API, and finds the same changes with the same diffs:
// added, removed and changed paths, equal ones left out, binary content
// noted rather than diffed, and the largest content diffed in full.
func TestCompare(t *testing.T) {
	ctx := t.Context()
	db := sqlitetest.Open(t, sqlite.Options{})
	core := memstore.NewCore(db)
	ws := sqlitetest.Workspace(t, db, "team")
	_, key := sqlitetest.APIKey(t, db, ws.ID, "diff")
	by := memstore.Actor{Type: memstore.ActorUser, ID: "user_test"}
	a := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "before"})
	b := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "after"})

	big := strings.Repeat("a line of a large memory\n", memstore.MaxContentBytes/25)
	for p, c := range map[string]string{
		"/same.md":      "unchanged\n",
		"/changed.md":   "one\ntwo\nthree\n",
		"/removed.md":   "gone\n",
		"/binary.md":    "text\x00more",
		"/large.md":     big,
		"/dir/keep.txt": "kept\n",
	} {
		sqlitetest.Create(t, db, ws.ID, a.ID, p, c, by)
	}
	for p, c := range map[string]string{
		"/same.md":      "unchanged\n",
		"/changed.md":   "one\nTWO\nthree\n",
		"/added.md":     "new\n",
		"/binary.md":    "text\x00other",
		"/large.md":     big[:len(big)-25] + "the last line, changed\n",
		"/dir/keep.txt": "kept\n",
	} {
		sqlitetest.Create(t, db, ws.ID, b.ID, p, c, by)
	}

	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core}))
	t.Cleanup(srv.Close)
	client := httpapi.NewClient(srv.URL, key)
	client.HTTPClient = srv.Client()

	for _, tc := range []struct {
		name   string
		r      storediff.Reader
		caller *memstore.Caller
	}{
		{"core", core, &memstore.Caller{WorkspaceID: ws.ID, Actor: by}},
		{"api", client, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := storediff.Compare(ctx, tc.r, tc.caller, a.ID, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d.From.Name != "before" || d.To.Name != "after" || d.Same != 2 {
				t.Errorf("from %q, to %q, same %d; want before, after, 2", d.From.Name, d.To.Name, d.Same)
			}
			var got []string
			texts := map[string]*storediff.Text{}
			for _, ch := range d.Changes {
				got = append(got, string(ch.Kind)+" "+ch.Path)
				if texts[ch.Path], err = d.Text(ctx, tc.r, tc.caller, ch); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{"added /added.md", "changed /binary.md", "changed /changed.md", "changed /large.md", "removed /removed.md"}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for path, want := range map[string]string{
				"/changed.md": "--- a/changed.md\n+++ b/changed.md\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
				"/added.md":   "--- /dev/null\n+++ b/added.md\n@@ -0,0 +1 @@\n+new\n",
				"/removed.md": "--- a/removed.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n",
				"/binary.md":  "Binary content a/binary.md and b/binary.md differ (9 and 10 bytes)\n",
			} {
				if got := texts[path].Diff; got != want {
					t.Errorf("diff of %s:\n%s\nwant:\n%s", path, got, want)
				}
			}
			if tx := texts["/changed.md"]; tx.Added != 1 || tx.Deleted != 1 || tx.From != "one\ntwo\nthree\n" || tx.To != "one\nTWO\nthree\n" {
				t.Errorf("changed.md: +%d -%d, from %q to %q", tx.Added, tx.Deleted, tx.From, tx.To)
			}
			if tx := texts["/binary.md"]; !tx.Binary || tx.Added != 0 {
				t.Errorf("binary.md: binary %v, +%d", tx.Binary, tx.Added)
			}
			// The large memory's diff is one hunk at its end, not the
			// whole text.
			if tx := texts["/large.md"]; tx.Added != 1 || tx.Deleted != 1 || len(tx.Diff) > 400 {
				t.Errorf("large.md: +%d -%d, %d bytes of diff:\n%s", tx.Added, tx.Deleted, len(tx.Diff), tx.Diff)
			}
		})
	}

	// A store of another workspace, or none, is not found; and a store
	// compared with itself has no changes.
	other := sqlitetest.Workspace(t, db, "other")
	o := sqlitetest.Store(t, db, other.ID, memstore.StoreCreate{Name: "theirs"})
	if _, err := storediff.Compare(ctx, client, nil, a.ID, o.ID); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("another workspace's store: %v, want not found", err)
	}
	d, err := storediff.Compare(ctx, client, nil, a.ID, a.ID)
	if err != nil || len(d.Changes) != 0 || d.Same != 6 {
		t.Errorf("a store with itself: %v, %d changes, %d same", err, len(d.Changes), d.Same)
	}
}
