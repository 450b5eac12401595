package memstore_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoTexts returns the .go and .md files of the repository, by path
// relative to its root (this package's directory), with their contents.
// Hidden directories and installed node_modules are not the repository's.
func repoTexts(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(name); ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(path)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoOutsideReferences keeps memstore's documentation its own: no
// source or Markdown file may cite a numbered section or a document that
// is not in the repository, which people who clone it cannot read. The
// contract is in docs/, which code cites by heading.
func TestNoOutsideReferences(t *testing.T) {
	forbidden := []struct{ text, why string }{
		{"\u00a7", "a section sign: cite a heading of docs/ instead, as (docs/api.md, Preconditions)"},
		// Spelled in two pieces so that this file does not match itself.
		{"../" + "shared", "a document outside the repository: describe it in docs/ instead"},
	}
	files := repoTexts(t)
	if len(files) < 10 {
		t.Fatalf("found only %d files: not run from the repository's root?", len(files))
	}
	for path, text := range files {
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, len(text)+1)
		for n := 1; sc.Scan(); n++ {
			for _, f := range forbidden {
				if strings.Contains(sc.Text(), f.text) {
					t.Errorf("%s:%d has %q, %s", path, n, f.text, f.why)
				}
			}
		}
	}
}

// A citation names a file of docs/, and may go on with ", " or " (" and
// a heading of that file: (docs/api.md, Preconditions). Comment markers
// at line starts are dropped first, so that a citation may run over two
// lines of a comment.
var (
	citation     = regexp.MustCompile(`(?:^|[^\w/.-])docs/([\w-]+\.md)(, | \()?`)
	continuation = regexp.MustCompile(`[ \t]*\n[ \t]*(?://[ \t]*)?`)
	heading      = regexp.MustCompile(`(?m)^#+[ \t]+(.+?)[ \t]*$`)
)

// TestDocsCitations checks that every file of docs/ that the repository
// names exists, and that every heading it cites is one of that file's, so
// that a renamed heading cannot leave citations pointing nowhere.
func TestDocsCitations(t *testing.T) {
	files := repoTexts(t)
	headings := map[string][]string{}
	for path, text := range files {
		if name, ok := strings.CutPrefix(path, "docs/"); ok {
			for _, m := range heading.FindAllStringSubmatch(text, -1) {
				headings[name] = append(headings[name], m[1])
			}
		}
	}
	cited := 0
	for path, text := range files {
		flat := continuation.ReplaceAllString(text, " ")
		for _, m := range citation.FindAllStringSubmatchIndex(flat, -1) {
			doc := flat[m[2]:m[3]]
			hs, ok := headings[doc]
			if !ok {
				t.Errorf("%s cites docs/%s, which does not exist", path, doc)
				continue
			}
			if m[4] < 0 {
				continue // the document as a whole
			}
			rest := flat[m[5]:]
			found := false
			for _, h := range hs {
				if strings.HasPrefix(rest, h) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s cites docs/%s at %q, which begins with none of its headings", path, doc, rest[:min(len(rest), 40)])
			}
			cited++
		}
	}
	if cited == 0 {
		t.Error("no citation of a heading of docs/ was found; the pattern no longer matches how code cites them")
	}
}
