package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
)

// testServer is memstore serve running in this process, as Main runs it.
type testServer struct {
	url            string // http://127.0.0.1:PORT, https:// with --tls-cert
	key            string // the first key, when this run made it
	stdout, stderr *syncbuf.Buffer
	stop           context.CancelFunc
	done           chan int // receives Main's exit status
}

var servingLine = regexp.MustCompile(`(?m)^memstore: serving (https?://\S+) \(database `)

// startServer runs Main("serve", args...) in a goroutine on 127.0.0.1:0
// and waits until it serves. The server is stopped at the end of the test.
func startServer(tb testing.TB, args ...string) *testServer {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, stop: cancel, done: make(chan int, 1)}
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)
	go func() { s.done <- Main(ctx, args, strings.NewReader(""), s.stdout, s.stderr) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			tb.Errorf("the server did not stop within 15s")
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := servingLine.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			s.key = lastKey(s.stdout.String())
			return s
		}
		select {
		case code := <-s.done:
			tb.Fatalf("memstore serve %q exited with status %d before serving:\n%s", args, code, s.stderr)
		default:
		}
	}
	tb.Fatalf("memstore serve %q did not serve within 10s:\n%s", args, s.stderr)
	return nil
}

// wait stops the server as SIGINT or SIGTERM would and returns its exit
// status.
func (s *testServer) wait(tb testing.TB) int {
	tb.Helper()
	s.stop()
	select {
	case code := <-s.done:
		s.done <- code // for the cleanup
		return code
	case <-time.After(15 * time.Second):
		tb.Fatalf("the server did not stop within 15s")
		return -1
	}
}

// wantRunning checks, once the server was told to stop, that Main has
// not returned for 300ms while what (a request) is in progress.
func (s *testServer) wantRunning(tb testing.TB, what string) {
	tb.Helper()
	select {
	case code := <-s.done:
		s.done <- code
		tb.Fatalf("Main returned %d while %s was in progress", code, what)
	case <-time.After(300 * time.Millisecond):
	}
}

// wantReturned checks that Main returns, with status 0, within 10s of
// the end of what (a request) it waited for.
func (s *testServer) wantReturned(tb testing.TB, what string) {
	tb.Helper()
	select {
	case code := <-s.done:
		s.done <- code
		if code != 0 {
			tb.Fatalf("exit status %d:\n%s", code, s.stderr)
		}
	case <-time.After(10 * time.Second):
		tb.Fatalf("Main did not return after %s ended", what)
	}
}

// lastKey is the API key on the last line of out, "" if there is none.
func lastKey(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; strings.HasPrefix(last, "sk-memstore-") {
		return last
	}
	return ""
}

// api is a minimal client of the HTTP API that shows the tests every
// status, 5xx included.
type api struct {
	base, key string
	hc        *http.Client
}

func newAPI(base, key string) *api {
	// One idle connection per client goroutine, instead of the default
	// two, so that concurrent clients reuse their connections.
	return &api{base: base, key: key, hc: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		Timeout:   30 * time.Second,
	}}
}

// call sends a request and decodes a 200 answer into out. A transport
// error (the server is gone) is returned; any answer is returned as its
// status and body.
func (a *api) call(method, path string, body, out any) (int, []byte, error) {
	status, _, data, err := a.send(method, path, body, out)
	return status, data, err
}

// send is call that also returns the answer's headers.
func (a *api) send(method, path string, body, out any) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	httpapi.SetHeaders(req.Header, a.key)
	if body != nil {
		req.Header.Set("content-type", "application/json")
	}
	res, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	if res.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return res.StatusCode, res.Header, data, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, res.Header, data, nil
}

// must is call for requests that must answer 200.
func (a *api) must(tb testing.TB, method, path string, body, out any) {
	tb.Helper()
	status, data, err := a.call(method, path, body, out)
	if err != nil || status != http.StatusOK {
		tb.Fatalf("%s %s: %d %s %v", method, path, status, data, err)
	}
}

// createStore makes a memory store and returns its ID.
func (a *api) createStore(tb testing.TB, name string) string {
	tb.Helper()
	var s httpapi.StoreJSON
	a.must(tb, "POST", "/v1/memory_stores", httpapi.StoreCreateRequest{Name: &name}, &s)
	return s.ID
}

func TestServeFirstKey(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a", "b", "m.db")
	s := startServer(t, "--db", db)
	if s.key == "" {
		t.Fatalf("a first run printed no key:\n%s", s.stdout)
	}
	if !strings.Contains(s.stdout.String(), "It will not be shown again") {
		t.Errorf("the key comes without saying it will not be shown again:\n%s", s.stdout)
	}
	saved, err := os.ReadFile(db + ".key")
	if err != nil || string(saved) != s.key+"\n" {
		t.Errorf("key file holds %q (%v); want the printed key %q", saved, err, s.key)
	}
	if strings.Contains(s.stderr.String(), s.key) {
		t.Errorf("the key is in the log:\n%s", s.stderr)
	}

	// The key works; another does not.
	s.api(t).must(t, "GET", "/v1/memory_stores", nil, nil)
	if status, _, err := newAPI(s.url, "sk-memstore-wrong").call("GET", "/v1/memory_stores", nil, nil); status != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d %v; want 401", status, err)
	}
	// /metrics needs no key and reports the runtime and the database.
	res, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"\nmemstore_workspaces 1\n", "\nmemstore_stores 0\n", "\ngo_goroutines ", "memstore_http_requests_total{"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(string(metrics), want) {
			t.Errorf("GET /metrics: %s without %q:\n%s", res.Status, want, metrics)
		}
	}
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, s.stderr)
	}

	// A second run makes no key, and the first still works. Its index file
	// deleted, it builds it again and says so.
	for _, suffix := range []string{"-search", "-search-wal", "-search-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	s2 := startServer(t, "--db", db, "--log-level", "info")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s2.stderr.String(), `msg="search indexes built" memories=0`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the index file's build:\n%s", s2.stderr)
		}
	}
	if !strings.Contains(s2.stderr.String(), `msg="building the search indexes; searches wait for them" memories=0 file=`+db+"-search") {
		t.Errorf("the build was not announced:\n%s", s2.stderr)
	}
	if out := s2.stdout.String(); out != "" {
		t.Errorf("a second run printed %q; want nothing", out)
	}
	newAPI(s2.url, s.key).must(t, "GET", "/v1/memory_stores", nil, nil)
	if after, _ := os.ReadFile(db + ".key"); !bytes.Equal(after, saved) {
		t.Errorf("the key file changed from %q to %q", saved, after)
	}
}

// api is a client of s with its first key.
func (s *testServer) api(tb testing.TB) *api {
	tb.Helper()
	if s.key == "" {
		tb.Fatalf("the server printed no key")
	}
	return newAPI(s.url, s.key)
}

// TestServeShutdownWaitsForRequest stops the server, as SIGTERM does, while
// a request is in progress: the request is answered in full, and Main
// returns 0 only then.
func TestServeShutdownWaitsForRequest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db)
	store := s.createStore(t)

	// A client that sends its headers and half its body, then stalls.
	body := `{"path":"/slow.md","content":"written while the server was stopping"}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second)) // a stuck server fails the test, not hangs it
	fmt.Fprintf(conn, "POST /v1/memory_stores/%s/memories HTTP/1.1\r\nHost: memstore\r\nx-api-key: %s\r\n"+
		"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s", store, s.key, len(body), body[:20])
	time.Sleep(100 * time.Millisecond) // let the server start on it

	s.stop()
	// The server stops accepting connections at once...
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections 5s after it was told to stop")
		}
	}
	// ...but waits for the request in progress.
	s.wantRunning(t, "a request")
	if _, err := io.WriteString(conn, body[20:]); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the request in progress got no answer: %v", err)
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(data), `"path":"/slow.md"`) {
		t.Fatalf("the request in progress got %s %s", res.Status, data)
	}
	s.wantReturned(t, "the last request")
	if !strings.Contains(s.stderr.String(), "memstore: stopped") {
		t.Errorf("no 'stopped' line:\n%s", s.stderr)
	}

	// What the request wrote is in the database.
	s2 := startServer(t, "--db", db)
	var page httpapi.PageJSON[httpapi.ListItemJSON]
	newAPI(s2.url, s.key).must(t, "GET", "/v1/memory_stores/"+store+"/memories", nil, &page)
	if len(page.Data) != 1 || page.Data[0].Memory == nil || page.Data[0].Memory.Path != "/slow.md" {
		t.Errorf("after the restart the store holds %+v; want /slow.md", page.Data)
	}
}

// createStore makes a store with the server's first key.
func (s *testServer) createStore(tb testing.TB) string {
	tb.Helper()
	return s.api(tb).createStore(tb, "test")
}

// TestServeConfigErrors checks that each bad value, from a flag or from
// the environment, is a usage error (exit 2) that names where it came from,
// before anything is created.
func TestServeConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"create-existing", []string{"--create-existing", "maybe"}, nil, `invalid value "maybe" for flag -create-existing: must be conflict or upsert`},
		{"max-memories negative", []string{"--max-memories-per-store", "-1"}, nil, `invalid value "-1" for flag -max-memories-per-store: must be a whole number, 0 or more`},
		{"max-body-bytes", []string{"--max-body-bytes", "1MB"}, nil, `invalid value "1MB" for flag -max-body-bytes: must be a whole number, 0 or more`},
		{"addr without port", []string{"--addr", "localhost"}, nil, `invalid value "localhost" for flag -addr: must be HOST:PORT`},
		{"addr bad port", []string{"--addr", "127.0.0.1:70000"}, nil, `invalid value "127.0.0.1:70000" for flag -addr: must be HOST:PORT`},
		{"log-format", []string{"--log-format", "xml"}, nil, `invalid value "xml" for flag -log-format: must be text or json`},
		{"log-level", []string{"--log-level", "loud"}, nil, `invalid value "loud" for flag -log-level: must be one of debug, info, warn, error`},
		{"strict-headers", []string{"--strict-headers=perhaps"}, nil, `invalid boolean value "perhaps" for -strict-headers: must be true or false`},
		{"unknown flag", []string{"--port", "80"}, nil, `flag provided but not defined: -port`},
		{"argument", []string{"now"}, nil, `memstore serve: unexpected argument "now"`},
		{"env create-existing", nil, map[string]string{"MEMSTORE_CREATE_EXISTING": "sometimes"}, `memstore serve: MEMSTORE_CREATE_EXISTING="sometimes": must be conflict or upsert`},
		{"env strict-headers", nil, map[string]string{"MEMSTORE_STRICT_HEADERS": "yes please"}, `memstore serve: MEMSTORE_STRICT_HEADERS="yes please": must be true or false`},
		{"env max-memories", nil, map[string]string{"MEMSTORE_MAX_MEMORIES_PER_STORE": "many"}, `memstore serve: MEMSTORE_MAX_MEMORIES_PER_STORE="many": must be a whole number, 0 or more`},
		{"env max-body-bytes", nil, map[string]string{"MEMSTORE_MAX_BODY_BYTES": "-5"}, `memstore serve: MEMSTORE_MAX_BODY_BYTES="-5": must be a whole number, 0 or more`},
		{"env addr", nil, map[string]string{"MEMSTORE_ADDR": "6366"}, `memstore serve: MEMSTORE_ADDR="6366": must be HOST:PORT`},
		{"env log-level", nil, map[string]string{"MEMSTORE_LOG_LEVEL": "verbose"}, `memstore serve: MEMSTORE_LOG_LEVEL="verbose": must be one of debug, info, warn, error`},
		{"env log-format", nil, map[string]string{"MEMSTORE_LOG_FORMAT": "JSON"}, `memstore serve: MEMSTORE_LOG_FORMAT="JSON": must be text or json`},
		{"max-connections", []string{"--max-connections", "-1"}, nil, `invalid value "-1" for flag -max-connections: must be a whole number, 0 or more`},
		{"env max-connections", nil, map[string]string{"MEMSTORE_MAX_CONNECTIONS": "lots"}, `memstore serve: MEMSTORE_MAX_CONNECTIONS="lots": must be a whole number, 0 or more`},
		{"mcp-idle-timeout", []string{"--mcp-idle-timeout", "0s"}, nil, `invalid value "0s" for flag -mcp-idle-timeout: must be a duration above 0, such as 30m or 2h`},
		{"env mcp-max-sessions", nil, map[string]string{"MEMSTORE_MCP_MAX_SESSIONS": "lots"}, `memstore serve: MEMSTORE_MCP_MAX_SESSIONS="lots": must be a whole number, 0 or more`},
		{"mcp sessions over half the connections", []string{"--max-connections", "100", "--mcp-max-sessions", "51"}, nil, `memstore serve: --mcp-max-sessions 51 is more than half of --max-connections 100: each MCP session may hold a connection open for its GET stream; keep --mcp-max-sessions at most half of --max-connections`},
		{"default mcp sessions over half the connections", []string{"--max-connections", "300"}, nil, `memstore serve: --mcp-max-sessions 256 is more than half of --max-connections 300`},
		{"env mcp sessions over half the default connections", nil, map[string]string{"MEMSTORE_MCP_MAX_SESSIONS": "513"}, `memstore serve: --mcp-max-sessions 513 is more than half of --max-connections 1024`},
		{"tls-cert without tls-key", []string{"--tls-cert", "cert.pem"}, nil, `memstore serve: --tls-cert and --tls-key go together (MEMSTORE_TLS_CERT and MEMSTORE_TLS_KEY): give both the certificate and its private key, or neither for plain HTTP`},
		{"env tls-key without tls-cert", nil, map[string]string{"MEMSTORE_TLS_KEY": "key.pem"}, `memstore serve: --tls-cert and --tls-key go together`},
		{"env console-secure-cookies", nil, map[string]string{"MEMSTORE_CONSOLE_SECURE_COOKIES": "on"}, `memstore serve: MEMSTORE_CONSOLE_SECURE_COOKIES="on": must be true or false`},
		{"trusted-proxies", []string{"--trusted-proxies", "10.0.0.0/8,proxy.example.com"}, nil, `invalid value "10.0.0.0/8,proxy.example.com" for flag -trusted-proxies: "proxy.example.com" is neither a CIDR range`},
		{"env trusted-proxies", nil, map[string]string{"MEMSTORE_TRUSTED_PROXIES": "10.0.0.0/33"}, `memstore serve: MEMSTORE_TRUSTED_PROXIES="10.0.0.0/33": "10.0.0.0/33" is neither a CIDR range`},
		{"webhook-retry-min", []string{"--webhook-retry-min", "0s"}, nil, `invalid value "0s" for flag -webhook-retry-min: must be a duration above 0`},
		{"webhook-retry-max below min", []string{"--webhook-retry-min", "2m", "--webhook-retry-max", "1m"}, nil, `memstore serve: --webhook-retry-max 1m0s is shorter than --webhook-retry-min 2m0s`},
		{"env webhook-retry-max below the default min", nil, map[string]string{"MEMSTORE_WEBHOOK_RETRY_MAX": "10s"}, `memstore serve: --webhook-retry-max 10s is shorter than --webhook-retry-min 30s`},
		{"webhook-attempts", []string{"--webhook-attempts", "0"}, nil, `memstore serve: --webhook-attempts must be 1 or more (1: no retries), not 0`},
		{"env webhook-attempts", nil, map[string]string{"MEMSTORE_WEBHOOK_ATTEMPTS": "ten"}, `memstore serve: MEMSTORE_WEBHOOK_ATTEMPTS="ten": must be a whole number, 0 or more`},
		{"env allowed-origins", nil, map[string]string{"MEMSTORE_ALLOWED_ORIGINS": "https://a.example.com,b.example.com"}, `memstore serve: MEMSTORE_ALLOWED_ORIGINS="https://a.example.com,b.example.com": origin "b.example.com" is not SCHEME://HOST[:PORT]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			t.Setenv("MEMSTORE_DB", db)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append([]string{"serve"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit status %d; want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", stderr.String(), tt.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %q; want nothing", stdout.String())
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("the database was created (%v)", err)
			}
		})
	}
}

// TestServeOptions checks that the options reach the server, from flags
// and from the environment, and that a flag wins over its variable even
// when the variable's value is bad.
func TestServeOptions(t *testing.T) {
	t.Setenv("MEMSTORE_CREATE_EXISTING", "not-a-choice") // overridden below
	t.Setenv("MEMSTORE_MAX_MEMORIES_PER_STORE", "2")
	t.Setenv("MEMSTORE_LOG_FORMAT", "json")
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"),
		"--create-existing", "upsert", "--strict-headers", "--max-body-bytes", "300", "--log-level", "info")
	a := s.api(t)
	store := a.createStore(t, "options")
	memories := "/v1/memory_stores/" + store + "/memories"
	create := func(path, content string) (int, []byte) {
		status, data, err := a.call("POST", memories, httpapi.MemoryCreateRequest{Path: &path, Content: &content}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return status, data
	}

	// upsert: creating at a taken path replaces the content.
	if status, data := create("/a.md", "one"); status != 200 {
		t.Fatalf("create: %d %s", status, data)
	}
	if status, data := create("/a.md", "two"); status != 200 {
		t.Errorf("create at a taken path with upsert: %d %s; want 200", status, data)
	}
	// MEMSTORE_MAX_MEMORIES_PER_STORE=2: a third memory is refused.
	if status, data := create("/b.md", "b"); status != 200 {
		t.Fatalf("second memory: %d %s", status, data)
	}
	if status, data := create("/c.md", "c"); status != http.StatusBadRequest || !strings.Contains(string(data), "is at its limit of 2 memories; delete some before creating more, or have the server's operator raise the limit (memstore serve --max-memories-per-store)") {
		t.Errorf("a third memory with a cap of 2: %d %s; want 400", status, data)
	}
	// --max-body-bytes 300.
	if status, data := create("/big.md", strings.Repeat("x", 400)); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 400-byte body with a cap of 300: %d %s; want 413", status, data)
	}
	// --strict-headers: a request without anthropic-version is refused.
	req, _ := http.NewRequest("GET", s.url+"/v1/memory_stores", nil)
	req.Header.Set("x-api-key", s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("no anthropic-version with --strict-headers: %s; want 400", res.Status)
	}
	// MEMSTORE_LOG_FORMAT=json: the request log is JSON, without content.
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, s.stderr)
	}
	logged := 0
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == "request" {
			logged++
		}
	}
	if logged < 6 {
		t.Errorf("%d JSON request lines in the log; want at least 6:\n%s", logged, s.stderr)
	}
	if strings.Contains(s.stderr.String(), "xxxxxxxx") || strings.Contains(s.stderr.String(), s.key) {
		t.Errorf("content or the key is in the log:\n%s", s.stderr)
	}
}

// TestServeMaxConnections: idle connections beyond MEMSTORE_MAX_CONNECTIONS
// are closed, oldest first (each once it has had a second to send a
// request), and an authenticated request still gets an answer.
func TestServeMaxConnections(t *testing.T) {
	const max, extra = 8, 20
	t.Setenv("MEMSTORE_MAX_CONNECTIONS", strconv.Itoa(max))
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"), "--mcp-max-sessions", strconv.Itoa(max/2))
	addr := strings.TrimPrefix(s.url, "http://")
	var conns []net.Conn
	for range max + extra {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// held reports whether the server still holds c: a read that times
	// out, rather than ending, means it does.
	held := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	// The last is accepted when the last of the extra ones is closed.
	for deadline := time.Now().Add(20 * time.Second); held(conns[extra-1]); {
		if time.Now().After(deadline) {
			t.Fatal("the last connection was not accepted within 20s")
		}
	}
	for i, c := range conns {
		if want := i >= extra; held(c) != want {
			t.Errorf("connection %d of %d held: %v, want %v (the oldest idle ones make room)", i, len(conns), !want, want)
		}
	}
	var page httpapi.PageJSON[httpapi.StoreJSON]
	s.api(t).must(t, "GET", "/v1/memory_stores", nil, &page)
}
