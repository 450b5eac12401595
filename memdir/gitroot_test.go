package memdir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/memdir"
)

// gitEnv makes git work the same everywhere: no user or system
// configuration, a fixed identity.
func gitEnv(tb testing.TB) []string {
	tb.Helper()
	cfg := filepath.Join(tb.TempDir(), "gitconfig")
	writeTestFile(tb, cfg, "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
	return append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+cfg,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=memstore test", "GIT_AUTHOR_EMAIL=test@memstore.invalid",
		"GIT_COMMITTER_NAME=memstore test", "GIT_COMMITTER_EMAIL=test@memstore.invalid",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// git runs git in dir.
func git(tb testing.TB, env []string, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

// repos is a set of real git repositories in every shape that matters for
// the canonical root.
type repos struct {
	root     string // holds them all
	main     string // a main checkout, with pkg/deep inside
	other    string // a second repository, added to main as submodule sub
	sub      string // main/sub
	wt       string // a linked worktree of main
	relwt    string // a linked worktree of main whose links are relative
	bare     string // bare.git, a bare clone of main
	bwt      string // a worktree of bare.git
	thief    string // .git file naming wt's entry in main: back-link fails
	stray    string // .git file naming an entry outside worktrees/
	noprefix string // .git file without "gitdir:"
	gone     string // .git file naming a directory that does not exist
	plain    string // outside git
}

func newRepos(tb testing.TB) repos {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Fatal("these tests need the git command")
	}
	env := gitEnv(tb)
	root := realTempDir(tb)
	r := repos{
		root:     root,
		main:     filepath.Join(root, "main"),
		other:    filepath.Join(root, "other"),
		wt:       filepath.Join(root, "wt"),
		relwt:    filepath.Join(root, "relwt"),
		bare:     filepath.Join(root, "bare.git"),
		bwt:      filepath.Join(root, "bwt"),
		thief:    filepath.Join(root, "thief"),
		stray:    filepath.Join(root, "stray"),
		noprefix: filepath.Join(root, "noprefix"),
		gone:     filepath.Join(root, "gone"),
		plain:    filepath.Join(root, "plain", "dir"),
	}
	r.sub = filepath.Join(r.main, "sub")
	for _, d := range []string{r.main, r.other} {
		mkdirs(tb, d)
		git(tb, env, d, "init", "-q")
		writeTestFile(tb, filepath.Join(d, "README.md"), "hello\n")
		git(tb, env, d, "add", "README.md")
		git(tb, env, d, "commit", "-q", "-m", "first")
	}
	mkdirs(tb, filepath.Join(r.main, "pkg", "deep"), r.plain)
	git(tb, env, r.main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", r.other, "sub")
	mkdirs(tb, filepath.Join(r.sub, "inner"))
	git(tb, env, r.main, "worktree", "add", "-q", r.wt)
	mkdirs(tb, filepath.Join(r.wt, "pkg"))
	git(tb, env, r.root, "clone", "-q", "--bare", r.main, r.bare)
	git(tb, env, r.bare, "worktree", "add", "-q", r.bwt)

	// Links as git writes them with worktree.useRelativePaths: the .git
	// file relative to the worktree, the back-link relative to the entry.
	git(tb, env, r.main, "worktree", "add", "-q", r.relwt)
	writeTestFile(tb, filepath.Join(r.relwt, ".git"), "gitdir: ../main/.git/worktrees/relwt\n")
	writeTestFile(tb, filepath.Join(r.main, ".git", "worktrees", "relwt", "gitdir"), "../../../../relwt/.git\n")

	// A directory that borrows wt's worktree entry: the entry is where a
	// worktree entry belongs, but its back-link names wt.
	writeTestFile(tb, filepath.Join(r.thief, ".git"), "gitdir: "+filepath.Join(r.main, ".git", "worktrees", "wt")+"\n")
	// A directory whose entry links back to it but is not in worktrees/.
	entry := filepath.Join(r.root, "evil", "entry")
	writeTestFile(tb, filepath.Join(entry, "commondir"), filepath.Join(r.main, ".git")+"\n")
	writeTestFile(tb, filepath.Join(entry, "gitdir"), filepath.Join(r.stray, ".git")+"\n")
	writeTestFile(tb, filepath.Join(r.stray, ".git"), "gitdir: "+entry+"\n")

	writeTestFile(tb, filepath.Join(r.noprefix, ".git"), "not a link\n")
	writeTestFile(tb, filepath.Join(r.gone, ".git"), "gitdir: ../nowhere/.git/worktrees/gone\n")
	return r
}

func TestCanonicalGitRoot(t *testing.T) {
	r := newRepos(t)
	tests := []struct {
		name, dir, gitRoot, canonical string
	}{
		{"main checkout", r.main, r.main, r.main},
		{"main subdirectory", filepath.Join(r.main, "pkg", "deep"), r.main, r.main},
		{"inside .git", filepath.Join(r.main, ".git", "refs"), r.main, r.main},
		{"linked worktree", r.wt, r.wt, r.main},
		{"linked worktree subdirectory", filepath.Join(r.wt, "pkg"), r.wt, r.main},
		{"relative links", r.relwt, r.relwt, r.main},
		{"submodule", r.sub, r.sub, r.sub},
		{"submodule subdirectory", filepath.Join(r.sub, "inner"), r.sub, r.sub},
		{"second repository", r.other, r.other, r.other},
		{"worktree of a bare repository", r.bwt, r.bwt, r.bare},
		{"borrowed worktree entry", r.thief, r.thief, r.thief},
		{"worktree entry outside worktrees/", r.stray, r.stray, r.stray},
		{".git file without gitdir:", r.noprefix, r.noprefix, r.noprefix},
		{".git file naming nothing", r.gone, r.gone, r.gone},
		{"outside git", r.plain, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gitRoot, canonical, err := memdir.CanonicalGitRoot(tt.dir)
			if err != nil || gitRoot != tt.gitRoot || canonical != tt.canonical {
				t.Errorf("CanonicalGitRoot(%s) = %q, %q, %v; want %q, %q", tt.dir, gitRoot, canonical, err, tt.gitRoot, tt.canonical)
			}
		})
	}
	if _, _, err := memdir.CanonicalGitRoot(""); err == nil {
		t.Error("CanonicalGitRoot(\"\") succeeded")
	}
}

// Every worktree of a repository shares one memory directory; a
// submodule, a second repository and a directory that borrows a worktree
// entry each have their own, and a borrowed entry is reported.
func TestResolveGit(t *testing.T) {
	r := newRepos(t)
	home := filepath.Join(r.root, "home")
	link := filepath.Join(r.root, "link-to-wt-pkg")
	if err := os.Symlink(filepath.Join(r.wt, "pkg"), link); err != nil {
		t.Fatal(err)
	}
	dirOf := func(root string) string {
		return filepath.Join(home, ".claude", "projects", memdir.Sanitize(root), "memory") + "/"
	}
	tests := []struct {
		name, cwd, workDir, gitRoot, canonical string
		warning                                string // part of the one warning expected, "" for none
	}{
		{"main", r.main, r.main, r.main, r.main, ""},
		{"main subdirectory", filepath.Join(r.main, "pkg", "deep"), filepath.Join(r.main, "pkg", "deep"), r.main, r.main, ""},
		{"worktree", r.wt, r.wt, r.wt, r.main, ""},
		{"symlink into a worktree", link, filepath.Join(r.wt, "pkg"), r.wt, r.main, ""},
		{"relative links", r.relwt, r.relwt, r.relwt, r.main, ""},
		{"submodule", filepath.Join(r.sub, "inner"), filepath.Join(r.sub, "inner"), r.sub, r.sub, ""},
		{"bare worktree", r.bwt, r.bwt, r.bwt, r.bare, ""},
		{"borrowed entry", r.thief, r.thief, r.thief, r.thief, "belongs to another worktree"},
		{"entry outside worktrees/", r.stray, r.stray, r.stray, r.stray, "is not an entry of " + filepath.Join(r.main, ".git", "worktrees")},
		{"entry that does not exist", r.gone, r.gone, r.gone, r.gone, "does not exist"},
		{"outside git", r.plain, r.plain, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warnings []string
			loc, err := memdir.Resolve(memdir.Options{Cwd: tt.cwd, Home: home, Warn: func(s string) { warnings = append(warnings, s) }})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.canonical
			if want == "" {
				want = tt.workDir
			}
			if loc.WorkDir != tt.workDir || loc.GitRoot != tt.gitRoot || loc.CanonicalRoot != tt.canonical {
				t.Errorf("WorkDir, GitRoot, CanonicalRoot = %q, %q, %q; want %q, %q, %q", loc.WorkDir, loc.GitRoot, loc.CanonicalRoot, tt.workDir, tt.gitRoot, tt.canonical)
			}
			if loc.Slug != memdir.Sanitize(want) || loc.Dir != dirOf(want) {
				t.Errorf("Slug, Dir = %q, %q; want those of %s", loc.Slug, loc.Dir, want)
			}
			switch {
			case tt.warning == "" && len(warnings) != 0:
				t.Errorf("warnings %q; want none", warnings)
			case tt.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warning) || !strings.Contains(warnings[0], "not followed")):
				t.Errorf("warnings %q; want one with %q", warnings, tt.warning)
			}
		})
	}
}

// A repository inside a directory named in NFD is found, and its roots
// and memory directory are those of the NFC name.
func TestResolveGitNFD(t *testing.T) {
	env := gitEnv(t)
	root := realTempDir(t)
	repo := filepath.Join(root, "re\u0301sume\u0301")
	mkdirs(t, filepath.Join(repo, "src"))
	git(t, env, repo, "init", "-q")
	loc, err := memdir.Resolve(memdir.Options{Cwd: filepath.Join(repo, "src"), Home: filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	nfc := filepath.Join(root, "r\u00e9sum\u00e9")
	if loc.GitRoot != nfc || loc.CanonicalRoot != nfc || loc.Slug != memdir.Sanitize(nfc) {
		t.Errorf("GitRoot, CanonicalRoot, Slug = %q, %q, %q; want the NFC %q", loc.GitRoot, loc.CanonicalRoot, loc.Slug, nfc)
	}
	if !strings.HasSuffix(loc.Slug, "-r-sum-") {
		t.Errorf("Slug %q; want é as one unit", loc.Slug)
	}
}
