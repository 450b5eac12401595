package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/freeport"
	"github.com/memstore/memstore/internal/npmtest"
	"github.com/memstore/memstore/internal/syncbuf"
)

// The README's walk-through, run as a newcomer runs it: the commands are
// read from README.md at test time, never copied here, so that a command
// that stops working as written (a renamed flag, a moved route) fails
// this test. Only the walk-through's placeholders are filled in.

const walkThroughTitle = "A two-minute walk-through"

var (
	readmeFence = regexp.MustCompile("(?s)```(\\w+)\n(.*?)```")
	readmeServe = regexp.MustCompile("`(memstore serve)`")
	placeholder = regexp.MustCompile(`[A-Za-z0-9_-]*\.\.\.`)
	readmeHome  = regexp.MustCompile(`/home/[a-z]+/`)
	readmeOpen  = regexp.MustCompile("open <(http://[^>]+)>")
	readmeSpace = regexp.MustCompile("sign in\\s+to the workspace `([^`]+)`")
)

// walkPassword is what the walk-through's 'memstore users create' reads
// on standard input, as a person would type it.
const walkPassword = "a long enough password\n"

// readmeWalkThrough returns the README's walk-through, its serve command,
// its first-run output block, and its shell blocks.
func readmeWalkThrough(t *testing.T) (section, serve, firstRun string, blocks []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+walkThroughTitle+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", walkThroughTitle)
	}
	section, _, _ = strings.Cut(rest, "\n## ")
	m := readmeServe.FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("the walk-through does not say to start `memstore serve`")
	}
	for _, f := range readmeFence.FindAllStringSubmatch(section, -1) {
		switch f[1] {
		case "text":
			if firstRun == "" {
				firstRun = f[2]
			}
		case "sh":
			blocks = append(blocks, f[2])
		}
	}
	if firstRun == "" || len(blocks) == 0 {
		t.Fatalf("the walk-through lacks its first-run output (```text) or its commands (```sh)")
	}
	return section, m[1], firstRun, blocks
}

// shellCommands splits a shell block into its commands: one a line, a
// line ending in a backslash continued on the next; blank lines and
// comments skipped.
func shellCommands(block string) []string {
	var cmds []string
	var cur strings.Builder
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(line + "\n")
			continue
		}
		cur.WriteString(line)
		cmd := cur.String()
		cur.Reset()
		if t := strings.TrimSpace(cmd); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// walk is the state of a walk-through: the shell variables it set and
// what its commands made, to fill the placeholders and check the
// commands that follow.
type walk struct {
	t        *testing.T
	bash     string
	vars     map[string]string
	order    []string
	store    string            // the id of the store the API made
	memories map[string]string // the SHA-256 of the content written, by path
	contents map[string]string // the content written, by path, where the command shows it
	token    string            // the session token sessions create printed
	checked  map[string]bool   // the checks that ran

	claudeCode string // where npm installs Claude Code (claudeCodeDir)
	prose      string // the walk-through, its URLs rewritten to the server's
}

var (
	assignment   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)
	memstoreCmd  = regexp.MustCompile(`^(?:echo (".*") \| )?memstore (\S+(?: create)?)\s*(.*?)(?:\s+#.*)?$`)
	claudeMCPAdd = regexp.MustCompile(`^claude mcp add `)
)

// prelude is the shell variables set so far, as assignments.
func (w *walk) prelude() string {
	var b strings.Builder
	b.WriteString("set -o pipefail\n")
	for _, k := range w.order {
		fmt.Fprintf(&b, "%s=%s\n", k, shellWord(w.vars[k]))
	}
	return b.String()
}

// sh runs script in bash after the variables set so far, with stdin,
// and fails the test unless it exits 0.
func (w *walk) sh(cmd, script, stdin string) string {
	w.t.Helper()
	c := exec.Command(w.bash, "-c", w.prelude()+script)
	c.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		w.t.Fatalf("README command failed (%v):\n%s\nstdout: %s\nstderr: %s", err, cmd, out.String(), errOut.String())
	}
	return out.String()
}

// fill replaces the walk-through's placeholders by what the commands
// before made, and fails on any it does not know.
func (w *walk) fill(cmd string) string {
	w.t.Helper()
	return placeholder.ReplaceAllStringFunc(cmd, func(p string) string {
		switch {
		case p == "memstore_..." && w.store != "":
			return w.store
		case p == "st-memstore-..." && w.token != "":
			return w.token
		}
		w.t.Fatalf("the walk-through's placeholder %q has nothing to fill it yet:\n%s", p, cmd)
		return p
	})
}

// TestReadmeWalkThrough starts `memstore serve` as the README's walk-through
// says, on the default database of a new home directory, checks that it
// prints the first-run output the README shows, then runs each command of
// the walk-through in bash and checks what it prints.
func TestReadmeWalkThrough(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH: the README's commands are bash")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is not on PATH, and the walk-through uses it: CI installs it (.ci/run)")
		}
		t.Skip("curl is not on PATH, and the walk-through uses it: install it (apt-get install curl) to run this test")
	}
	section, serveCmd, firstRun, blocks := readmeWalkThrough(t)
	clearEnv(t)

	// A new user's home: the default database is under it. The server
	// listens where MEMSTORE_ADDR says, a free port, not on the README's
	// 127.0.0.1:6366 that another server may hold; the commands' URLs are
	// rewritten to it.
	home := t.TempDir()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for k, v := range map[string]string{
		"HOME": home, "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "", "XDG_STATE_HOME": "",
		"MEMSTORE_ADDR": addr, "CLAUDE_CONFIG_DIR": "", "MEMSTORE_TOKEN": "",
	} {
		t.Setenv(k, v)
		if v == "" {
			os.Unsetenv(k)
		}
	}
	claudeCode, err := filepath.Abs(claudeCodeDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(home)

	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	srv := exec.Command(bash, "-c", "exec "+serveCmd)
	srv.Stdout, srv.Stderr = stdout, stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		srv.Process.Kill()
		<-exited
	})
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := servingLine.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("%s exited before serving (%v):\n%s", serveCmd, err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not serve within 10s:\n%s", serveCmd, stderr)
		}
	}
	if base != "http://"+addr {
		t.Fatalf("%s serves at %s; want http://%s (MEMSTORE_ADDR)", serveCmd, base, addr)
	}
	rewrite := func(s string) string { return strings.ReplaceAll(s, defaultAddr, addr) }

	// The first-run output, line for line, placeholders aside.
	want := strings.Split(strings.TrimSuffix(rewrite(readmeHome.ReplaceAllString(firstRun, home+"/")), "\n"), "\n")
	got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Errorf("the first run printed %d lines, the README shows %d:\n%s", len(got), len(want), stdout)
	}
	for i := range min(len(got), len(want)) {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(want[i]), `\.\.\.`, `\S+`) + "$"
		if !regexp.MustCompile(re).MatchString(got[i]) {
			t.Errorf("first run's line %d:\n got: %s\nwant: %s (README)", i+1, got[i], want[i])
		}
	}

	w := &walk{t: t, bash: bash, vars: map[string]string{}, memories: map[string]string{}, contents: map[string]string{}, checked: map[string]bool{}, claudeCode: claudeCode, prose: rewrite(section)}
	for _, block := range blocks {
		for _, cmd := range shellCommands(block) {
			w.step(rewrite(cmd), base)
		}
	}
	for _, c := range []string{"store created", "memory written", "search", "ls", "cat", "put", "grep", "log", "users create", "sessions create", "claude mcp add"} {
		if !w.checked[c] {
			t.Errorf("the walk-through no longer shows %s, or this test did not recognise it: update the test with the README", c)
		}
	}
}

// step runs one command of the walk-through and checks what it printed.
func (w *walk) step(cmd, base string) {
	t := w.t
	t.Helper()
	flat := strings.TrimSpace(strings.ReplaceAll(cmd, "\\\n", " "))
	t.Logf("$ %s", flat)

	// An assignment: run it, and keep the variable for the commands after.
	if m := assignment.FindStringSubmatch(flat); m != nil && !strings.Contains(flat, " | ") {
		name := m[1]
		value := w.sh(flat, w.fill(cmd)+"\nprintf %s \"$"+name+"\"", "")
		if value == "" {
			t.Fatalf("%s set %s to nothing", flat, name)
		}
		if _, ok := w.vars[name]; !ok {
			w.order = append(w.order, name)
		}
		w.vars[name] = value
		return
	}

	switch {
	case strings.HasPrefix(flat, "curl "):
		out := w.sh(flat, w.fill(cmd), "")
		var answer map[string]any
		if err := json.Unmarshal([]byte(out), &answer); err != nil {
			t.Fatalf("%s: not a JSON answer: %v\n%s", flat, err, out)
		}
		if answer["type"] == "error" {
			t.Fatalf("%s: an error: %s", flat, out)
		}
		switch {
		case answer["type"] == "memory_store":
			id, _ := answer["id"].(string)
			if !strings.HasPrefix(id, "memstore_") {
				t.Fatalf("%s: a store with id %q", flat, id)
			}
			w.store = id
			w.checked["store created"] = true
		case answer["type"] == "memory":
			path, _ := answer["path"].(string)
			sum, _ := answer["content_sha256"].(string)
			if path == "" || sum == "" {
				t.Fatalf("%s: a memory without path or content_sha256: %s", flat, out)
			}
			w.memories[path] = sum
			w.checked["memory written"] = true
		case strings.Contains(flat, "/search"):
			found := false
			for path := range w.memories {
				found = found || strings.Contains(out, `"`+path+`"`)
			}
			if !found {
				t.Errorf("%s: the memory written is not found:\n%s", flat, out)
			}
			w.checked["search"] = true
		default:
			t.Errorf("%s: an answer this test does not check: %s", flat, out)
		}

	case claudeMCPAdd.MatchString(flat):
		w.checked["claude mcp add"] = true
		// A subtest, so that where Claude Code cannot be installed only
		// this line is skipped.
		t.Run("claude mcp add", func(t *testing.T) { w.claudeMCPAdd(t, cmd, flat) })

	default:
		m := memstoreCmd.FindStringSubmatch(flat)
		if m == nil {
			t.Fatalf("a command this test does not know how to check: %s", flat)
		}
		echoed, sub, rest := m[1], m[2], strings.Fields(m[3])
		stdin := ""
		if sub == "users create" {
			stdin = walkPassword
		}
		out := w.sh(flat, w.fill(cmd), stdin)
		t.Logf("%s", out)
		arg := ""
		if len(rest) > 0 {
			arg = rest[len(rest)-1]
		}
		switch sub {
		case "ls":
			for path := range w.memories {
				if strings.HasPrefix(path, arg) && !strings.Contains(out, path) {
					t.Errorf("%s does not list %s:\n%s", flat, path, out)
				}
			}
			w.checked["ls"] = true
		case "cat":
			if want, ok := w.memories[arg]; !ok || sha(out) != want {
				t.Errorf("%s printed %q; want the content written, of SHA-256 %s", flat, out, want)
			}
			w.checked["cat"] = true
		case "put":
			content, err := strconv.Unquote(echoed)
			if err != nil {
				t.Fatalf("%s: cannot read what it echoes: %v", flat, err)
			}
			w.memories[arg], w.contents[arg] = sha(content+"\n"), content+"\n"
			code, got, _ := run(t, "", "cat", arg)
			if code != 0 || got != content+"\n" {
				t.Errorf("after %s, cat %s: %d %q", flat, arg, code, got)
			}
			w.checked["put"] = true
		case "grep":
			found := false
			for path, content := range w.contents {
				if strings.Contains(strings.ToLower(content), strings.ToLower(arg)) {
					found = true
					if !strings.Contains(out, path) {
						t.Errorf("%s does not find %s:\n%s", flat, path, out)
					}
				}
			}
			if !found {
				t.Errorf("%s: no memory written has %q", flat, arg)
			}
			w.checked["grep"] = true
		case "log":
			if !regexp.MustCompile(`memver_\S+`).MatchString(out) {
				t.Errorf("%s lists no version:\n%s", flat, out)
			}
			w.checked["log"] = true
		case "users create":
			name := ""
			for i, f := range rest {
				if f == "--name" && i+1 < len(rest) {
					name = rest[i+1]
				}
			}
			code, users, _ := run(t, "", "users", "ls")
			if name == "" || code != 0 || !strings.Contains(users, " "+name+" ") {
				t.Errorf("after %s, users ls: %d\n%s", flat, code, users)
			}
			w.signIn(name)
			w.checked["users create"] = true
		case "sessions create":
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if tok := lines[len(lines)-1]; strings.HasPrefix(tok, "st-memstore-") && !strings.Contains(tok, " ") {
				w.token = tok
			} else {
				t.Fatalf("%s: the token is not alone on the last line:\n%s", flat, out)
			}
			w.checked["sessions create"] = true
		default:
			t.Errorf("a memstore command this test does not check: %s\n%s", flat, out)
		}
	}
}

// claudeMCPAdd runs the README's `claude mcp add` line with the real
// Claude Code where npm can install it, and checks, either way, that the
// line names the server's MCP endpoint with a header that reaches it.
func (w *walk) claudeMCPAdd(t *testing.T, cmd, flat string) {
	parent := w.t
	w.t = t
	defer func() { w.t = parent }()
	filled := w.fill(cmd)
	// The line's words, as bash splits them.
	argv := strings.Split(strings.TrimSuffix(w.sh(flat, "claude() { printf '%s\\0' \"$@\"; }\n"+filled, ""), "\x00"), "\x00")
	var server, url, header string
	for i, a := range argv {
		switch {
		case a == "--header" && i+1 < len(argv):
			header = argv[i+1]
		case strings.HasPrefix(a, "http://") && i > 0:
			server, url = argv[i-1], a
		}
	}
	name, value, ok := strings.Cut(header, ": ")
	if url == "" || !ok {
		t.Fatalf("%s: no MCP URL or no header in %q", flat, argv)
	}
	// The endpoint answers an MCP initialize sent with that header.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}`))
	req.Header.Set(name, value)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: POST %s with its header: %s; want 200", flat, url, resp.Status)
	}

	t.Logf("%s: its URL and header reach the server; now it runs in Claude Code, where npm can install it", flat)
	npmtest.Want(t, w.claudeCode, "@anthropic-ai/claude-code")
	bin := filepath.Join(w.claudeCode, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "claude")); err != nil {
		t.Skipf("npm installed no Claude Code program for %s/%s, so the README's `claude mcp add` line was checked but not run: %v", runtime.GOOS, runtime.GOARCH, err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	w.sh(flat, filled, "")
	out := w.sh("claude mcp get "+server, "claude mcp get "+shellWord(server), "")
	t.Logf("claude mcp get %s:\n%s", server, out)
	if !strings.Contains(out, url) || !strings.Contains(out, "Connected") {
		t.Errorf("after %s, claude mcp get %s:\n%s", flat, server, out)
	}
}

// signIn follows the walk-through after 'memstore users create': the URL
// it says to open leads to the console's sign-in page, where the user
// signs in to the workspace it names with the password typed.
func (w *walk) signIn(name string) {
	t := w.t
	t.Helper()
	open, space := readmeOpen.FindStringSubmatch(w.prose), readmeSpace.FindStringSubmatch(w.prose)
	if open == nil || space == nil {
		t.Fatalf("the walk-through no longer says which URL to open and which workspace to sign in to")
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar}
	resp, err := client.Get(open[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/console/signin" {
		t.Fatalf("opening %s led to %s (%s); want the console's sign-in page", open[1], resp.Request.URL, resp.Status)
	}
	signin := resp.Request.URL
	form := url.Values{"workspace": {space[1]}, "name": {name}, "password": {strings.TrimSuffix(walkPassword, "\n")}}
	req, _ := http.NewRequest("POST", signin.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", signin.Scheme+"://"+signin.Host)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.HasPrefix(resp.Request.URL.Path, "/console/signin") {
		t.Errorf("signing in as %s to workspace %s: %s at %s; want the console", name, space[1], resp.Status, resp.Request.URL)
	}
}
