package main

import (
	"strings"
	"testing"
)

// grep's --mode: checked by the flag, and refused by a core without an
// embedding model with a message that says how to configure one;
// --conversation reaches the search.
func TestGrepModes(t *testing.T) {
	clearEnv(t)
	db := notesDatabase(t)
	if code, _, stderr := run(t, "we adopted a dog\n", "--db", db, "put", "--store", "notes", "/chat/0001.md"); code != 0 {
		t.Fatalf("put: exit %d: %s", code, stderr)
	}
	code, _, stderr := run(t, "", "--db", db, "grep", "--store", "notes", "--mode", "fuzzy", "dog")
	if code != 2 || !strings.Contains(stderr, "must be one of lexical, semantic, hybrid") {
		t.Errorf("--mode fuzzy: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, "", "--db", db, "grep", "--store", "notes", "--mode", "semantic", "dog")
	if code != 1 || !strings.Contains(stderr, "no embedding model") || !strings.Contains(stderr, "--embed-url") {
		t.Errorf("--mode semantic without a model: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := run(t, "her name is Bella\n", "--db", db, "put", "--store", "notes", "/chat/0002.md"); code != 0 {
		t.Fatalf("put: exit %d: %s", code, stderr)
	}
	// The next turn, without the word, is found beside the match only as
	// a turn of a conversation.
	for _, c := range []struct {
		args   []string
		beside bool
	}{{[]string{"--mode", "lexical"}, false}, {[]string{"--conversation"}, true}} {
		code, stdout, stderr := run(t, "", append([]string{"--db", db, "grep", "--store", "notes", "dog"}, c.args...)...)
		if code != 0 || !strings.HasPrefix(stdout, "/chat/0001.md  (") || strings.Contains(stdout, "/chat/0002.md") != c.beside {
			t.Errorf("grep %v: exit %d, stdout %q, stderr %q", c.args, code, stdout, stderr)
		}
	}
}
