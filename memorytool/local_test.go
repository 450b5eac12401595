package memorytool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/memorytool"
)

// mustOpen opens a fresh memory directory; the host directory is returned
// with it for checking effects.
func mustOpen(tb testing.TB, opts memorytool.Options) (*memorytool.Local, string) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "memories")
	tool, err := memorytool.OpenLocal(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tool.Close() })
	return tool, dir
}

// do runs one tool input given as a Go value.
func do(tb testing.TB, h memorytool.Handler, input map[string]any) memorytool.Result {
	tb.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		tb.Fatal(err)
	}
	return memorytool.Execute(context.Background(), h, raw)
}

func view(p string, vr ...int) map[string]any {
	in := map[string]any{"command": "view", "path": p}
	if vr != nil {
		in["view_range"] = vr
	}
	return in
}

func create(p, text string) map[string]any {
	return map[string]any{"command": "create", "path": p, "file_text": text}
}

func strReplace(p, o, n string) map[string]any {
	return map[string]any{"command": "str_replace", "path": p, "old_str": o, "new_str": n}
}

func insertAt(p string, line int, text string) map[string]any {
	return map[string]any{"command": "insert", "path": p, "insert_line": line, "insert_text": text}
}

func del(p string) map[string]any { return map[string]any{"command": "delete", "path": p} }

func rename(o, n string) map[string]any {
	return map[string]any{"command": "rename", "old_path": o, "new_path": n}
}

func write(tb testing.TB, name, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// fixture builds a tree with every kind of entry the tool meets:
//
//	a.txt "hello\nworld\n"      crlf.txt, bad.txt (invalid UTF-8), empty.txt
//	sub/b.md, sub/deep/c.md, sub/deep/deeper/d.md
//	.hidden, node_modules/x.js, sub/node_modules/y.js
//	link-file -> a.txt, link-dir -> sub, abs-link -> <root>/a.txt
//	out-dir -> <outside dir>, out-file -> <outside file>
//	dangling -> nothere, loop1 <-> loop2, fifo
func fixture(tb testing.TB, dir string) (outside string) {
	tb.Helper()
	outside = filepath.Join(filepath.Dir(dir), "outside")
	write(tb, filepath.Join(outside, "secret.txt"), "top secret\n")
	write(tb, filepath.Join(dir, "a.txt"), "hello\nworld\n")
	write(tb, filepath.Join(dir, "crlf.txt"), "one\r\ntwo\r\n")
	write(tb, filepath.Join(dir, "bad.txt"), "ok \xF0\x9F\x98 x \xED\xA0\x80\n")
	write(tb, filepath.Join(dir, "empty.txt"), "")
	write(tb, filepath.Join(dir, "sub", "b.md"), "bee")
	write(tb, filepath.Join(dir, "sub", "deep", "c.md"), "sea")
	write(tb, filepath.Join(dir, "sub", "deep", "deeper", "d.md"), "dee")
	write(tb, filepath.Join(dir, ".hidden"), "h")
	write(tb, filepath.Join(dir, "node_modules", "x.js"), "x")
	write(tb, filepath.Join(dir, "sub", "node_modules", "y.js"), "y")
	for _, l := range []struct{ target, name string }{
		{"a.txt", "link-file"}, {"sub", "link-dir"}, {filepath.Join(dir, "a.txt"), "abs-link"},
		{outside, "out-dir"}, {filepath.Join(outside, "secret.txt"), "out-file"},
		{"nothere", "dangling"}, {"loop2", "loop1"}, {"loop1", "loop2"},
	} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			tb.Fatal(err)
		}
	}
	mkfifo(tb, filepath.Join(dir, "fifo"))
	return outside
}

// TestMessages covers what only a directory has: symlinks, FIFOs, invalid
// UTF-8 and the host's name length limit. The messages every backend shares
// are in TestSharedMessages.
func TestMessages(t *testing.T) {
	tool, dir := mustOpen(t, memorytool.Options{})
	fixture(t, dir)
	long := strings.Repeat("n", 300)
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		// Paths (docs/memory-tool.md, Paths and No host paths).
		{view("/memories/out-dir"), "Error: Path would escape /memories directory via symlink"},
		{view("/memories/out-dir/secret.txt"), "Error: Path would escape /memories directory via symlink"},
		{view("/memories/out-file"), "Error: Path would escape /memories directory via symlink"},
		{view("/memories/" + long), "Error: The path /memories/" + long + " is too long"},
		{view("/memories/loop1"), "Error: The path /memories/loop1 cannot be resolved (symbolic link loop)"},
		// view.
		{view("/memories/dangling"), "Error: Unsupported file type for /memories/dangling"},
		{view("/memories/fifo"), "Error: Unsupported file type for /memories/fifo"},
		{view("/memories/link-file"), "Here's the content of /memories/link-file with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		{view("/memories/abs-link"), "Here's the content of /memories/abs-link with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		{view("/memories/bad.txt"), "Here's the content of /memories/bad.txt with line numbers:\n     1\tok \uFFFD x \uFFFD\uFFFD\uFFFD\n     2\t"},
		// create.
		{create("/memories/dangling", "x"), "Error: File /memories/dangling already exists"},
		{create("/memories/fifo", "x"), "Error: File /memories/fifo already exists"},
		{create("/memories/dangling/x", "x"), "Error: The path /memories/dangling/x does not exist. Please provide a valid path."},
		// str_replace.
		{strReplace("/memories/dangling", "a", "b"), "Error: The path /memories/dangling does not exist. Please provide a valid path."},
		{strReplace("/memories/fifo", "a", "b"), "Error: The path /memories/fifo is not a file."},
		// delete.
		{del("/memories/out-dir"), "Error: Path would escape /memories directory via symlink"},
		// rename: also in the shared table, here for their effects below.
		{rename("/memories/missing", "/memories/new.txt"), "Error: The path /memories/missing does not exist"},
		{rename("/memories/sub", "/memories/sub/inner/sub"), "Error: Cannot move /memories/sub into itself"},
	} {
		raw, _ := json.Marshal(tc.in)
		got := do(t, tool, tc.in)
		if got.Content != tc.want {
			t.Errorf("%s\n got: %q\nwant: %q", raw, got.Content, tc.want)
		}
		if got.IsError != strings.HasPrefix(tc.want, "Error: ") {
			t.Errorf("%s: IsError = %v", raw, got.IsError)
		}
		if strings.Contains(got.Content, dir) || strings.Contains(got.Content, filepath.Dir(dir)) {
			t.Errorf("%s: result names a host path: %q", raw, got.Content)
		}
	}
	// The failed commands changed nothing that matters: the outside file,
	// the edited file, and no stray directories.
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "hello\nworld\n" {
		t.Errorf("a.txt = %q", got)
	}
	// rename into itself ran mkdir -p for the destination first, as the
	// reference does; rename of a missing source into new.txt made nothing.
	if _, err := os.Stat(filepath.Join(dir, "sub", "inner")); err != nil {
		t.Errorf("rename's parent directory: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt exists after a failed rename: %v", err)
	}
}

func TestViewDirectory(t *testing.T) {
	tool, dir := mustOpen(t, memorytool.Options{})
	fixture(t, dir)
	write(t, filepath.Join(dir, "Zed.md"), "z")
	write(t, filepath.Join(dir, "😀.md"), "e")
	write(t, filepath.Join(dir, "！.md"), "f")
	write(t, filepath.Join(dir, "big.bin"), strings.Repeat("x", 1280))
	got := do(t, tool, view("/memories"))
	size := func(name string) string {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return memorytool.FormatSize(fi.Size())
	}
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		size(".") + "\t/memories\n" +
		"1B\t/memories/Zed.md\n" +
		"12B\t/memories/a.txt\n" +
		"12B\t/memories/abs-link\n" +
		"13B\t/memories/bad.txt\n" +
		"1.3K\t/memories/big.bin\n" +
		"10B\t/memories/crlf.txt\n" +
		"0B\t/memories/empty.txt\n" +
		size("link-dir") + "\t/memories/link-dir/\n" +
		"3B\t/memories/link-dir/b.md\n" +
		size("sub/deep") + "\t/memories/link-dir/deep/\n" +
		"12B\t/memories/link-file\n" +
		size("sub") + "\t/memories/sub/\n" +
		"3B\t/memories/sub/b.md\n" +
		size("sub/deep") + "\t/memories/sub/deep/\n" +
		"1B\t/memories/😀.md\n" +
		"1B\t/memories/！.md"
	if got.Content != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got.Content, want)
	}
	// A trailing slash is echoed as given.
	got = do(t, tool, view("/memories/sub/"))
	if !strings.Contains(got.Content, "\t/memories/sub//b.md\n") {
		t.Errorf("listing of /memories/sub/: %q", got.Content)
	}
	// Depth 2 from the viewed directory: deeper/ listed, d.md not.
	got = do(t, tool, view("/memories/sub"))
	if !strings.Contains(got.Content, "/memories/sub/deep/deeper/\n") && !strings.HasSuffix(got.Content, "/memories/sub/deep/deeper/") {
		t.Errorf("deeper/ missing: %q", got.Content)
	}
	if strings.Contains(got.Content, "d.md") || strings.Contains(got.Content, "\t/memories/sub/node_modules") {
		t.Errorf("listing went too deep or showed node_modules: %q", got.Content)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestEditsAndEffects(t *testing.T) {
	tool, dir := mustOpen(t, memorytool.Options{})
	outside := fixture(t, dir)

	// create makes parents 0700 and the file 0600, writes bytes as given.
	if got := do(t, tool, create("/memories/new/deep/n.md", "x\r\ny")); got.Content != "File created successfully at: /memories/new/deep/n.md" {
		t.Fatalf("create: %q", got.Content)
	}
	assertMode(t, filepath.Join(dir, "new"), 0o700|os.ModeDir)
	assertMode(t, filepath.Join(dir, "new", "deep"), 0o700|os.ModeDir)
	assertMode(t, filepath.Join(dir, "new", "deep", "n.md"), 0o600)
	if got := readFile(t, filepath.Join(dir, "new", "deep", "n.md")); got != "x\r\ny" {
		t.Errorf("created content %q", got)
	}
	// A trailing slash creates a file named by the last element.
	do(t, tool, create("/memories/trail/", "t"))
	if got := readFile(t, filepath.Join(dir, "trail")); got != "t" {
		t.Errorf("trail = %q", got)
	}
	// create through an inside symlink to a directory lands in its target.
	do(t, tool, create("/memories/link-dir/via.md", "v"))
	if got := readFile(t, filepath.Join(dir, "sub", "via.md")); got != "v" {
		t.Errorf("via link = %q", got)
	}

	// str_replace on a symlink replaces the link with a regular file and
	// leaves the target alone, as the reference does.
	got := do(t, tool, strReplace("/memories/link-file", "world", "there"))
	if want := "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\thello\n     2\tthere\n     3\t"; got.Content != want {
		t.Errorf("str_replace: %q", got.Content)
	}
	assertMode(t, filepath.Join(dir, "link-file"), 0o600)
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "hello\nworld\n" {
		t.Errorf("link target changed: %q", got)
	}
	// An edit writes the repaired text back (U+FFFD), as the reference does.
	do(t, tool, insertAt("/memories/bad.txt", 0, "top"))
	if got := readFile(t, filepath.Join(dir, "bad.txt")); got != "top\nok \uFFFD x \uFFFD\uFFFD\uFFFD\n" {
		t.Errorf("bad.txt after insert = %q", got)
	}
	// A multi-line old_str works (whole-text matching).
	do(t, tool, strReplace("/memories/crlf.txt", "one\r\ntwo", "three"))
	if got := readFile(t, filepath.Join(dir, "crlf.txt")); got != "three\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}

	// delete removes a link, not its target; a dangling link can go.
	for _, p := range []string{"/memories/link-dir", "/memories/dangling"} {
		if got := do(t, tool, del(p)); got.Content != "Successfully deleted "+p {
			t.Errorf("delete %s: %q", p, got.Content)
		}
	}
	if got := readFile(t, filepath.Join(dir, "sub", "b.md")); got != "bee" {
		t.Errorf("sub/b.md = %q", got)
	}
	// delete of a directory removes hidden content too.
	write(t, filepath.Join(dir, "sub", "deep", ".h"), "h")
	do(t, tool, del("/memories/sub/deep"))
	if _, err := os.Lstat(filepath.Join(dir, "sub", "deep")); !os.IsNotExist(err) {
		t.Errorf("sub/deep still there: %v", err)
	}

	// rename creates the destination's parents and moves links as links.
	if got := do(t, tool, rename("/memories/abs-link", "/memories/moved/abs")); got.Content != "Successfully renamed /memories/abs-link to /memories/moved/abs" {
		t.Errorf("rename: %q", got.Content)
	}
	if target, err := os.Readlink(filepath.Join(dir, "moved", "abs")); err != nil || target != filepath.Join(dir, "a.txt") {
		t.Errorf("moved link -> %q, %v", target, err)
	}
	// Renaming onto a dangling link replaces the link.
	os.Symlink("gone", filepath.Join(dir, "dl2"))
	if got := do(t, tool, rename("/memories/empty.txt", "/memories/dl2")); got.IsError {
		t.Errorf("rename onto dangling link: %q", got.Content)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "dl2")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("dl2 after rename: %v %v", fi, err)
	}

	// Nothing outside changed and no temporary file is left.
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "top secret\n" {
		t.Errorf("outside file = %q", got)
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func assertMode(tb testing.TB, name string, want os.FileMode) {
	tb.Helper()
	fi, err := os.Lstat(name)
	if err != nil {
		tb.Fatal(err)
	}
	if fi.Mode() != want {
		tb.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
	}
}

func TestTraversalCorpus(t *testing.T) {
	tool, dir := mustOpen(t, memorytool.Options{})
	outside := fixture(t, dir)
	parent := filepath.Dir(dir)
	before := listTree(t, parent, dir)
	for _, p := range []string{
		"/memories/../outside/secret.txt", "/memories/../../etc/passwd", "/memories/a/../../x",
		"/memories/..\\outside", "/memories/..\\..\\etc\\passwd",
		"/memories/%2e%2e/x", "/memories/%2E%2E/x", "/memories/%2e%2E%2fx", "/memories/..%2fx", "/memories/..%2Fx",
		"/memories/..%5cx", "/memories/%252e%252e%252fx", "/memories/%c0%ae%c0%ae/x", "/memories/x%00.md",
		"/memories/a\x00/../../x", parent + "/outside/secret.txt", "/etc/passwd", "//etc/passwd",
		"/memories/\u2025/x", "/memories/\uFF0E\uFF0E\uFF0Fx", "/memories/\u2215..\u2215x", "/memories/out-dir/new.md",
		"/memories/out-file", "/memories/./../outside", "/memories\\..\\outside",
	} {
		for _, in := range []map[string]any{
			view(p), create(p, "pwned"), strReplace(p, "top", "pwned"), insertAt(p, 0, "pwned"),
			del(p), rename("/memories/a.txt", p), rename(p, "/memories/stolen"),
		} {
			got := do(t, tool, in)
			if !strings.Contains(p, parent) && strings.Contains(got.Content, parent) {
				t.Errorf("%v: result names a host path: %q", in, got.Content)
			}
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "top secret\n" {
		t.Errorf("outside file = %q", got)
	}
	if after := listTree(t, parent, dir); !slices.Equal(before, after) {
		t.Errorf("outside the root changed:\nbefore %q\nafter  %q", before, after)
	}
}

// listTree lists every path under top except those under skip.
func listTree(tb testing.TB, top, skip string) []string {
	tb.Helper()
	var out []string
	filepath.Walk(top, func(p string, fi os.FileInfo, err error) error {
		if p == skip {
			return filepath.SkipDir
		}
		if err == nil {
			out = append(out, p+" "+fi.Mode().String())
		}
		return nil
	})
	return out
}

func TestExpiry(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	tool, dir := mustOpen(t, memorytool.Options{ExpireAfter: 24 * time.Hour, Now: clock})
	write(t, filepath.Join(dir, "old", "stale.md"), "s")
	write(t, filepath.Join(dir, "read.md"), "r")
	write(t, filepath.Join(dir, "fresh.md"), "f")
	past := now.Add(-48 * time.Hour)
	for _, name := range []string{"old/stale.md", "read.md"} {
		os.Chtimes(filepath.Join(dir, name), past, past)
	}
	os.Symlink("old/stale.md", filepath.Join(dir, "link"))

	// A dry run reports and removes nothing.
	got, err := tool.Prune(context.Background(), now.Add(-24*time.Hour), true)
	if err != nil || !slices.Equal(got, []string{"/memories/old/stale.md", "/memories/read.md"}) {
		t.Fatalf("dry run = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "read.md")); err != nil {
		t.Fatal("dry run removed a file")
	}
	// The first command sweeps: stale files and their emptied directory go,
	// the fresh file and the symlink stay.
	if res := do(t, tool, view("/memories/fresh.md")); res.IsError {
		t.Fatal(res.Content)
	}
	for _, name := range []string{"old", "read.md"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s survived the sweep: %v", name, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err != nil {
		t.Errorf("symlink removed: %v", err)
	}
	// Reading records access: a file read recently survives a later sweep
	// even though it was written long ago.
	write(t, filepath.Join(dir, "kept.md"), "k")
	os.Chtimes(filepath.Join(dir, "kept.md"), past, past)
	do(t, tool, view("/memories/kept.md"))
	now = now.Add(2 * time.Minute) // next sweep is due
	do(t, tool, view("/memories"))
	if _, err := os.Stat(filepath.Join(dir, "kept.md")); err != nil {
		t.Errorf("a file read just now expired: %v", err)
	}
	now = now.Add(48 * time.Hour)
	do(t, tool, view("/memories"))
	if _, err := os.Stat(filepath.Join(dir, "kept.md")); !os.IsNotExist(err) {
		t.Errorf("kept.md outlived its expiry: %v", err)
	}
}
