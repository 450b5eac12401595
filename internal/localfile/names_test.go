package localfile

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
		{strings.Repeat("x", MaxNameBytes), "linux", false},
		{strings.Repeat("x", MaxNameBytes+1), "linux", true},
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
		{"AUTHOR~1", "windows", true}, // authorized_keys' short name
		{"known_~2", "windows", true},
		{"MEMORY~1.MD", "windows", true},
		{"AUTHOR~1", "linux", false},
		{"a~b.md", "windows", false},
		{"notes~draft.md", "windows", false},
	} {
		why := NameProblem(tt.name, tt.goos)
		if (why != "") != tt.refused {
			t.Errorf("NameProblem(%q, %s) = %q; want refused %v", tt.name, tt.goos, why, tt.refused)
		}
	}
}

// TestPathProblem: a path is refused for any of its segments, and for
// its length with the directory's.
func TestPathProblem(t *testing.T) {
	dir := "/home/me/mem"
	seg := strings.Repeat("d", 200)
	long := seg
	for len(dir)+1+len(long)+len(seg)+1 <= MaxPathBytes("linux") {
		long += "/" + seg
	}
	for _, tt := range []struct {
		rel     string
		refused bool
	}{
		{"notes/a.md", false},
		{"notes/.git/config", true},
		{".env", true},
		{"a/．．/b.md", true},
		{long, false},
		{long + "/" + seg, true},
	} {
		if why := PathProblem(dir, tt.rel, "linux"); (why != "") != tt.refused {
			t.Errorf("PathProblem(%q) = %q; want refused %v", tt.rel, why, tt.refused)
		}
	}
}
