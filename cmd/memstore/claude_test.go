package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/claudeproxy"
)

// fakeClaude stands in for Claude Code (TestMain runs it as the command
// fake-claude): it prints a version, then does what Claude Code's memory
// client does with its environment (a create in each configured store,
// through HTTPS_PROXY trusting NODE_EXTRA_CA_CERTS, or at
// CLAUDE_CODE_MEMORY_API_BASE_URL) and reports what it saw in the file
// FAKE_CLAUDE_REPORT. It exits 7, or with FAKE_CLAUDE_WAIT waits for
// SIGTERM and exits 42.
func fakeClaude() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		v := os.Getenv("FAKE_CLAUDE_VERSION")
		if v == "" {
			v = "2.1.332"
		}
		fmt.Printf("%s (Claude Code)\n", v)
		return
	}
	report := map[string]any{"args": os.Args[1:]}
	for _, k := range []string{"CLAUDE_MEMORY_STORES", "CLAUDE_CODE_SESSION_ACCESS_TOKEN", "HTTPS_PROXY", "NODE_EXTRA_CA_CERTS",
		"CLAUDE_CODE_MEMORY_API_BASE_URL", "MEMSTORE_API_KEY", "NO_PROXY"} {
		report[k] = os.Getenv(k)
	}
	base := "https://" + claudeproxy.MemoryHost
	tr := &http.Transport{}
	if b := os.Getenv("CLAUDE_CODE_MEMORY_API_BASE_URL"); b != "" {
		base = b
	} else {
		pem, err := os.ReadFile(os.Getenv("NODE_EXTRA_CA_CERTS"))
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			report["error"] = fmt.Sprintf("NODE_EXTRA_CA_CERTS: %v", err)
		}
		report["ca_count"] = strings.Count(string(pem), "BEGIN CERTIFICATE")
		proxy, _ := url.Parse(os.Getenv("HTTPS_PROXY"))
		tr.Proxy, tr.TLSClientConfig = http.ProxyURL(proxy), &tls.Config{RootCAs: pool}
	}
	var stores []json.RawMessage
	json.Unmarshal([]byte(os.Getenv("CLAUDE_MEMORY_STORES")), &stores)
	status := map[string]int{}
	for _, raw := range stores {
		var p string
		if json.Unmarshal(raw, &p) != nil {
			var o struct{ Path string }
			json.Unmarshal(raw, &o)
			p = o.Path
		}
		req, _ := http.NewRequest("POST", base+p+"/memories", strings.NewReader(`{"path":"/from-claude.md","content":"written by Claude Code\n","precondition":{"type":"not_exists"}}`))
		req.Header.Set("Authorization", "Bearer "+os.Getenv("CLAUDE_CODE_SESSION_ACCESS_TOKEN"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			report["error"] = err.Error()
			continue
		}
		resp.Body.Close()
		status[p] = resp.StatusCode
	}
	report["status"] = status
	b, _ := json.Marshal(report)
	os.WriteFile(os.Getenv("FAKE_CLAUDE_REPORT"), b, 0o600)
	if marker := os.Getenv("FAKE_CLAUDE_WAIT"); marker != "" {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		os.WriteFile(marker, nil, 0o600)
		<-sigs
		os.Exit(42)
	}
	os.Exit(7)
}

type fakeReport struct {
	Args                             []string
	CLAUDE_MEMORY_STORES             string
	CLAUDE_CODE_SESSION_ACCESS_TOKEN string
	HTTPS_PROXY                      string
	NODE_EXTRA_CA_CERTS              string
	CLAUDE_CODE_MEMORY_API_BASE_URL  string
	MEMSTORE_API_KEY                 string
	NO_PROXY                         string
	Status                           map[string]int
	Error                            string
	CACount                          int `json:"ca_count"`
}

// claudeSetup starts a server with two stores, team and docs, and returns
// it with their IDs and the path of a fake Claude Code. The environment
// names the server and its key, as a user's would.
func claudeSetup(t *testing.T) (srv *child, team, docs, fake, reportFile string) {
	t.Helper()
	clearEnv(t)
	dir := t.TempDir()
	srv = startChild(t, filepath.Join(dir, "served.db"))
	t.Setenv("MEMSTORE_URL", srv.url)
	t.Setenv("MEMSTORE_API_KEY", srv.key)
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	for _, v := range []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "HTTPS_PROXY", "https_proxy", "NODE_EXTRA_CA_CERTS", "FAKE_CLAUDE_VERSION", "FAKE_CLAUDE_WAIT"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("NO_PROXY", "api.anthropic.com") // would bypass the proxy: dropped
	ids := map[string]string{}
	for _, name := range []string{"team", "docs"} {
		code, out, errs := run(t, "", "stores", "create", name, "--json")
		var s httpapi.StoreJSON
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
			t.Fatalf("stores create: %d %s %s", code, out, errs)
		}
		ids[name] = s.ID
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake = filepath.Join(dir, "fake-claude")
	if err := os.Symlink(exe, fake); err != nil {
		t.Fatal(err)
	}
	reportFile = filepath.Join(dir, "report.json")
	t.Setenv("FAKE_CLAUDE_REPORT", reportFile)
	return srv, ids["team"], ids["docs"], fake, reportFile
}

func readReport(t *testing.T, file string) fakeReport {
	t.Helper()
	var r fakeReport
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("the fake Claude Code left no report: %v %s", err, b)
	}
	return r
}

// jsonLines decodes memstore claude's --json lines on standard error.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestClaudeRun runs a fake Claude Code under memstore claude through the
// proxy and checks what it was given, what it could do and what is left
// after it exits.
func TestClaudeRun(t *testing.T) {
	srv, team, docs, fake, reportFile := claudeSetup(t)
	// The user's own extra authority stays trusted beside the proxy's.
	own := filepath.Join(t.TempDir(), "corp.pem")
	ownCA := httptest.NewTLSServer(http.NotFoundHandler())
	ownCA.Close()
	os.WriteFile(own, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ownCA.Certificate().Raw}), 0o600)
	t.Setenv("NODE_EXTRA_CA_CERTS", own)
	code, stdout, stderr := run(t, "", "claude", "--store", "team", "--store", docs+":ro", "--claude", fake, "--json", "--", "-p", "hello")
	if code != 7 {
		t.Fatalf("exit %d; want Claude Code's 7: %s %s", code, stdout, stderr)
	}
	r := readReport(t, reportFile)
	if r.Error != "" {
		t.Fatalf("the fake Claude Code: %s", r.Error)
	}
	wantStores := `["/v1/memory_stores/` + team + `",{"mode":"ro","path":"/v1/memory_stores/` + docs + `"}]`
	switch {
	case strings.Join(r.Args, " ") != "-p hello":
		t.Errorf("args %q; want -p hello", r.Args)
	case r.CLAUDE_MEMORY_STORES != wantStores:
		t.Errorf("CLAUDE_MEMORY_STORES = %s; want %s", r.CLAUDE_MEMORY_STORES, wantStores)
	case r.MEMSTORE_API_KEY != "" || r.NO_PROXY != "":
		t.Errorf("Claude Code got MEMSTORE_API_KEY=%q NO_PROXY=%q; want neither", r.MEMSTORE_API_KEY, r.NO_PROXY)
	case !strings.HasPrefix(r.HTTPS_PROXY, "http://127.0.0.1:"):
		t.Errorf("HTTPS_PROXY = %q; want a loopback proxy", r.HTTPS_PROXY)
	case r.CACount != 2 || r.NODE_EXTRA_CA_CERTS == own:
		t.Errorf("NODE_EXTRA_CA_CERTS = %q with %d certificates; want a bundle of the user's and the proxy's", r.NODE_EXTRA_CA_CERTS, r.CACount)
	case r.CLAUDE_CODE_SESSION_ACCESS_TOKEN == "" || r.CLAUDE_CODE_SESSION_ACCESS_TOKEN == srv.key:
		t.Errorf("CLAUDE_CODE_SESSION_ACCESS_TOKEN = %q; want the run's own token", r.CLAUDE_CODE_SESSION_ACCESS_TOKEN)
	}
	if _, err := os.Stat(r.NODE_EXTRA_CA_CERTS); err == nil {
		t.Errorf("the run's bundle %s is still there after the run", r.NODE_EXTRA_CA_CERTS)
	}
	if fi, err := os.Stat(filepath.Join(os.Getenv("XDG_DATA_HOME"), "memstore", claudeproxy.CAKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the authority's key: %v %v; want mode 0600", fi, err)
	}
	// The read-write store took the write, the read-only one refused it.
	if r.Status["/v1/memory_stores/"+team] != 200 || r.Status["/v1/memory_stores/"+docs] != 403 {
		t.Errorf("statuses %v; want 200 for team, 403 for the read-only docs", r.Status)
	}
	events := jsonLines(t, stderr)
	if len(events) != 2 || events[0]["event"] != "started" || events[1]["event"] != "ended" ||
		events[1]["session_ended"] != true || events[1]["exit_code"] != float64(7) || events[0]["route"] != "proxy" {
		t.Fatalf("events %v", events)
	}
	sid, _ := events[0]["session_id"].(string)
	if strings.Contains(stderr, r.CLAUDE_CODE_SESSION_ACCESS_TOKEN) {
		t.Errorf("the token is on standard error: %s", stderr)
	}

	// The memory is the session's, and the session is over.
	code, out, errs := run(t, "", "log", "--store", team, "--json", "/from-claude.md")
	if code != 0 || !strings.Contains(out, sid) {
		t.Errorf("log: %d %s %s; want a version made by %s", code, out, errs, sid)
	}
	if code, out, _ := run(t, "", "ls", "--store", docs); code != 0 || strings.Contains(out, "from-claude") {
		t.Errorf("docs: %d %s; want no memory", code, out)
	}
	code, out, _ = run(t, "", "sessions", "show", sid, "--json")
	var s httpapi.SessionJSON
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.ArchivedAt == nil {
		t.Errorf("session after the run: %d %s; want it archived", code, out)
	}
	req, _ := http.NewRequest("GET", srv.url+"/v1/memory_stores/"+team+"/memories", nil)
	req.Header.Set("Authorization", "Bearer "+r.CLAUDE_CODE_SESSION_ACCESS_TOKEN)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("the run's token after the run: %v %v; want 401", resp, err)
	}
}

// TestClaudeBaseURLRoute: a build listed as honouring
// CLAUDE_CODE_MEMORY_API_BASE_URL gets the server directly, and no proxy.
func TestClaudeBaseURLRoute(t *testing.T) {
	srv, team, _, fake, reportFile := claudeSetup(t)
	testedClaudeVersions["9.9.9"] = routeBaseURL
	defer delete(testedClaudeVersions, "9.9.9")
	t.Setenv("FAKE_CLAUDE_VERSION", "9.9.9")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:1") // allowed: no proxy of ours
	if code, _, stderr := run(t, "", "claude", "--store", team, "--claude", fake); code != 7 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, reportFile)
	if r.CLAUDE_CODE_MEMORY_API_BASE_URL != srv.url || r.NODE_EXTRA_CA_CERTS != "" {
		t.Errorf("report %+v; want the server's URL and no authority", r)
	}
	if r.Status["/v1/memory_stores/"+team] != 200 {
		t.Errorf("statuses %v (%s); want 200", r.Status, r.Error)
	}
}

// TestClaudeRefuses checks each environment and command line that
// memstore claude refuses, before it makes a session.
func TestClaudeRefuses(t *testing.T) {
	_, team, _, fake, _ := claudeSetup(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"nonessential", map[string]string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}, nil, 2, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set"},
		{"auto memory", map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "true"}, nil, 2, "unset it for this command"},
		{"own proxy", map[string]string{"HTTPS_PROXY": "http://corp:3128"}, nil, 2, "HTTPS_PROXY is set"},
		{"own CAs unreadable", map[string]string{"NODE_EXTRA_CA_CERTS": "/nonexistent/corp.pem"}, nil, 1, "cannot read NODE_EXTRA_CA_CERTS"},
		{"untested", map[string]string{"FAKE_CLAUDE_VERSION": "2.1.400"}, nil, 1, "version 2.1.400 of Claude Code (" + fake + ") was not tested with memstore claude, which was tested with 2.1.332"},
		{"no claude", nil, []string{"--claude", filepath.Join(t.TempDir(), "nothing")}, 1, "install it (npm install -g @anthropic-ai/claude-code@2.1.332) or give its path with --claude PATH"},
		{"argument without --", nil, []string{"-p"}, 2, "flag provided but not defined"},
		{"positional", nil, []string{"hello"}, 2, "give Claude Code's own arguments after --"},
		{"bad store", nil, []string{"--store", "nosuch"}, 1, `no memory store named "nosuch"`},
		{"twice", nil, []string{"--store", "team", "--store", team + ":ro"}, 1, "is given twice"},
		{"bad mode", nil, []string{"--store", "team:rx"}, 2, "want NAME_OR_ID or NAME_OR_ID:ro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"claude", "--claude", fake, "--store", "team"}, tt.args...)
			if tt.name == "twice" || tt.name == "bad store" || tt.name == "bad mode" {
				args = append([]string{"claude", "--claude", fake}, tt.args...)
			}
			code, _, stderr := run(t, "", args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, tt.code, tt.want)
			}
		})
	}
	// None of that made a session.
	if code, out, _ := run(t, "", "sessions", "ls", "--archived", "--json"); code != 0 || strings.Contains(out, "sesn_") {
		t.Errorf("sessions after refusals: %s", out)
	}
	// An untested version runs when allowed.
	t.Setenv("FAKE_CLAUDE_VERSION", "2.1.400")
	if code, _, stderr := run(t, "", "claude", "--claude", fake, "--store", "team", "--allow-untested-version"); code != 7 {
		t.Errorf("--allow-untested-version: exit %d: %s", code, stderr)
	}
}

func TestClaudeHelp(t *testing.T) {
	code, stdout, stderr := run(t, "", "claude", "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: memstore claude") || !strings.Contains(stdout, "-allow-untested-version") || stderr != "" {
		t.Errorf("claude --help: %d, stdout %q, stderr %q; want the help on stdout", code, stdout, stderr)
	}
}
