package memorytool_test

// The table tests that every backend must pass alike: a local directory
// and a memory store give the same results wherever their semantics
// coincide. Local-only behaviour (symlinks, FIFOs, invalid UTF-8, modes,
// expiry) is tested in local_test.go; store-only behaviour in store_test.go.

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

// sharedFiles is the fixture every backend can hold: plain files, hidden
// ones and node_modules at two depths.
var sharedFiles = map[string]string{
	"/memories/a.txt":                   "hello\nworld\n",
	"/memories/crlf.txt":                "one\r\ntwo\r\n",
	"/memories/empty.txt":               "",
	"/memories/sub/b.md":                "bee",
	"/memories/sub/deep/c.md":           "sea",
	"/memories/sub/deep/deeper/d.md":    "dee",
	"/memories/.hidden":                 "h",
	"/memories/node_modules/x.js":       "x",
	"/memories/sub/node_modules/y.js":   "y",
	"/memories/sub/.config/settings.md": "s",
}

// sharedRoot opens a root of backend b holding sharedFiles.
func sharedRoot(t *testing.T, b backend, opts memorytool.Options) *memRoot {
	t.Helper()
	r := b.open(t, opts)
	for p, content := range sharedFiles {
		r.plant(t, p, content)
	}
	return r
}

// checkResult compares a result with want, whose "Error: " prefix says
// whether it is an error, and checks that it names no host path.
func checkResult(t *testing.T, r *memRoot, in map[string]any, got memorytool.Result, want string) {
	t.Helper()
	raw, _ := json.Marshal(in)
	if got.Content != want {
		t.Errorf("%s\n got: %q\nwant: %q", raw, got.Content, want)
	}
	if got.IsError != strings.HasPrefix(want, "Error: ") {
		t.Errorf("%s: IsError = %v", raw, got.IsError)
	}
	for _, hp := range r.hostPaths {
		if strings.Contains(got.Content, hp) {
			t.Errorf("%s: result names a host path: %q", raw, got.Content)
		}
	}
}

func TestSharedMessages(t *testing.T) {
	cases := []struct {
		in   map[string]any
		want string
	}{
		// Paths (docs/memory-tool.md, Paths, No host paths, Exact prefix,
		// Encoded traversal).
		{view("/etc/passwd"), "Error: Path must start with /memories, got: /etc/passwd"},
		{view(""), "Error: Path must start with /memories, got: "},
		{view("memories/a.txt"), "Error: Path must start with /memories, got: memories/a.txt"},
		{view("/Memories/a.txt"), "Error: Path must start with /memories, got: /Memories/a.txt"},
		{view("/memoriesX/a.txt"), "Error: Path must start with /memories, got: /memoriesX/a.txt"},
		{view("/memories.txt"), "Error: Path must start with /memories, got: /memories.txt"},
		{view("/memories/.."), "Error: Path /memories/.. would escape /memories directory"},
		{view("/memories/../memories2/x"), "Error: Path /memories/../memories2/x would escape /memories directory"},
		{view("/memories/%2e%2e/x"), "Error: Path /memories/%2e%2e/x would escape /memories directory"},
		{view("/memories/a.txt/x"), "Error: The path /memories/a.txt/x does not exist. Please provide a valid path."},
		{view("/memories/a\x00b"), `Error: The path /memories/a\x00b contains a NUL byte`},
		// view.
		{view("/memories/missing"), "Error: The path /memories/missing does not exist. Please provide a valid path."},
		{view("/memories/no/such/dir"), "Error: The path /memories/no/such/dir does not exist. Please provide a valid path."},
		{view("/memories/a.txt"), "Here's the content of /memories/a.txt with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		{view("/memories/a/../a.txt", 2, 2), "Here's the content of /memories/a/../a.txt with line numbers:\n     2\tworld"},
		{view("/memories/../memories/sub/b.md"), "Here's the content of /memories/../memories/sub/b.md with line numbers:\n     1\tbee"},
		// Hidden names are refused, though the files exist.
		{view("/memories/.hidden"), "Error: The path /memories/.hidden is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{view("/memories/sub/.config/settings.md"), "Error: The path /memories/sub/.config/settings.md is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{create("/memories/.git/config", "[core]\n\tfsmonitor = evil\n"), "Error: The path /memories/.git/config is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{insertAt("/memories/sub/.config/settings.md", 0, "x"), "Error: The path /memories/sub/.config/settings.md is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{rename("/memories/a.txt", "/memories/.env"), "Error: The path /memories/.env is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{del("/memories/.hidden"), "Error: The path /memories/.hidden is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"},
		{view("/memories/crlf.txt"), "Here's the content of /memories/crlf.txt with line numbers:\n     1\tone\r\n     2\ttwo\r\n     3\t"},
		{view("/memories/empty.txt"), "Here's the content of /memories/empty.txt with line numbers:\n     1\t"},
		{view("/memories/a.txt", 5, 3), "Here's the content of /memories/a.txt with line numbers:\n"},
		{view("/memories/a.txt", 0, -1), "Here's the content of /memories/a.txt with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		{view("/memories/a.txt", -3, 1), "Here's the content of /memories/a.txt with line numbers:\n     1\thello"},
		{view("/memories/a.txt", 2, 99), "Here's the content of /memories/a.txt with line numbers:\n     2\tworld\n     3\t"},
		{view("/memories/a.txt", 1, -2), "Here's the content of /memories/a.txt with line numbers:\n     1\thello"},
		{view("/memories/a.txt", 2), "Here's the content of /memories/a.txt with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		{view("/memories/a.txt", 1, 2, 3), "Here's the content of /memories/a.txt with line numbers:\n     1\thello\n     2\tworld\n     3\t"},
		// create.
		{create("/memories/a.txt", "x"), "Error: File /memories/a.txt already exists"},
		{create("/memories/sub", "x"), "Error: File /memories/sub already exists"},
		{create("/memories/sub/deep", "x"), "Error: File /memories/sub/deep already exists"},
		{create("/memories", "x"), "Error: File /memories already exists"},
		{create("/memories/", "x"), "Error: File /memories/ already exists"},
		{create("/memories/a.txt/x", "x"), "Error: The path /memories/a.txt/x does not exist. Please provide a valid path."},
		{create("/memories/a.txt/x/y.md", "x"), "Error: The path /memories/a.txt/x/y.md does not exist. Please provide a valid path."},
		// str_replace.
		{strReplace("/memories/missing", "a", "b"), "Error: The path /memories/missing does not exist. Please provide a valid path."},
		{strReplace("/memories/sub", "a", "b"), "Error: The path /memories/sub is not a file."},
		{strReplace("/memories", "a", "b"), "Error: The path /memories is not a file."},
		{strReplace("/memories/a.txt", "zzz", "b"), "Error: No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.txt."},
		{strReplace("/memories/a.txt", "o", "0"), "Error: No replacement was performed. Multiple occurrences of old_str `o` in lines: 1, 2. Please ensure it is unique"},
		// insert.
		{insertAt("/memories/missing", 0, "x"), "Error: The path /memories/missing does not exist. Please provide a valid path."},
		{insertAt("/memories/sub", 0, "x"), "Error: The path /memories/sub is not a file."},
		{insertAt("/memories/a.txt", 4, "x"), "Error: Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]"},
		{insertAt("/memories/a.txt", -1, "x"), "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 3]"},
		// delete.
		{del("/memories"), "Error: Cannot delete the /memories directory itself"},
		{del("/memories/"), "Error: Cannot delete the /memories directory itself"},
		{del("/memories/."), "Error: Cannot delete the /memories directory itself"},
		{del("/memories//"), "Error: Cannot delete the /memories directory itself"},
		{del("/memories/sub/.."), "Error: Cannot delete the /memories directory itself"},
		{del("/memories/missing"), "Error: The path /memories/missing does not exist"},
		{del("/memories/a.txt/x"), "Error: The path /memories/a.txt/x does not exist"},
		// rename.
		{rename("/memories", "/memories/x"), "Error: Cannot rename the /memories directory itself"},
		{rename("/memories/", "/memories/x"), "Error: Cannot rename the /memories directory itself"},
		{rename("/memories/a.txt", "/memories/sub/b.md"), "Error: The destination /memories/sub/b.md already exists"},
		{rename("/memories/a.txt", "/memories/a.txt"), "Error: The destination /memories/a.txt already exists"},
		{rename("/memories/a.txt", "/memories/sub"), "Error: The destination /memories/sub already exists"},
		{rename("/memories/a.txt", "/memories"), "Error: The destination /memories already exists"},
		{rename("/memories/missing", "/memories/a.txt"), "Error: The destination /memories/a.txt already exists"},
		{rename("/memories/missing", "/memories/new.txt"), "Error: The path /memories/missing does not exist"},
		{rename("/memories/sub", "/memories/sub/inner/sub"), "Error: Cannot move /memories/sub into itself"},
		{rename("/memories/a.txt", "/memories/a.txt/x"), "Error: The path /memories/a.txt/x does not exist"},
		{rename("/memories/empty.txt", "/memories/a.txt/x"), "Error: The path /memories/a.txt/x does not exist"},
		{rename("/memories/sub", "/memories/a.txt/x"), "Error: The path /memories/a.txt/x does not exist"},
		// Commands.
		{map[string]any{"command": "read", "path": "/memories"}, "Error: read not implemented"},
	}
	onEachBackend(t, func(t *testing.T, b backend) {
		r := sharedRoot(t, b, memorytool.Options{})
		for _, tc := range cases {
			checkResult(t, r, tc.in, do(t, r.h, tc.in), tc.want)
		}
		// The failed commands changed nothing (Local's rename into itself
		// leaves the destination's new parent directory, which holds no
		// file).
		if got := r.files(t); !maps.Equal(got, sharedFiles) {
			t.Errorf("files after failed commands:\n got %q\nwant %q", got, sharedFiles)
		}
	})
}

func TestSharedViewDirectory(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := sharedRoot(t, b, memorytool.Options{})
		seed(t, r.h, map[string]string{
			"/memories/Zed.md":  "z",
			"/memories/😀.md":    "e",
			"/memories/！.md":    "f",
			"/memories/big.bin": strings.Repeat("x", 1280),
			// Byte order puts "a-b.md" and "a.md" before "a/"; the
			// listing's order, per level, puts "a" first.
			"/memories/x/a/f.md":   "f",
			"/memories/x/a-b.md":   "ab",
			"/memories/x/a.md":     "a",
			"/memories/x/a/g/h.md": "h",
		})
		r.plant(t, "/memories/x/h/.only", "o")
		header := "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n"
		for _, tc := range []struct{ path, want string }{
			{"/memories", strings.ReplaceAll(header, "%s", "/memories") +
				r.dirSize(t, "/memories") + "\t/memories\n" +
				"1B\t/memories/Zed.md\n" +
				"12B\t/memories/a.txt\n" +
				"1.3K\t/memories/big.bin\n" +
				"10B\t/memories/crlf.txt\n" +
				"0B\t/memories/empty.txt\n" +
				r.dirSize(t, "/memories/sub") + "\t/memories/sub/\n" +
				"3B\t/memories/sub/b.md\n" +
				r.dirSize(t, "/memories/sub/deep") + "\t/memories/sub/deep/\n" +
				r.dirSize(t, "/memories/x") + "\t/memories/x/\n" +
				r.dirSize(t, "/memories/x/a") + "\t/memories/x/a/\n" +
				"2B\t/memories/x/a-b.md\n" +
				"1B\t/memories/x/a.md\n" +
				r.dirSize(t, "/memories/x/h") + "\t/memories/x/h/\n" +
				"1B\t/memories/😀.md\n" +
				"1B\t/memories/！.md"},
			// Depth 2 from the viewed directory: deeper/ listed, d.md not.
			{"/memories/sub", strings.ReplaceAll(header, "%s", "/memories/sub") +
				r.dirSize(t, "/memories/sub") + "\t/memories/sub\n" +
				"3B\t/memories/sub/b.md\n" +
				r.dirSize(t, "/memories/sub/deep") + "\t/memories/sub/deep/\n" +
				"3B\t/memories/sub/deep/c.md\n" +
				r.dirSize(t, "/memories/sub/deep/deeper") + "\t/memories/sub/deep/deeper/"},
			// A trailing slash is echoed as given.
			{"/memories/sub/deep/", strings.ReplaceAll(header, "%s", "/memories/sub/deep/") +
				r.dirSize(t, "/memories/sub/deep") + "\t/memories/sub/deep/\n" +
				"3B\t/memories/sub/deep//c.md\n" +
				r.dirSize(t, "/memories/sub/deep/deeper") + "\t/memories/sub/deep//deeper/\n" +
				"3B\t/memories/sub/deep//deeper/d.md"},
			// A directory whose only file is hidden lists nothing below it.
			{"/memories/x/h", strings.ReplaceAll(header, "%s", "/memories/x/h") +
				r.dirSize(t, "/memories/x/h") + "\t/memories/x/h"},
			{"/memories/node_modules", strings.ReplaceAll(header, "%s", "/memories/node_modules") +
				r.dirSize(t, "/memories/node_modules") + "\t/memories/node_modules\n" +
				"1B\t/memories/node_modules/x.js"},
		} {
			in := view(tc.path)
			checkResult(t, r, in, do(t, r.h, in), tc.want)
		}
	})
}

func TestSharedEmptyRoot(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{})
		want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			r.dirSize(t, "/memories") + "\t/memories"
		checkResult(t, r, view("/memories"), do(t, r.h, view("/memories")), want)
	})
}

// gone marks a file that a step of TestSharedEdits removes.
const gone = "\x00gone"

func TestSharedEdits(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := sharedRoot(t, b, memorytool.Options{})
		want := maps.Clone(sharedFiles)
		for _, step := range []struct {
			in      map[string]any
			out     string
			changes map[string]string // gone removes
		}{
			// create makes parents as needed and writes bytes as given.
			{create("/memories/new/deep/n.md", "x\r\ny"), "File created successfully at: /memories/new/deep/n.md",
				map[string]string{"/memories/new/deep/n.md": "x\r\ny"}},
			// A trailing slash creates a file named by the last element.
			{create("/memories/trail/", "t"), "File created successfully at: /memories/trail/",
				map[string]string{"/memories/trail": "t"}},
			{create("/memories/sub/../e.md", ""), "File created successfully at: /memories/sub/../e.md",
				map[string]string{"/memories/e.md": ""}},
			{strReplace("/memories/a.txt", "world", "there"),
				"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\thello\n     2\tthere\n     3\t",
				map[string]string{"/memories/a.txt": "hello\nthere\n"}},
			// A multi-line old_str works (whole-text matching).
			{strReplace("/memories/crlf.txt", "one\r\ntwo", "three"),
				"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tthree\r\n     2\t",
				map[string]string{"/memories/crlf.txt": "three\r\n"}},
			{insertAt("/memories/a.txt", 0, "top\n"), "The file /memories/a.txt has been edited.",
				map[string]string{"/memories/a.txt": "top\nhello\nthere\n"}},
			{insertAt("/memories/empty.txt", 1, "last"), "The file /memories/empty.txt has been edited.",
				map[string]string{"/memories/empty.txt": "\nlast"}},
			{del("/memories/trail"), "Successfully deleted /memories/trail",
				map[string]string{"/memories/trail": gone}},
			// A directory goes with everything below it, hidden files
			// too; its siblings stay.
			{del("/memories/sub/deep"), "Successfully deleted /memories/sub/deep",
				map[string]string{"/memories/sub/deep/c.md": gone, "/memories/sub/deep/deeper/d.md": gone}},
			{rename("/memories/a.txt", "/memories/moved/a.txt"), "Successfully renamed /memories/a.txt to /memories/moved/a.txt",
				map[string]string{"/memories/a.txt": gone, "/memories/moved/a.txt": "top\nhello\nthere\n"}},
			{rename("/memories/sub", "/memories/renamed/sub"), "Successfully renamed /memories/sub to /memories/renamed/sub",
				map[string]string{
					"/memories/sub/b.md": gone, "/memories/sub/node_modules/y.js": gone, "/memories/sub/.config/settings.md": gone,
					"/memories/renamed/sub/b.md": "bee", "/memories/renamed/sub/node_modules/y.js": "y", "/memories/renamed/sub/.config/settings.md": "s",
				}},
			{del("/memories/new/"), "Successfully deleted /memories/new/",
				map[string]string{"/memories/new/deep/n.md": gone}},
		} {
			checkResult(t, r, step.in, do(t, r.h, step.in), step.out)
			for p, content := range step.changes {
				if content == gone {
					delete(want, p)
				} else {
					want[p] = content
				}
			}
			if got := r.files(t); !maps.Equal(got, want) {
				t.Fatalf("files after %v:\n got %q\nwant %q", step.in, got, want)
			}
		}
		checkResult(t, r, view("/memories/sub"), do(t, r.h, view("/memories/sub")),
			"Error: The path /memories/sub does not exist. Please provide a valid path.")
	})
}

func TestMalformedInput(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{})
		for _, tc := range []struct{ in, want string }{
			{`not json`, `Error: Invalid input: expected a JSON object with a "command" field`},
			{`[1]`, `Error: Invalid input: expected a JSON object with a "command" field`},
			{`null`, `Error: Invalid input: expected a JSON object with a "command" field`},
			{`{"command":"view","path":"/memories"} {}`, `Error: Invalid input: unexpected data after the JSON object`},
			{`{}`, `Error: Invalid input: "command" must be a string, one of view, create, str_replace, insert, delete, rename`},
			{`{"command":7}`, `Error: Invalid input: "command" must be a string, one of view, create, str_replace, insert, delete, rename`},
			{`{"command":"create","path":"/memories/x.md"}`, `Error: Invalid input for create: file_text is required`},
			{`{"command":"create","path":"/memories/x.md","file_text":null}`, `Error: Invalid input for create: file_text is required`},
			{`{"command":"create","path":"/memories/x.md","file_text":5}`, `Error: Invalid input for create: file_text must be a string`},
			{`{"command":"create","file_text":"x"}`, `Error: Invalid input for create: path is required`},
			{`{"command":"view","path":["/memories"]}`, `Error: Invalid input for view: path must be a string`},
			{`{"command":"view","path":"/memories","view_range":"1,2"}`, `Error: Invalid input for view: view_range must be an array of two integers, [start_line, end_line]`},
			{`{"command":"view","path":"/memories","view_range":[1.5,2]}`, `Error: Invalid input for view: view_range must be an array of two integers, [start_line, end_line]`},
			{`{"command":"view","path":"/memories","view_range":[1,null]}`, `Error: Invalid input for view: view_range must be an array of two integers, [start_line, end_line]`},
			{`{"command":"insert","path":"/memories/x.md","insert_line":"1","insert_text":"x"}`, `Error: Invalid input for insert: insert_line must be an integer`},
			{`{"command":"insert","path":"/memories/x.md","insert_line":1e300,"insert_text":"x"}`, `Error: Invalid input for insert: insert_line must be an integer`},
			{`{"command":"insert","path":"/memories/x.md","insert_text":"x"}`, `Error: Invalid input for insert: insert_line is required`},
			{`{"command":"str_replace","path":"/memories/x.md","old_str":"a"}`, `Error: Invalid input for str_replace: new_str is required`},
			{`{"command":"rename","old_path":"/memories/a"}`, `Error: Invalid input for rename: new_path is required`},
			{`{"command":"delete"}`, `Error: Invalid input for delete: path is required`},
		} {
			got := memorytool.Execute(context.Background(), r.h, json.RawMessage(tc.in))
			if got.Content != tc.want || !got.IsError {
				t.Errorf("%s\n got: %q\nwant: %q", tc.in, got.Content, tc.want)
			}
		}
		// Nothing was written.
		if got := r.files(t); len(got) != 0 {
			t.Errorf("malformed input left files: %q", got)
		}
		// Integral numbers in other spellings are integers.
		seed(t, r.h, map[string]string{"/memories/x.md": "a\nb"})
		got := memorytool.Execute(context.Background(), r.h, json.RawMessage(`{"command":"insert","path":"/memories/x.md","insert_line":2.0,"insert_text":"c"}`))
		if got.IsError {
			t.Errorf("insert_line 2.0: %q", got.Content)
		}
	})
}

func TestMaxFileBytes(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{MaxFileBytes: 10})
		if got := do(t, r.h, create("/memories/a.md", "0123456789")); got.IsError {
			t.Fatalf("create at the limit: %q", got.Content)
		}
		for _, in := range []map[string]any{
			create("/memories/b/c.md", "01234567890"),
			strReplace("/memories/a.md", "0", "00"),
			insertAt("/memories/a.md", 1, "x"),
		} {
			got := do(t, r.h, in)
			if !got.IsError || !strings.Contains(got.Content, "over the 10-byte limit for a memory file") {
				t.Errorf("%v: %q", in, got.Content)
			}
		}
		// a.md is as it was, and the refused create made nothing (Local
		// makes no directory either).
		if got, want := r.files(t), map[string]string{"/memories/a.md": "0123456789"}; !maps.Equal(got, want) {
			t.Errorf("files = %q, want %q", got, want)
		}
		if got := do(t, r.h, view("/memories/b")); !got.IsError {
			t.Errorf("a refused create made its directory: %q", got.Content)
		}
	})
}

func TestMaxViewChars(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{MaxViewChars: 80})
		seed(t, r.h, map[string]string{"/memories/small.md": "1\n2\n3\n4\n5\n6\n7"})
		got := do(t, r.h, view("/memories/small.md"))
		if want := "Here's the content of /memories/small.md with line numbers:\n     1\t1\n     2\t2\n\n[Showing lines 1-2 of 7; the rest was cut at the 80-character view limit. Continue with view_range [3, -1].]"; got.Content != want {
			t.Errorf("view:\n got %q\nwant %q", got.Content, want)
		}
		got = do(t, r.h, view("/memories"))
		want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			r.dirSize(t, "/memories") + "\t/memories\n\n[Listing cut at the 80-character view limit: 1 more entries not shown. View a subdirectory to see its entries.]"
		if got.Content != want {
			t.Errorf("listing:\n got %q\nwant %q", got.Content, want)
		}
	})
}

func TestDenySecrets(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{DenySecrets: true})
		seed(t, r.h, map[string]string{"/memories/a.md": "notes\n"})
		for _, in := range []map[string]any{
			create("/memories/k.md", "my key is "+key),
			strReplace("/memories/a.md", "notes", key),
			insertAt("/memories/a.md", 0, "key: "+key),
		} {
			got := do(t, r.h, in)
			if !got.IsError || !strings.Contains(got.Content, "looks like it contains a credential (Anthropic API key)") {
				t.Errorf("%v: %q", in["command"], got.Content)
			}
			if strings.Contains(got.Content, "abcdefghij") {
				t.Errorf("the refusal echoes the secret: %q", got.Content)
			}
		}
		if got, want := r.files(t), map[string]string{"/memories/a.md": "notes\n"}; !maps.Equal(got, want) {
			t.Errorf("files = %q, want %q", got, want)
		}
		// Without the option, the same text is stored in a directory; a
		// memory store refuses it itself, as the hosted API does.
		plain := b.open(t, memorytool.Options{})
		got := do(t, plain.h, create("/memories/k.md", key))
		switch refused := "memory content appears to contain a credential or API key; remove it before writing. If the credential is real, rotate it."; {
		case b.name == "local" && got.IsError:
			t.Errorf("without DenySecrets: %q", got.Content)
		case b.name != "local" && (!got.IsError || !strings.Contains(got.Content, refused)):
			t.Errorf("without DenySecrets, a memory store took a credential: %q", got.Content)
		}
	})
}

func TestConcurrentEdits(t *testing.T) {
	onEachBackend(t, func(t *testing.T, b backend) {
		r := b.open(t, memorytool.Options{})
		seed(t, r.h, map[string]string{"/memories/log.md": ""})
		const n = 40
		done := make(chan memorytool.Result)
		for i := range n {
			go func() {
				done <- do(t, r.h, insertAt("/memories/log.md", 0, "line "+itoa(int64(i))))
			}()
		}
		for range n {
			if res := <-done; res.IsError {
				t.Error(res.Content)
			}
		}
		lines := strings.Split(r.files(t)["/memories/log.md"], "\n")
		if len(lines) != n+1 {
			t.Errorf("%d lines after %d concurrent inserts, want %d", len(lines), n, n+1)
		}
	})
}
