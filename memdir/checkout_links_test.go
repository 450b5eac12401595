package memdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/memdir"
)

// A checkout's agent memory and snapshots are the checkout's: a symbolic
// link committed in their place (the agent's directory, .claude/agent-memory,
// .claude itself) would make an apply write, and remove memories, wherever
// the repository points it. Such a path is refused, saying which link.
func TestCheckoutLinksAreRefused(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "mine.md"), []byte("the user's own\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{
		".claude/agent-memory/reviewer",
		".claude/agent-memory",
		".claude",
	} {
		proj := t.TempDir()
		p := filepath.Join(proj, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
		o := memdir.Options{Cwd: proj, Home: t.TempDir()}
		scopes := []memdir.Scope{memdir.ScopeProject}
		if link == ".claude" {
			scopes = append(scopes, memdir.ScopeLocal)
		}
		for _, scope := range scopes {
			got, err := memdir.AgentDir(o, "reviewer", scope)
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s (%s): AgentDir = %q, %v; want a refusal of the link", link, scope, got, err)
			}
		}
	}
	// The snapshot's directory likewise.
	for _, link := range []string{".claude/memory-snapshot", ".claude/agent-memory-snapshots/reviewer", ".claude/agent-memory-snapshots"} {
		proj := t.TempDir()
		p := filepath.Join(proj, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
		agent := ""
		if strings.Contains(link, "agent") {
			agent = "reviewer"
		}
		got, err := memdir.SnapshotDir(memdir.Options{Cwd: proj, Home: t.TempDir()}, agent)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: SnapshotDir = %q, %v; want a refusal of the link", link, got, err)
		}
	}
	// A user-scope agent memory may be a link: the user's home is the
	// user's.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(home, ".claude", "agent-memory")); err != nil {
		t.Fatal(err)
	}
	if _, err := memdir.AgentDir(memdir.Options{Cwd: t.TempDir(), Home: home}, "reviewer", memdir.ScopeUser); err != nil {
		t.Errorf("a user-scope agent memory through a link of the user's: %v", err)
	}
}
