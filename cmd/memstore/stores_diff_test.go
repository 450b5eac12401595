package main

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStoresDiff compares two stores by name with stores diff, on a
// database file and through a real server, and checks that both print
// the same changes: the unified diffs, --stat, --json, and a summary.
func TestStoresDiff(t *testing.T) {
	clearEnv(t)
	api, secret := newStoresAPI(t)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)

	steps := []cliStep{
		{args: []string{"stores", "create", "before"}},
		{args: []string{"stores", "create", "after"}},
		{args: []string{"put", "--store", "before", "/same.md"}, stdin: "same\n"},
		{args: []string{"put", "--store", "after", "/same.md"}, stdin: "same\n"},
		{args: []string{"put", "--store", "before", "/notes/todo.md"}, stdin: "- milk\n- eggs\n"},
		{args: []string{"put", "--store", "after", "/notes/todo.md"}, stdin: "- milk\n- bread\n"},
		{args: []string{"put", "--store", "before", "/old.md"}, stdin: "old\n"},
		{args: []string{"put", "--store", "after", "/new.md"}, stdin: "new\n"},
		{args: []string{"stores", "diff", "before", "after"}},
		{args: []string{"stores", "diff", "before", "after", "--stat"}},
		{args: []string{"stores", "diff", "before", "after", "--json"}},
		{args: []string{"stores", "diff", "after", "after"}},
		{args: []string{"stores", "diff", "before"}},
		{args: []string{"stores", "diff", "before", "nosuch"}},
	}
	local := session(t, []string{"--db", filepath.Join(t.TempDir(), "local.db")}, steps)
	remote := session(t, []string{"--url", srv.URL, "--api-key", secret}, steps)
	if diff := cmp.Diff(normalize(local), normalize(remote)); diff != "" {
		t.Errorf("the server session differs from the database session (-db +server):\n%s", diff)
	}
	for _, want := range []string{
		"$ memstore stores diff before after\n--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+new\n" +
			"--- a/notes/todo.md\n+++ b/notes/todo.md\n@@ -1,2 +1,2 @@\n - milk\n-- eggs\n+- bread\n" +
			"--- a/old.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n\n" +
			"1 changed, 1 added, 1 removed (2 lines added, 2 deleted); 1 paths alike\n\nexit 0",
		"added    /new.md         +1 -0\nchanged  /notes/todo.md  +1 -1\nremoved  /old.md         +0 -1\n",
		`"changes":[{"path":"/new.md","kind":"added","to_memory_id":"mem_`,
		`"lines_added":1,"lines_deleted":1,"binary":false,"diff":"--- a/notes/todo.md\n+++ b/notes/todo.md\n@@ -1,2 +1,2 @@\n - milk\n-- eggs\n+- bread\n"}`,
		"no differences: after and after hold the same 3 memories\n",
		"give two stores, A and B",
		"no memory store named \"nosuch\"",
	} {
		if !strings.Contains(local, want) {
			t.Errorf("transcript lacks %q:\n%s", want, local)
		}
	}
}
