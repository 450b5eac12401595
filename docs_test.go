package memstore_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
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

// maxReadmeBytes keeps the README a page a person reads: what memstore
// is, how to run it, a walk-through and the maps. Everything else lives
// in docs/.
const maxReadmeBytes = 15 << 10

// readmeSection returns the text of the README's section headed title,
// up to the next section.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// TestReadme keeps the README short, and its test command the one CI
// runs, so that what a newcomer runs is what CI checks.
func TestReadme(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxReadmeBytes {
		t.Errorf("README.md is %d bytes, over %d: move detail into docs/", len(b), maxReadmeBytes)
	}
	cmd := regexp.MustCompile(`(?m)^go test .*$`).FindString(readmeSection(t, "Run it, and run the tests"))
	if cmd == "" {
		t.Fatal("the README's section Run it, and run the tests has no go test command")
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", cmd)
	}
}

// TestReadmeSourceTree checks the README's map of the source tree
// against go list: every package is listed, and every entry is a
// package.
func TestReadmeSourceTree(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	// Directories relative to the module's root, as path.Clean writes
	// them: "." for the root package.
	packages := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		packages[path.Clean("./"+strings.TrimPrefix(p, module))] = true
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(readmeSection(t, "The source tree"), -1) {
		dir := path.Clean(m[1])
		if listed[dir] {
			t.Errorf("the README lists %s twice", m[1])
		}
		listed[dir] = true
		if !packages[dir] {
			t.Errorf("the README's source tree lists %s, which is no package", m[1])
		}
	}
	for dir := range packages {
		if !listed[dir] {
			t.Errorf("the README's source tree does not list the package in %s/", dir)
		}
	}
}

var (
	// A Markdown link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence  = regexp.MustCompile("(?ms)^```.*?^```")
	code   = regexp.MustCompile("`[^`\n]*`")
	// What GitHub drops from a heading to make its anchor.
	anchorDrop = regexp.MustCompile(`[^\p{L}\p{N}_ -]`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation dropped, spaces made hyphens, and a
// heading met again numbered -1, -2, ...
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		a := strings.ReplaceAll(anchorDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks checks every relative link of the Markdown files: its
// file exists, and its anchor, if any, is a heading of that file, so that
// moving a section cannot leave a link pointing nowhere.
func TestDocLinks(t *testing.T) {
	files := repoTexts(t)
	checked := 0
	for doc, text := range files {
		if filepath.Ext(doc) != ".md" {
			continue
		}
		prose := code.ReplaceAllString(fence.ReplaceAllString(text, ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := doc
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(doc), file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which does not exist", doc, target)
					continue
				}
			}
			checked++
			if anchor == "" {
				continue
			}
			destText, ok := files[dest]
			if !ok {
				t.Errorf("%s links to %s: an anchor in a file that is not Markdown", doc, target)
				continue
			}
			if !anchors(destText)[anchor] {
				t.Errorf("%s links to %s, but %s has no heading with that anchor", doc, target, dest)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link was found; the pattern no longer matches Markdown links")
	}
}

// TestDocsContents checks that each document of docs/ with more than two
// sections opens with a table of contents that links every one of them.
func TestDocsContents(t *testing.T) {
	section := regexp.MustCompile(`(?m)^## (.+?)[ \t]*$`)
	for doc, text := range repoTexts(t) {
		if !strings.HasPrefix(doc, "docs/") || filepath.Ext(doc) != ".md" {
			continue
		}
		titles := section.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1)
		if len(titles) <= 2 {
			continue
		}
		_, contents, ok := strings.Cut(text, "\n## Contents\n")
		if !ok {
			t.Errorf("%s has %d sections and no table of contents (## Contents)", doc, len(titles))
			continue
		}
		contents, _, _ = strings.Cut(contents, "\n## ")
		for _, m := range titles {
			if m[1] != "Contents" && !strings.Contains(contents, "["+m[1]+"](#") {
				t.Errorf("%s: the table of contents does not link the section %q", doc, m[1])
			}
		}
	}
}
