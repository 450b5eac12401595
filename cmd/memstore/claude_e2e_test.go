package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/claudeproxy"
	"github.com/memstore/memstore/internal/npmtest"
)

// claudeCodeDir holds the package.json and lock of the Claude Code build
// the end-to-end test runs, installed there by npm when missing.
const claudeCodeDir = "testdata/claudecode"

// scriptedModel is a Messages endpoint that answers Claude Code with a
// fixed list of tool calls, one a turn, then a final text; side queries
// (without tools) get a short text. It records every request it gets.
type scriptedModel struct {
	mu    sync.Mutex
	steps func() []map[string]any // the tool calls, made when first needed
	// before runs before the tool call of that index is answered (once),
	// outside the lock.
	before map[int]func()
	calls  []map[string]any
	seen   []string // each request's headers and body, for the token check
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.seen = append(m.seen, fmt.Sprint(r.Header)+r.URL.String()+string(body))
	m.mu.Unlock()
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	if strings.Contains(r.URL.Path, "count_tokens") {
		json.NewEncoder(w).Encode(map[string]int{"input_tokens": 10})
		return
	}
	var req struct {
		Model    string
		Stream   bool
		Tools    []json.RawMessage
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	json.Unmarshal(body, &req)
	block := map[string]any{"type": "text", "text": "ok"}
	stop := "end_turn"
	if len(req.Tools) > 0 {
		results := strings.Count(string(body), `"type":"tool_result"`)
		m.mu.Lock()
		if m.calls == nil {
			m.calls = m.steps()
		}
		f := m.before[results]
		delete(m.before, results)
		m.mu.Unlock()
		if f != nil {
			f() // unlocked: it may wait for Claude Code's sync, which goes on meanwhile
		}
		m.mu.Lock()
		if results < len(m.calls) {
			block, stop = m.calls[results], "tool_use"
		} else {
			block = map[string]any{"type": "text", "text": "All done."}
		}
		m.mu.Unlock()
	}
	msg := map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": req.Model,
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}
	if !req.Stream {
		msg["content"], msg["stop_reason"] = []any{block}, stop
		json.NewEncoder(w).Encode(msg)
		return
	}
	msg["content"] = []any{}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": msg})
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// fakeUpstream stands in for api.anthropic.com's other routes: it answers
// 404 and records what it got.
type fakeUpstream struct {
	mu   sync.Mutex
	seen []string
}

func (u *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, r.Method+" "+r.URL.String()+" "+fmt.Sprint(r.Header)+string(body))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(404)
	io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`)
}

// memoryHostServer starts h with TLS as api.anthropic.com, under an
// authority of its own, and returns it with that authority.
func memoryHostServer(t *testing.T, h http.Handler) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: claudeproxy.MemoryHost},
		DNSNames: []string{claudeproxy.MemoryHost}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pool
}

// e2e is a memstore server with stores, a scripted model and a stand-in
// for api.anthropic.com, for runs of the real Claude Code.
type e2e struct {
	t      *testing.T
	bin    string // Claude Code
	srv    *child
	home   string
	stores map[string]string // by name
	model  *scriptedModel
	up     *fakeUpstream
}

// newE2E installs Claude Code (or skips), starts the rest, makes a store
// for each name and enters a project directory.
func newE2E(t *testing.T, names ...string) *e2e {
	npmtest.Want(t, claudeCodeDir, "@anthropic-ai/claude-code")
	bin, err := filepath.Abs(filepath.Join(claudeCodeDir, "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("npm installed no Claude Code program for %s/%s: %v", runtime.GOOS, runtime.GOARCH, err)
	}
	clearEnv(t)
	dir := t.TempDir()
	e := &e2e{t: t, bin: bin, srv: startChild(t, filepath.Join(dir, "served.db"), "--log-level", "info"),
		home: filepath.Join(dir, "home"), stores: map[string]string{}, model: &scriptedModel{}, up: &fakeUpstream{}}
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o700)
	for k, v := range map[string]string{
		"MEMSTORE_URL": e.srv.url, "MEMSTORE_API_KEY": e.srv.key, "HOME": e.home, "XDG_DATA_HOME": filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME": filepath.Join(e.home, ".config"), "ANTHROPIC_API_KEY": "sk-ant-e2e-model-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "", "HTTPS_PROXY": "", "https_proxy": "",
		"NODE_EXTRA_CA_CERTS": "", "CLAUDE_CONFIG_DIR": "", "ANTHROPIC_AUTH_TOKEN": "",
	} {
		t.Setenv(k, v)
		if v == "" {
			os.Unsetenv(k)
		}
	}
	t.Chdir(project)
	for _, name := range names {
		code, out, errs := run(t, "", "stores", "create", name, "--json")
		var s httpapi.StoreJSON
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
			t.Fatalf("stores create: %d %s %s", code, out, errs)
		}
		e.stores[name] = s.ID
	}
	modelSrv := httptest.NewServer(e.model)
	t.Cleanup(modelSrv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", modelSrv.URL)
	upSrv, roots := memoryHostServer(t, e.up)
	claudeTestUpstream.addr, claudeTestUpstream.roots = upSrv.Listener.Addr().String(), roots
	t.Cleanup(func() { claudeTestUpstream.addr, claudeTestUpstream.roots = "", nil })
	return e
}

// put writes a memory with the CLI, as a user.
func (e *e2e) put(store, path, content string) {
	e.t.Helper()
	if code, _, errs := run(e.t, content, "put", "--store", e.stores[store], path); code != 0 {
		e.t.Fatalf("put %s: %s", path, errs)
	}
}

// cat reads a memory with the CLI.
func (e *e2e) cat(store, path string) (int, string) {
	code, out, _ := run(e.t, "", "cat", "--store", e.stores[store], path)
	return code, out
}

// mount is the directory Claude Code mounted a store in.
func (e *e2e) mount(store string) string {
	m, _ := filepath.Glob(filepath.Join(e.home, ".claude", "projects", "*", "memory", "team", e.stores[store]))
	if len(m) != 1 {
		e.t.Errorf("mount of %s: %q", store, m)
		return filepath.Join(e.home, "nowhere")
	}
	return m[0]
}

// await waits for cond while Claude Code runs (from the scripted model's
// goroutine, so it reports with Errorf, not Fatal).
func (e *e2e) await(what string, within time.Duration, cond func() bool) {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Errorf("waited %v for %s", within, what)
			return
		}
	}
}

// settle is the first tool call of a run: a short pause, so that the
// model acts once Claude Code has pulled its mounts and watches them.
var settle = call(0, "Bash", map[string]any{"command": "sleep 2", "description": "wait for memory sync"})

// call is a tool call of the scripted model.
func call(n int, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e_%d", n), "name": name, "input": input}
}

// claude runs 'claude -p' under memstore claude with the tools the
// scripted model calls allowed, and returns the session of the run.
func (e *e2e) claude(stores ...string) string {
	e.t.Helper()
	args := []string{"claude", "--claude", e.bin, "--json"}
	for _, s := range stores {
		args = append(args, "--store", s)
	}
	args = append(args, "--", "-p", "Do the memory chores.", "--permission-mode", "acceptEdits", "--allowedTools", "Write,Read,Edit,Bash")
	code, stdout, stderr := run(e.t, "", args...)
	if code != 0 {
		e.t.Fatalf("memstore claude: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	events := jsonLines(e.t, stderr[strings.Index(stderr, "{"):])
	sid, _ := events[0]["session_id"].(string)
	return sid
}

// TestClaudeCodeEndToEnd runs the real Claude Code under memstore claude,
// with a scripted model on loopback and a fake api.anthropic.com for every
// other request, and checks what reaches the stores.
func TestClaudeCodeEndToEnd(t *testing.T) {
	e := newE2E(t, "team", "docs")
	e.put("team", "/from-server.md", "server side note\n")
	e.put("team", "/stale.md", "no longer true\n")
	e.put("docs", "/handbook.md", "read only\n")
	e.model.steps = func() []map[string]any {
		team, docs := e.mount("team"), e.mount("docs")
		return []map[string]any{
			settle,
			call(1, "Write", map[string]any{"file_path": filepath.Join(team, "model-note.md"), "content": "written by the model\n"}),
			call(2, "Read", map[string]any{"file_path": filepath.Join(team, "from-server.md")}),
			call(3, "Edit", map[string]any{"file_path": filepath.Join(team, "from-server.md"), "old_string": "server side note", "new_string": "edited by the model"}),
			call(4, "Write", map[string]any{"file_path": filepath.Join(docs, "intruder.md"), "content": "must not reach the store\n"}),
			call(5, "Bash", map[string]any{"command": "rm " + filepath.Join(team, "stale.md"), "description": "forget a stale memory"}),
			call(6, "Bash", map[string]any{"command": "true", "description": "done"}),
		}
	}
	// Claude Code pushes a delete once two walks of the mount, 30 s apart,
	// found the file gone; the run lasts until the store has lost it.
	var pulled string // the server's log once the mounts are pulled
	e.model.before = map[int]func(){1: func() { pulled = e.srv.stderr.String() }, 6: func() {
		e.await("the delete of /stale.md", 90*time.Second, func() bool { code, _ := e.cat("team", "/stale.md"); return code != 0 })
	}}
	sid := e.claude("team", "docs:ro")

	// Pulled in one export request per mount, no memory read one by one.
	exports := strings.Count(pulled, `route="GET /v1/memory_stores/{memory_store_id}/memories/export"`)
	single := strings.Count(pulled, `route="GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}"`)
	if exports != 2 || single != 0 {
		t.Errorf("%d export requests and %d single reads; want one export per mount and no single read", exports, single)
	}
	if b, err := os.ReadFile(filepath.Join(e.mount("team"), "from-server.md")); err != nil || !strings.Contains(string(b), "edited by the model") {
		t.Errorf("the local from-server.md: %q %v", b, err)
	}

	if code, out := e.cat("team", "/model-note.md"); code != 0 || out != "written by the model\n" {
		t.Errorf("/model-note.md in team: %d %q; want the model's file", code, out)
	}
	if code, out, _ := run(t, "", "log", "--store", e.stores["team"], "--json", "/model-note.md"); code != 0 || !strings.Contains(out, sid) {
		t.Errorf("/model-note.md's versions: %s; want one by session %s", out, sid)
	}
	if code, out := e.cat("team", "/from-server.md"); code != 0 || !strings.Contains(out, "edited by the model") {
		t.Errorf("/from-server.md in team: %d %q; want the edit", code, out)
	}
	_, out, _ := run(t, "", "log", "--store", e.stores["team"], "--json")
	var versions []httpapi.VersionJSON
	json.Unmarshal([]byte(out), &versions)
	if i := slices.IndexFunc(versions, func(v httpapi.VersionJSON) bool {
		return v.Operation == "deleted" && v.Path != nil && *v.Path == "/stale.md" && v.CreatedBy != nil && strings.Contains(fmt.Sprint(*v.CreatedBy), sid)
	}); i < 0 {
		t.Errorf("the store's versions: %s; want /stale.md deleted by session %s", out, sid)
	}
	if _, out, _ := run(t, "", "ls", "--store", e.stores["docs"]); strings.Contains(out, "intruder") || !strings.Contains(out, "handbook") {
		t.Errorf("docs after the run: %s; want /handbook.md alone", out)
	}

	// The token reached memstore only.
	e.model.mu.Lock()
	e.up.mu.Lock()
	for _, s := range append(append([]string(nil), e.model.seen...), e.up.seen...) {
		if strings.Contains(s, memstore.SessionTokenPrefix) {
			t.Errorf("a session token left for a model or upstream request: %.200s", s)
		}
	}
	t.Logf("%d model requests, %d upstream requests", len(e.model.seen), len(e.up.seen))
	e.up.mu.Unlock()
	e.model.mu.Unlock()
}

// TestClaudeCodeConflictAndArchive changes the server under a running
// Claude Code: a memory it is about to edit is changed by someone else,
// and a store it is about to write to is archived.
func TestClaudeCodeConflictAndArchive(t *testing.T) {
	e := newE2E(t, "team", "old")
	e.put("team", "/shared.md", "first version\n")
	client := httpapi.NewClient(e.srv.url, e.srv.key)
	ctx := t.Context()
	merged := "changed on the server, and edited in Claude Code\n"
	var told int // the model requests before Claude Code's conflict notice could be sent
	e.model.before = map[int]func(){
		// Someone else changes /shared.md after Claude Code read it.
		2: func() { e.put("team", "/shared.md", "changed on the server\n") },
		// The store old is archived before Claude Code writes to it.
		3: func() {
			if _, err := client.ArchiveStore(ctx, nil, e.stores["old"]); err != nil {
				t.Errorf("archive: %v", err)
			}
		},
		// The stale edit's push failed its precondition; Claude Code
		// took the server's copy for the file and tells the model so.
		5: func() {
			e.await("Claude Code to take the server's /shared.md", time.Minute, func() bool {
				b, _ := os.ReadFile(filepath.Join(e.mount("team"), "shared.md"))
				return string(b) == "changed on the server\n"
			})
			e.model.mu.Lock()
			told = len(e.model.seen)
			e.model.mu.Unlock()
		},
		// The model redid its edit on the server's text.
		8: func() {
			e.await("the redone edit in the store", time.Minute, func() bool { _, out := e.cat("team", "/shared.md"); return out == merged })
		},
	}
	e.model.steps = func() []map[string]any {
		team, old := e.mount("team"), e.mount("old")
		shared := filepath.Join(team, "shared.md")
		return []map[string]any{
			settle,
			call(1, "Read", map[string]any{"file_path": shared}),
			call(2, "Edit", map[string]any{"file_path": shared, "old_string": "first version", "new_string": "edited in Claude Code"}),
			call(3, "Write", map[string]any{"file_path": filepath.Join(old, "late.md"), "content": "written after the archive\n"}),
			call(4, "Bash", map[string]any{"command": "true", "description": "go on"}),
			call(5, "Bash", map[string]any{"command": "true", "description": "go on"}),
			call(6, "Read", map[string]any{"file_path": shared}),
			call(7, "Edit", map[string]any{"file_path": shared, "old_string": "changed on the server\n", "new_string": merged}),
			call(8, "Bash", map[string]any{"command": "true", "description": "done"}),
		}
	}
	e.claude("team", "old")

	// The conflict: the stale edit did not overwrite the server's change
	// (its precondition failed with 409); Claude Code told the model,
	// which redid it on the server's text, so neither change is lost.
	e.model.mu.Lock()
	notice := false
	for _, s := range e.model.seen[told:] {
		notice = notice || strings.Contains(s, "shared.md") && strings.Contains(s, "was NOT saved to shared memory") && strings.Contains(s, "concurrent-write conflict")
	}
	e.model.mu.Unlock()
	if !notice {
		t.Errorf("no model request after the conflict carried Claude Code's conflict notice")
	}
	if _, server := e.cat("team", "/shared.md"); server != merged {
		t.Errorf("/shared.md after the conflict: %q; want %q", server, merged)
	}
	// The archived store: nothing written, the local file kept.
	if code, _ := e.cat("old", "/late.md"); code == 0 {
		t.Errorf("/late.md reached the archived store")
	}
	if b, err := os.ReadFile(filepath.Join(e.mount("old"), "late.md")); err != nil || string(b) != "written after the archive\n" {
		t.Errorf("the local late.md: %q %v; want it kept", b, err)
	}
}
