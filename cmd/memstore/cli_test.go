package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// clearEnv unsets the variables the store commands read, so that a
// developer's own settings cannot change what a test sees.
func clearEnv(tb testing.TB) {
	tb.Helper()
	for _, v := range []string{"MEMSTORE_DB", "MEMSTORE_URL", "MEMSTORE_API_KEY", "MEMSTORE_WORKSPACE", "MEMSTORE_STORE", "VISUAL", "EDITOR"} {
		tb.Setenv(v, "")
	}
}

// run runs memstore with args and returns its exit status and output.
func run(tb testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// notesDatabase makes a database file in a directory of its own, with a
// store called notes made by the CLI, and returns its path.
func notesDatabase(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "m.db")
	if code, _, stderr := run(t, "", "--db", db, "stores", "create", "notes"); code != 0 {
		t.Fatalf("stores create: exit %d: %s", code, stderr)
	}
	return db
}

// newStoresAPI returns the HTTP API of stores, memories, versions and
// keys over a fresh SQLite file, in-process, with the secret of a key of
// its default workspace.
func newStoresAPI(t *testing.T) (*httpapi.Server, string) {
	t.Helper()
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, memstore.DefaultWorkspace)
	_, secret := sqlitetest.APIKey(t, db, ws.ID, "cli")
	core := memstore.NewCore(db)
	return httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core}), secret
}

// TestExitCodes checks the exit status of each kind of outcome: 0 for
// success and help, 1 for an error reported by the backend, 2 for a
// command line that cannot be run.
func TestExitCodes(t *testing.T) {
	clearEnv(t)
	db := notesDatabase(t)
	if code, _, stderr := run(t, "hello\n", "put", "--db", db, "/a.md"); code != 0 {
		t.Fatalf("put: exit %d: %s", code, stderr)
	}
	tests := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"cat", "/a.md"}, 0, ""},
		{[]string{"ls", "--help"}, 0, ""}, // help is on stdout: TestHelpEveryCommand
		{[]string{"stores", "--help"}, 0, ""},
		{[]string{"stores", "show", "--help"}, 0, ""},
		{[]string{"cat", "/missing.md"}, 1, "memstore cat: no memory at /missing.md in store memstore_"},
		{[]string{"show", "memver_x"}, 1, "memstore show: memory version memver_x not found"},
		{[]string{"stores", "show", "memstore_x"}, 1, "memstore stores show: memory store memstore_x not found"},
		{[]string{"rm", "/a.md", "--if-sha256", strings.Repeat("0", 64)}, 1, "memstore rm: memory mem_"},
		{[]string{"cat"}, 2, "memstore cat: give one PATH"},
		{[]string{"cat", "--bogus", "/a.md"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"ls", "--depth", "x"}, 2, "invalid value"},
		{[]string{"stores", "frob"}, 2, `unknown subcommand "frob"`},
		{[]string{"stores", "rm", "notes"}, 2, "add --yes to confirm"},
		{[]string{"stores", "rm", "memstore_x", "--yes"}, 1, "memory store memstore_x not found"},
		{[]string{"rm", "/a.md", "--if-sha256", "abc"}, 2, "is not a SHA-256"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append(slices.Clone(tt.args), "--db", db)
			if tt.args[0] == "stores" {
				args = append([]string{"--db", db}, tt.args...) // the backend first
			}
			code, _, stderr := run(t, "", args...)
			if code != tt.code || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr containing %q", code, stderr, tt.code, tt.wantStderr)
			}
		})
	}
	// The memory is still there after all that.
	if code, stdout, _ := run(t, "", "cat", "--db", db, "/a.md"); code != 0 || stdout != "hello\n" {
		t.Errorf("cat /a.md = %d, %q; want 0, %q", code, stdout, "hello\n")
	}
}

func TestHoistCommand(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"ls", "--db", "x"}, []string{"ls", "--db", "x"}},
		{[]string{"--db", "x", "stores", "create", "n"}, []string{"stores", "--db", "x", "create", "n"}},
		{[]string{"--db=x", "--json", "ls", "/a/"}, []string{"ls", "--db=x", "--json", "/a/"}},
		{[]string{"--url", "u", "--api-key", "k", "--store", "s", "cat", "/a"}, []string{"cat", "--url", "u", "--api-key", "k", "--store", "s", "/a"}},
		{[]string{"--db", "x"}, []string{"--db", "x"}},
		{[]string{"--help"}, []string{"--help"}},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := hoistCommand(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("hoistCommand(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args  []string
		pos   []string
		depth int
		json  bool
	}{
		{[]string{"/a/", "--depth", "2"}, []string{"/a/"}, 2, false},
		{[]string{"--json", "/a/", "/b/", "--depth=0"}, []string{"/a/", "/b/"}, 0, true},
		{[]string{"-", "--json"}, []string{"-"}, 1, true},
		{[]string{"--", "--json", "/x"}, []string{"--json", "/x"}, 1, false},
		{nil, nil, 1, false},
	}
	for _, tt := range tests {
		e := env{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer), getenv: func(string) string { return "" }}
		fs := newFlags(e, "test", "")
		depth := fs.Int("depth", 1, "")
		asJSON := fs.Bool("json", false, "")
		pos, err := parseArgs(fs, tt.args)
		if err != nil || !slices.Equal(pos, tt.pos) || *depth != tt.depth || *asJSON != tt.json {
			t.Errorf("parseArgs(%q) = %q, depth %d, json %t, %v; want %q, %d, %t", tt.args, pos, *depth, *asJSON, err, tt.pos, tt.depth, tt.json)
		}
	}
}

// TestExportFileStaysInside checks that an export never writes outside its
// directory, whatever path a backend hands it.
func TestExportFileStaysInside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, path := range []string{"/../escaped.md", "/a/../../escaped.md", "//escaped.md", "/..",
		"/.git/config", "/a/.ssh/authorized_keys", "/.env", "/\uff0e\uff0e/escaped.md", "/a/" + strings.Repeat("x", 256)} {
		if err := exportFile(root, dir, &memstore.Memory{Path: path, Content: "x"}); err == nil {
			t.Errorf("exportFile(%q) succeeded; want an error", path)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused exports left %v in the directory", entries)
	}
	if _, err := os.Stat(filepath.Join(parent, "escaped.md")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the directory: %v", err)
	}
	if err := exportFile(root, dir, &memstore.Memory{Path: "/a/b.md", Content: "x"}); err != nil {
		t.Fatalf("exportFile(/a/b.md): %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "b.md")); err != nil || string(b) != "x" {
		t.Errorf("a/b.md = %q, %v; want %q", b, err, "x")
	}
}

// cliStep is one command of a session; {NAME} in its arguments is a value
// an earlier step grabbed from its output.
type cliStep struct {
	args  []string
	stdin string
	grab  map[string]string // NAME → regular expression with one group, on stdout
}

// session runs steps with the backend flags of one backend and returns a
// transcript of exit statuses and outputs.
func session(t *testing.T, backend []string, steps []cliStep) string {
	t.Helper()
	vars := map[string]string{"DIR": t.TempDir()}
	var transcript strings.Builder
	for _, s := range steps {
		args := slices.Clone(s.args)
		for i, a := range args {
			for k, v := range vars {
				a = strings.ReplaceAll(a, "{"+k+"}", v)
			}
			args[i] = a
		}
		code, stdout, stderr := run(t, s.stdin, append(args, backend...)...)
		for name, re := range s.grab {
			m := regexp.MustCompile(re).FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("memstore %s: no match of %s in %q (stderr %q)", strings.Join(args, " "), re, stdout, stderr)
			}
			vars[name] = m[1]
		}
		stderr = strings.ReplaceAll(stderr, vars["DIR"], "DIR")
		stdout = strings.ReplaceAll(stdout, vars["DIR"], "DIR")
		transcript.WriteString("$ memstore " + strings.Join(s.args, " ") + "\n" + stdout + "\n" + stderr + "\nexit " + strconv.Itoa(code) + "\n")
	}
	return transcript.String()
}

var (
	actorText   = regexp.MustCompile(`\b((user_actor|api_actor):\S+|operator)`)
	actorJSON   = regexp.MustCompile(`\{"type":"(user_actor|api_actor)","(user_id|api_key_id)":"[^"]+"\}`)
	idPattern   = regexp.MustCompile(`(memstore|memver|mem)_[0-9a-z]+`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	padding     = regexp.MustCompile(` {2,}`)
)

// normalize makes two transcripts comparable: actors become ACTOR (the
// operator on a database, an API key on a server), IDs ID1, ID2... in order of
// appearance, times TIME, and column padding one space.
func normalize(s string) string {
	s = actorText.ReplaceAllString(s, "ACTOR")
	s = actorJSON.ReplaceAllString(s, "ACTOR")
	ids := map[string]string{}
	s = idPattern.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = "ID" + strconv.Itoa(len(ids)+1)
		}
		return ids[id]
	})
	s = timePattern.ReplaceAllString(s, "TIME")
	s = progressLine.ReplaceAllString(s, "")
	return padding.ReplaceAllString(s, " ")
}

// progressLine is a progress report of a long command (newProgress),
// printed only when an item was slow: how often depends on the machine.
var progressLine = regexp.MustCompile(`(?m)^(imported|exported) \d+(/\d+)?\n`)

// TestSameOnServer runs one session of commands against a database file
// and against a memstore server (httpapi over SQLite, through --url and
// --api-key) and checks that they print the same, but for IDs, times and
// who made the changes.
func TestSameOnServer(t *testing.T) {
	clearEnv(t)
	api, secret := newStoresAPI(t)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)

	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\necho '- call Bob' >> \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", editor)

	steps := []cliStep{
		{args: []string{"stores", "create", "notes", "--description", "team notes"}},
		{args: []string{"stores", "ls", "--json"}},
		{args: []string{"put", "/notes/todo.md"}, stdin: "- buy milk\n"},
		{args: []string{"put", "/notes/todo.md"}, stdin: "- buy milk\n"},
		{args: []string{"put", "/prefs/style.md"}, stdin: "terse"},
		{args: []string{"edit", "/notes/todo.md"}},
		{args: []string{"ls"}},
		{args: []string{"ls", "--depth", "0", "--json"}},
		{args: []string{"cat", "/notes/todo.md"}},
		{args: []string{"cat", "--json", "/prefs/style.md"}},
		{args: []string{"mv", "/prefs/style.md", "/prefs/tone.md"}},
		{args: []string{"log", "/notes/todo.md"}, grab: map[string]string{"V2": `\n(memver_\w+)`, "V1": `\n.*\n(memver_\w+)`}},
		{args: []string{"show", "{V1}"}},
		{args: []string{"diff", "{V2}"}},
		{args: []string{"diff", "--json", "{V1}", "{V2}"}},
		{args: []string{"redact", "{V1}", "--yes"}},
		{args: []string{"show", "--json", "{V1}"}},
		{args: []string{"export", "{DIR}/out"}},
		{args: []string{"export", "{DIR}/all.jsonl"}},
		{args: []string{"stores", "create", "copy"}, grab: map[string]string{"COPY": `id: +(memstore_\w+)`}},
		{args: []string{"import", "--store", "{COPY}", "{DIR}/out"}},
		{args: []string{"import", "--store", "{COPY}", "{DIR}/all.jsonl", "--json"}},
		{args: []string{"export", "--store", "{COPY}", "-"}},
		{args: []string{"ls"}},
		{args: []string{"rm", "/prefs/tone.md", "--store", "{COPY}"}},
		{args: []string{"cat", "/prefs/tone.md", "--store", "{COPY}"}},
		{args: []string{"stores", "archive", "{COPY}", "--yes"}},
		{args: []string{"put", "/x.md", "--store", "{COPY}"}, stdin: "x"},
		{args: []string{"stores", "rm", "{COPY}", "--yes"}},
	}
	local := session(t, []string{"--db", filepath.Join(t.TempDir(), "local.db")}, steps)
	remote := session(t, []string{"--url", srv.URL, "--api-key", secret}, steps)
	if diff := cmp.Diff(normalize(local), normalize(remote)); diff != "" {
		t.Errorf("the server session differs from the database session (-db +server):\n%s", diff)
	}
	// The server recorded the changes as made by its key, the database as
	// made by the local user.
	for _, want := range []string{`"created_by":{"type":"api_actor","api_key_id":"apikey_`, "cat /notes/todo.md\n- buy milk\n- call Bob\n\n\nexit 0"} {
		if !strings.Contains(remote, want) {
			t.Errorf("server transcript lacks %q:\n%s", want, remote)
		}
	}
	if !strings.Contains(local, `"created_by":{"type":"user_actor","user_id":"user_operator"}`) {
		t.Errorf("database transcript lacks the operator:\n%s", local)
	}
}

func TestProgress(t *testing.T) {
	tests := []struct {
		total    int
		interval time.Duration
		want     string
	}{
		{3, 0, "exported 1/3\nexported 2/3\nexported 3/3\n"},
		{0, 0, "exported 1\nexported 2\nexported 3\n"},
		{2, 0, "exported 1/2\nexported 2/2\nexported 3/3\n"}, // more than counted: never 3/2
		{3, time.Hour, ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		p := newProgress(&b, "exported", tt.total)
		p.interval = tt.interval
		for range 3 {
			p.step()
		}
		if b.String() != tt.want {
			t.Errorf("total %d, interval %v: printed %q; want %q", tt.total, tt.interval, b.String(), tt.want)
		}
	}
}

// TestAllPages reads a list of three pages whole, following each page's
// cursor, and stops at the first failing page with its error.
func TestAllPages(t *testing.T) {
	pages := map[string]memstore.Page[int]{
		"":   {Items: []int{1, 2}, Next: "p2"},
		"p2": {Items: []int{}, Next: "p3"},
		"p3": {Items: []int{3}},
	}
	var asked []string
	got, err := allPages(func(page string) (memstore.Page[int], error) {
		asked = append(asked, page)
		return pages[page], nil
	})
	if err != nil || !slices.Equal(got, []int{1, 2, 3}) || !slices.Equal(asked, []string{"", "p2", "p3"}) {
		t.Fatalf("allPages = %v, %v after asking %q; want [1 2 3] after asking every page", got, err, asked)
	}
	bad := memstore.Errorf(memstore.EInvalid, "bad page")
	got, err = allPages(func(page string) (memstore.Page[int], error) {
		if page == "p2" {
			return memstore.Page[int]{}, bad
		}
		return pages[page], nil
	})
	if err != bad || got != nil {
		t.Fatalf("allPages with a failing page = %v, %v; want nil, %v", got, err, bad)
	}
}

// TestMemdirDisabled runs the memdir commands that need memory on where
// it is disabled: each fails with status 3, saying so, and works with
// --dir.
func TestMemdirDisabled(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
	for _, args := range [][]string{
		{"memdir", "log", "--cwd", home, "an entry"},
		{"memdir", "prompt", "--cwd", home},
		{"memdir", "dream", "--cwd", home, "--dry-run"},
		{"memdir", "snapshot", "status", "--cwd", home},
	} {
		code, _, stderr := run(t, "", args...)
		if code != 3 || !strings.Contains(stderr, "memory is disabled (by CLAUDE_CODE_DISABLE_AUTO_MEMORY); give --dir DIR") {
			t.Errorf("%s: exit %d, stderr %q; want 3, memory is disabled", strings.Join(args, " "), code, stderr)
		}
	}
	dir := filepath.Join(home, "memory")
	if code, _, stderr := run(t, "", "memdir", "log", "--dir", dir, "an entry"); code != 0 {
		t.Errorf("memdir log --dir: exit %d: %s", code, stderr)
	}
}
