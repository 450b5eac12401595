package dirsync

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
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

// FuzzPathProblem: whatever path a store lists, checking it never panics,
// and a path let through stays inside the directory, with no segment that
// is hidden, or is or holds a ".", a ".." or a separator, as given, once
// percent-decoded or once folded (NFKC).
func FuzzPathProblem(f *testing.F) {
	for _, p := range []string{"/a.md", "/notes/b.md", "/../x.md", "/%2e%2e/x.md", "/\uff0e\uff0e/x.md", "/.git/config", `/a\b.md`, "/x\u2215y.md"} {
		f.Add(p)
	}
	root := filepath.Join(string(filepath.Separator)+"home", "me", "mem")
	private := &syncer{o: Options{Dir: root, Scope: ScopePrivate}}
	team := &syncer{o: Options{Dir: root, Scope: ScopeTeam}}
	f.Fuzz(func(t *testing.T, p string) {
		for _, goos := range []string{"linux", "windows", "darwin"} {
			for seg := range strings.SplitSeq(p, "/") {
				nameProblem(seg, goos)
			}
		}
		why := private.pathProblem(p)
		if team.pathProblem(p) != "" || why != "" {
			return
		}
		rel := p[1:]
		if !filepath.IsLocal(filepath.FromSlash(rel)) || !strings.HasPrefix(filepath.Join(root, rel), root+string(filepath.Separator)) {
			t.Fatalf("%q accepted, but leaves the directory", p)
		}
		for seg := range strings.SplitSeq(rel, "/") {
			for _, form := range readings(seg) {
				if form == "." || form == ".." || strings.ContainsAny(form, `/\`) || strings.HasPrefix(form, ".") {
					t.Fatalf("%q accepted, but its segment %q reads as %q", p, seg, form)
				}
			}
		}
	})
}

// readings are the ways a tool could read a name: as it is, percent-decoded
// once or more, and each of those folded by NFKC.
func readings(name string) []string {
	var out []string
	for range 8 {
		out = append(out, name, norm.NFKC.String(name))
		dec, err := url.PathUnescape(name)
		if err != nil || dec == name {
			break
		}
		name = dec
	}
	return out
}
