package dirsync

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFingerprintIgnoresHidden: a watch neither reads nor wakes for what
// it never syncs: a change under .git/ or to .env leaves the fingerprint
// as it was, a change to a memory does not.
func TestFingerprintIgnoresHidden(t *testing.T) {
	dir := t.TempDir()
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put("a.md", "a\n")
	put("notes/b.md", "b\n")
	o := &Options{Dir: dir, Scope: ScopePrivate}
	before := fingerprint(o)
	put(".git/objects/ab/cdef", "object")
	put(".env", "TOKEN=x\n")
	put("notes/.hidden/x.md", "x\n")
	if got := fingerprint(o); got != before {
		t.Error("hidden files changed the fingerprint")
	}
	put("a.md", "a, edited\n")
	if fingerprint(o) == before {
		t.Error("an edit of a.md left the fingerprint as it was")
	}
}
