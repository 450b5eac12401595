package memorytool_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

// fuzzSentinel is the content of the file next to the memory root that no
// input may change.
const fuzzSentinel = "sentinel: outside the memory root\n"

// fuzzFixture is a memory root inside a temporary directory that also holds
// things the tool must never touch:
//
//	parent/sentinel.txt          a file outside the root
//	parent/sibling/keep.txt      a directory outside the root
//	parent/memories/             the root
//	    notes.md, sub/deep.md    ordinary memory files
//	    link_out -> ../sibling   symlinks leading outside
//	    link_file -> ../sentinel.txt
//	    link_abs -> parent/sibling (absolute)
//	    link_in -> sub           a symlink staying inside
type fuzzFixture struct {
	parent, real string // the temporary directory, as given and resolved
	root         string
	tool         *memorytool.Local
	outside      map[string]string // snapshot of parent without the root
}

func newFuzzFixture(t *testing.T) *fuzzFixture {
	t.Helper()
	parent := t.TempDir()
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(parent, "memories")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(parent, "sentinel.txt"), []byte(fuzzSentinel), 0o600))
	must(os.Mkdir(filepath.Join(parent, "sibling"), 0o700))
	must(os.WriteFile(filepath.Join(parent, "sibling", "keep.txt"), []byte("keep\n"), 0o600))
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o700))
	must(os.WriteFile(filepath.Join(root, "notes.md"), []byte("hello\nworld\nunique line\n"), 0o600))
	must(os.WriteFile(filepath.Join(root, "sub", "deep.md"), []byte("deep\n"), 0o600))
	must(os.Symlink("../sibling", filepath.Join(root, "link_out")))
	must(os.Symlink("../sentinel.txt", filepath.Join(root, "link_file")))
	must(os.Symlink(filepath.Join(parent, "sibling"), filepath.Join(root, "link_abs")))
	must(os.Symlink("sub", filepath.Join(root, "link_in")))
	tool, err := memorytool.OpenLocal(root, memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Close() })
	fx := &fuzzFixture{parent: parent, real: real, root: root, tool: tool}
	fx.outside = fx.snapshot(t)
	return fx
}

// snapshot describes everything below parent except the root: each entry's
// type and modification time and, for a file, its content's hash; for a
// symlink, its target.
func (fx *fuzzFixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	snap := make(map[string]string)
	err := filepath.WalkDir(fx.parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == fx.root {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(fx.parent, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		// The modification time shows an entry made and removed again.
		desc := info.Mode().String() + " " + info.ModTime().String()
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		snap[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return snap
}

// check runs one input and verifies that nothing outside the root changed
// and that the result is well-formed.
func (fx *fuzzFixture) check(t *testing.T, input []byte) {
	t.Helper()
	res := memorytool.Execute(context.Background(), fx.tool, input)
	if res.IsError && !strings.HasPrefix(res.Content, "Error: ") {
		t.Errorf("input %q: error result does not start with \"Error: \": %q", input, res.Content)
	}
	for _, host := range []string{fx.parent, fx.real} {
		if strings.Contains(res.Content, host) && !bytes.Contains(input, []byte(host)) {
			t.Errorf("input %q: result contains the host path %s: %q", input, host, res.Content)
		}
	}
	b, err := os.ReadFile(filepath.Join(fx.parent, "sentinel.txt"))
	if err != nil || string(b) != fuzzSentinel {
		t.Fatalf("input %q: sentinel file changed: %q, %v", input, b, err)
	}
	if fi, err := os.Stat(fx.root); err != nil || !fi.IsDir() {
		t.Fatalf("input %q: the root is gone: %v", input, err)
	}
	if now := fx.snapshot(t); !maps.Equal(now, fx.outside) {
		var diff []string
		for _, k := range slices.Sorted(maps.Keys(now)) {
			if fx.outside[k] != now[k] {
				diff = append(diff, fmt.Sprintf("%s: %q -> %q", k, fx.outside[k], now[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(fx.outside)) {
			if _, ok := now[k]; !ok {
				diff = append(diff, fmt.Sprintf("%s: removed", k))
			}
		}
		t.Fatalf("input %q (result %q) changed the directory outside the root:\n%s", input, res.Content, strings.Join(diff, "\n"))
	}
}

// fuzzInput builds a tool input from structured fields: every field a
// command might read is set, so one set of fields drives any command.
// text is file_text and insert_text, the new_path of a rename, and
// "old|new" for str_replace; line is insert_line and, when not 0, the
// start of view_range.
func fuzzInput(command, p, text string, line int) []byte {
	oldStr, newStr, _ := strings.Cut(text, "|")
	in := map[string]any{
		"command":     command,
		"path":        p,
		"file_text":   text,
		"old_str":     oldStr,
		"new_str":     newStr,
		"insert_line": line,
		"insert_text": text,
		"old_path":    p,
		"new_path":    text,
	}
	if line != 0 {
		in["view_range"] = []int{line, -1}
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzExecute runs arbitrary tool inputs, raw and structured, on a memory
// root next to files it must not reach. The seed corpus, with traversal
// attacks and valid commands of every kind, is in testdata/fuzz/FuzzExecute.
func FuzzExecute(f *testing.F) {
	f.Add([]byte(`{"command":"view","path":"/memories"}`), "", "", "", 0)
	f.Add([]byte(`{"command":"view","path":"/memories/../sentinel.txt"}`), "view", "/memories/link_file", "", 0)
	f.Add([]byte(`{"command":"create","path":"/memories/link_out/new.md","file_text":"x"}`), "create", "/memories/link_abs/new.md", "pwned", 0)
	f.Add([]byte(`{"command":"str_replace","path":"/memories/link_file","old_str":"sentinel","new_str":"pwned"}`), "str_replace", "/memories/notes.md", "unique line|changed", 0)
	f.Add([]byte(`{"command":"insert","path":"/memories/link_file","insert_line":0,"insert_text":"x"}`), "insert", "/memories/sub/deep.md", "inserted\n", 1)
	f.Add([]byte(`{"command":"delete","path":"/memories/link_out/keep.txt"}`), "delete", "/memories/..", "", 0)
	f.Add([]byte(`{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/link_out/notes.md"}`), "rename", "/memories/link_file", "/memories/stolen.md", 0)
	f.Add([]byte(`{"command":"rename","old_path":"/memories/link_in/deep.md","new_path":"/memories/%2e%2e/x"}`), "rename", "/memories/sub", "/memories/link_out/sub", 0)
	f.Add([]byte("{\"command\":\"view\",\"path\":\"/memories/a\\u0000b\"}"), "view", "/memoriesX/../sentinel.txt", "", 2)
	f.Fuzz(func(t *testing.T, raw []byte, command, p, text string, line int) {
		fx := newFuzzFixture(t)
		fx.check(t, raw)
		if command != "" {
			fx.check(t, fuzzInput(command, p, text, line))
		}
	})
}
