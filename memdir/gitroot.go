package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/memstore/memstore"
)

// CanonicalGitRoot finds the git repository that holds dir
// (docs/memory-directory.md, Project root).
// gitRoot is the nearest directory at or above dir with a .git directory
// or file; canonical is the directory that names the repository as a
// whole, shared by all its worktrees: for a linked worktree, the main
// checkout (or the bare repository itself, when its common git directory
// is not named .git); for a main checkout, a submodule, or a .git file
// that fails the checks below, gitRoot itself. Both are "" outside git,
// and both are NFC-normalised, as Claude Code reports them.
//
// A .git file is followed only when the worktree entry it names sits
// directly in <commondir>/worktrees/ and that entry's gitdir file points
// back at this directory's .git: otherwise a repository could borrow
// another one's entry, and its memory. Files that cannot be read count as
// failed checks, never as errors; the error is for a dir that cannot be
// made absolute.
func CanonicalGitRoot(dir string) (gitRoot, canonical string, err error) {
	root, canon, _, err := gitRoots(dir)
	return root, canon, err
}

// gitRoots is CanonicalGitRoot with, when a .git file was not followed for
// a reason worth telling the user, that reason.
func gitRoots(dir string) (gitRoot, canonical, notFollowed string, err error) {
	if dir == "" {
		return "", "", "", errors.New("find git root: no directory given")
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", "", fmt.Errorf("find git root: %w", err)
	}
	// The walk uses the names as stored, so that it works on file systems
	// that do not fold Unicode forms; only the results are normalised.
	root := findGitRoot(dir)
	if root == "" {
		return "", "", "", nil
	}
	canon, why := canonicalRoot(root)
	return norm.NFC.String(root), norm.NFC.String(canon), why, nil
}

// findGitRoot is the nearest directory at or above dir holding a .git
// directory or regular file (after symlinks), "" when there is none.
func findGitRoot(dir string) string {
	for cur := dir; ; {
		if fi, err := os.Stat(filepath.Join(cur, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return cur
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return ""
		}
		cur = parent
	}
}

// canonicalRoot follows root's .git file, if it is one, to the checkout
// that owns the repository. It returns root itself, with the reason when
// the file names a worktree entry that fails a check.
func canonicalRoot(root string) (canonical, notFollowed string) {
	dotGit := filepath.Join(root, ".git")
	data, err := os.ReadFile(dotGit)
	if err != nil { // a .git directory: a main checkout
		return root, ""
	}
	content := memstore.TrimJS(string(data))
	gitdir, ok := strings.CutPrefix(content, "gitdir:")
	if !ok {
		return root, ""
	}
	entry := resolvePath(root, memstore.TrimJS(gitdir))
	cd, err := os.ReadFile(filepath.Join(entry, "commondir"))
	if err != nil {
		if _, serr := os.Stat(entry); errors.Is(serr, fs.ErrNotExist) {
			return root, fmt.Sprintf("%s points at %s, which does not exist", dotGit, entry)
		}
		return root, "" // a submodule: its git directory has no commondir
	}
	common := resolvePath(entry, memstore.TrimJS(string(cd)))
	if filepath.Dir(entry) != filepath.Join(common, "worktrees") {
		return root, fmt.Sprintf("%s points at %s, which is not an entry of %s", dotGit, entry, filepath.Join(common, "worktrees"))
	}
	back, err := os.ReadFile(filepath.Join(entry, "gitdir"))
	if err != nil {
		return root, fmt.Sprintf("%s points at %s, which has no gitdir back-link", dotGit, entry)
	}
	// Git writes an absolute back-link, or (worktree.useRelativePaths)
	// one relative to the entry.
	backReal, err1 := filepath.EvalSymlinks(resolvePath(entry, memstore.TrimJS(string(back))))
	rootReal, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil || backReal != filepath.Join(rootReal, ".git") {
		return root, fmt.Sprintf("%s points at %s, which belongs to another worktree", dotGit, entry)
	}
	if filepath.Base(common) != ".git" { // a bare repository
		return common, ""
	}
	return filepath.Dir(common), ""
}

// resolvePath is p made absolute against base, cleaned (path.resolve in
// Node).
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
