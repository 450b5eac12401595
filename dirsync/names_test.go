package dirsync

import (
	"strings"
	"testing"
)

// TestNameProblem: the names a memory path may not have here, and some it
// may, on Linux and on Windows.
func TestNameProblem(t *testing.T) {
	for _, tt := range []struct {
		name    string
		goos    string
		refused bool
	}{
		{"notes.md", "linux", false},
		{"½ cup.md", "linux", false},
		{"ノート.md", "linux", false},
		{"…and more.md", "linux", true}, // NFKC: "...and more.md", hidden
		{"a%20b.md", "linux", false},
		{strings.Repeat("x", maxNameBytes), "linux", false},
		{strings.Repeat("x", maxNameBytes+1), "linux", true},
		{".git", "linux", true},
		{"GIT~1", "linux", true},
		{"%2Egit", "linux", true},
		{"%252e%252e", "linux", true},
		{"%25252525252e", "linux", true}, // still encoded after the rounds
		{"\uff0e\uff0e", "linux", true},
		{"\ufe52", "linux", true}, // small full stop
		{"a\u29f8b", "linux", true},
		{"a\u2216b", "linux", true},
		{`a\b`, "linux", true},
		{"con.md", "linux", false},
		{"con.md", "windows", true},
		{"CON", "windows", true},
		{"Com1.txt", "windows", true},
		{"lpt¹", "windows", true},
		{"console.md", "windows", false},
		{"a:b.md", "windows", true},
		{"a:b.md", "linux", false},
		{"what?.md", "windows", true},
		{"trailing.", "windows", true},
		{"trailing ", "windows", true},
		{"fine.md", "windows", false},
	} {
		why := nameProblem(tt.name, tt.goos)
		if (why != "") != tt.refused {
			t.Errorf("nameProblem(%q, %s) = %q; want refused %v", tt.name, tt.goos, why, tt.refused)
		}
	}
}

// TestConflictCopyName: the copy's name keeps the extension and fits in
// a file name, cut at a character's boundary.
func TestConflictCopyName(t *testing.T) {
	for _, tt := range []struct{ rel, want string }{
		{"a/b.md", "a/b.conflict-dev-20260901T123456Z.md"},
		{"noext", "noext.conflict-dev-20260901T123456Z"},
		{strings.Repeat("é", 120) + ".md", strings.Repeat("é", 111) + ".conflict-dev-20260901T123456Z.md"},
		{"x." + strings.Repeat("e", 250), "x.conflict-dev-20260901T123456Z"},
	} {
		got := conflictCopyName(tt.rel, "dev", "20260901T123456Z", 1)
		if got != tt.want {
			t.Errorf("conflictCopyName(%q) = %q, want %q", tt.rel, got, tt.want)
		}
		if base := got[strings.LastIndex(got, "/")+1:]; len(base) > maxNameBytes || !conflictName.MatchString(base) {
			t.Errorf("conflictCopyName(%q) = %q: %d bytes, or not a conflict copy's name", tt.rel, got, len(base))
		}
	}
}
