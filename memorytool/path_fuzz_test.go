package memorytool

import (
	"path"
	"strings"
	"testing"
)

// FuzzPath checks cleanPath on any string: it never panics, and what it
// accepts is "." or a clean relative path that cannot leave the root.
// The seed corpus is in testdata/fuzz/FuzzPath.
func FuzzPath(f *testing.F) {
	for _, p := range []string{
		"/memories",
		"/memories/",
		"/memories/.",
		"/memories/notes.md",
		"/memories/a/b/../c.md",
		"/memories/..",
		"/memories/../etc/passwd",
		"/memories/a/../../x",
		"/memories//../x",
		`/memories/..\..\x`,
		"/memories/%2e%2e%2fx",
		"/memories/%252e%252e%252fx",
		"/memories/%c0%ae%c0%ae/x",
		"/memories/a\x00b",
		"/memoriesX/a",
		"/etc/passwd",
		"memories/a",
		"",
		"/memories/\u2215etc",
		"/memories/\uff0fetc",
		"/memories/\u2024\u2024/x",
		"/memories/" + strings.Repeat("a", 300),
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := cleanPath(p)
		if err != nil {
			if rel != "" {
				t.Errorf("cleanPath(%q) = %q with error %v; want no path with an error", p, rel, err)
			}
			if !IsModelError(err) {
				t.Errorf("cleanPath(%q) error %v is not an *Error", p, err)
			}
			return
		}
		if p != Root && !strings.HasPrefix(p, Root+"/") {
			t.Errorf("cleanPath(%q) = %q: accepted a path outside %s", p, rel, Root)
		}
		if rel == "." {
			return
		}
		switch {
		case rel == "":
			t.Errorf("cleanPath(%q) = empty path", p)
		case strings.HasPrefix(rel, "/"):
			t.Errorf("cleanPath(%q) = %q: absolute", p, rel)
		case path.Clean(rel) != rel:
			t.Errorf("cleanPath(%q) = %q: not clean (Clean gives %q)", p, rel, path.Clean(rel))
		case strings.IndexByte(rel, 0) >= 0:
			t.Errorf("cleanPath(%q) = %q: contains NUL", p, rel)
		}
		for _, elem := range strings.Split(rel, "/") {
			if elem == ".." || elem == "." || elem == "" {
				t.Errorf("cleanPath(%q) = %q: has element %q", p, rel, elem)
			}
		}
	})
}
