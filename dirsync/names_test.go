package dirsync

import (
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore/internal/localfile"
)

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
		if base := got[strings.LastIndex(got, "/")+1:]; len(base) > localfile.MaxNameBytes || !conflictName.MatchString(base) {
			t.Errorf("conflictCopyName(%q) = %q: %d bytes, or not a conflict copy's name", tt.rel, got, len(base))
		}
	}
}

// FuzzPathProblem: whatever path a store lists, checking it never panics,
// and a path let through stays inside the directory, with no segment that
// is hidden, or is or holds a ".", a ".." or a separator, as given, once
// percent-decoded or once folded (NFKC); and its file's name, in any case,
// is not one of SSH's keys or trust files, nor a shell's start-up file.
func FuzzPathProblem(f *testing.F) {
	for _, p := range []string{"/a.md", "/notes/b.md", "/../x.md", "/%2e%2e/x.md", "/\uff0e\uff0e/x.md", "/.git/config", `/a\b.md`, "/x\u2215y.md",
		"/authorized_keys", "/notes/ID_RSA", "/fish/config.fish", "/known_ho\u017fts", "/id_ed25519.pub", "/_netrc"} {
		f.Add(p)
	}
	root := filepath.Join(string(filepath.Separator)+"home", "me", "mem")
	private := &syncer{o: Options{Dir: root, Scope: ScopePrivate}}
	team := &syncer{o: Options{Dir: root, Scope: ScopeTeam}}
	f.Fuzz(func(t *testing.T, p string) {
		for _, goos := range []string{"linux", "windows", "darwin"} {
			for seg := range strings.SplitSeq(p, "/") {
				localfile.NameProblem(seg, goos)
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
		if name := cases.Fold().String(norm.NFKC.String(path.Base(rel))); slices.Contains(startUpOrKeyNames, name) || sshKey.MatchString(name) {
			t.Fatalf("%q accepted, but its name reads as %q", p, name)
		}
	})
}

// startUpOrKeyNames and sshKey are names no sync may write, said apart
// from the rule that refuses them.
var (
	startUpOrKeyNames = []string{"authorized_keys", "authorized_keys2", "known_hosts", "rc", "config", "_netrc",
		"credentials", "pgpass.conf", "config.fish", "profile.ps1", "microsoft.powershell_profile.ps1", "identity"}
	sshKey = regexp.MustCompile(`^id_[a-z0-9_-]+(\.pub)?$`)
)

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
