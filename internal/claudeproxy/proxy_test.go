package claudeproxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const token = "st-memstore-secret-of-the-run"

// seen records the requests a fake server got.
type seen struct {
	mu   sync.Mutex
	reqs []string // method, path?query, then selected headers and the body
}

func (s *seen) handler(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Method+" "+r.Host+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization")+" key="+r.Header.Get("X-Api-Key")+" ae="+r.Header.Get("Accept-Encoding")+" xff="+r.Header.Get("X-Forwarded-For")+" body="+string(body))
		s.mu.Unlock()
		w.Header().Set("X-Served-By", name)
		io.WriteString(w, name+" answered "+r.URL.Path)
	}
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

type fixture struct {
	ca       *CA
	proxy    *Proxy
	proxyURL *url.URL
	memstore *seen
	upstream *seen
	client   *http.Client // trusts the CA and goes through the proxy
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ca, err := LoadCA(filepath.Join(t.TempDir(), "memstore"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ca: ca, memstore: &seen{}, upstream: &seen{}}
	ms := httptest.NewServer(f.memstore.handler("memstore"))
	t.Cleanup(ms.Close)
	// The fake upstream presents a certificate for the memory host from
	// its own authority, as the real one does from a public one.
	up := httptest.NewUnstartedServer(f.upstream.handler("upstream"))
	upCA, _, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := upCA.issue(MemoryHost)
	if err != nil {
		t.Fatal(err)
	}
	up.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}}
	up.StartTLS()
	t.Cleanup(up.Close)

	msURL, _ := url.Parse(ms.URL)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.proxy, err = Start(l, Config{
		CA: ca, Memstore: msURL, Stores: []string{"memstore_a", "memstore_b"}, Token: token,
		Upstream: up.Listener.Addr().String(), UpstreamRoots: upCA.Pool(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.proxy.Close() })
	f.proxyURL = &url.URL{Scheme: "http", Host: l.Addr().String()}
	f.client = &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(f.proxyURL),
		// Offering h2 too, as Claude Code's runtime may: the proxy picks
		// http/1.1.
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{"h2", "http/1.1"}},
	}}
	return f
}

func (f *fixture) do(t *testing.T, method, target, auth, body string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

func TestMemoryRoutesGoToMemstore(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{
		"https://api.anthropic.com/v1/memory_stores/memstore_a",
		"https://api.anthropic.com/v1/memory_stores/memstore_a/memories?path_prefix=%2Fteam%2F&limit=100",
		"https://api.anthropic.com/v1/memory_stores/memstore_b/memories/export?view=basic",
	} {
		code, body, resp := f.do(t, "GET", target, "Bearer "+token, "")
		if code != 200 || !strings.HasPrefix(body, "memstore answered") || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" {
			t.Errorf("GET %s = %d %q (ALPN %v); want memstore's answer over http/1.1", target, code, body, resp.TLS)
		}
	}
	code, _, _ := f.do(t, "POST", "https://api.anthropic.com/v1/memory_stores/memstore_a/memories", "Bearer "+token, `{"path":"/a.md","content":"x"}`)
	if code != 200 {
		t.Fatalf("POST = %d", code)
	}
	got := f.memstore.list()
	want := []string{
		"GET /v1/memory_stores/memstore_a auth=Bearer " + token,
		"GET /v1/memory_stores/memstore_a/memories?path_prefix=%2Fteam%2F&limit=100 auth=Bearer " + token,
		"GET /v1/memory_stores/memstore_b/memories/export?view=basic auth=Bearer " + token,
		"POST /v1/memory_stores/memstore_a/memories auth=Bearer " + token,
	}
	if len(got) != len(want) {
		t.Fatalf("memstore got %q", got)
	}
	for i := range want {
		method, rest, _ := strings.Cut(want[i], " ")
		uri, auth, _ := strings.Cut(rest, " ")
		if !strings.HasPrefix(got[i], method+" 127.0.0.1:") || !strings.Contains(got[i], uri+" "+auth+" ") {
			t.Errorf("memstore request %d = %q; want %s to %s with %s", i, got[i], method, uri, auth)
		}
		if !strings.Contains(got[i], "xff= ") {
			t.Errorf("memstore request %d = %q; want no X-Forwarded-For", i, got[i])
		}
	}
	if !strings.HasSuffix(got[3], `body={"path":"/a.md","content":"x"}`) {
		t.Errorf("POST body = %q", got[3])
	}
	if up := f.upstream.list(); len(up) != 0 {
		t.Errorf("upstream got %q; want nothing", up)
	}
}

func TestOtherRoutesGoUpstreamUnchanged(t *testing.T) {
	f := newFixture(t)
	body := `{"model":"claude","messages":[]}`
	req, _ := http.NewRequest("POST", "https://api.anthropic.com/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("X-Api-Key", "sk-ant-the-users-own")
	req.Header.Set("Accept-Encoding", "br")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "upstream answered /v1/messages" {
		t.Fatalf("POST /v1/messages = %d %q", resp.StatusCode, b)
	}
	// An unconfigured store, and the list of stores, are the real host's.
	for _, p := range []string{"/v1/memory_stores/memstore_other/memories", "/v1/memory_stores"} {
		if code, b, _ := f.do(t, "GET", "https://api.anthropic.com"+p, "", ""); code != 200 || !strings.HasPrefix(b, "upstream") {
			t.Errorf("GET %s = %d %q; want the upstream's answer", p, code, b)
		}
	}
	got := f.upstream.list()
	want0 := "POST api.anthropic.com/v1/messages?beta=true auth= key=sk-ant-the-users-own ae=br xff= body=" + body
	if len(got) != 3 || got[0] != want0 {
		t.Fatalf("upstream got %q; want first %q", got, want0)
	}
	if ms := f.memstore.list(); len(ms) != 0 {
		t.Errorf("memstore got %q; want nothing", ms)
	}
}

func TestTokenNeverForwardedUpstream(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct{ target, auth string }{
		{"https://api.anthropic.com/v1/messages", "Bearer " + token},
		{"https://api.anthropic.com/v1/memory_stores/memstore_other/memories", "Bearer " + token},
		{"https://api.anthropic.com/v1/memory_stores", "Bearer " + token},
		{"https://api.anthropic.com/v1/messages?t=" + token, ""},
	} {
		code, body, _ := f.do(t, "GET", tt.target, tt.auth, "")
		var e struct {
			Error struct{ Type, Message string }
		}
		json.Unmarshal([]byte(body), &e)
		if code != 403 || e.Error.Type != "permission_error" || !strings.Contains(e.Error.Message, "refused to forward the memstore token") {
			t.Errorf("GET %s = %d %q; want 403 permission_error", tt.target, code, body)
		}
	}
	if up := f.upstream.list(); len(up) != 0 {
		t.Errorf("upstream got %q; want nothing", up)
	}
}

func TestSneakyPathsRefused(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{
		"/v1/memory_stores/memstore_a/../memstore_other/memories",
		"/v1/memory_stores/memstore_a/memories/%2e%2e/%2e%2e/memstore_other",
		"/v1/memory_stores/memstore_a%2F..%2Fmemstore_other/memories",
		"/v1/memory_stores/memstore_a//memories",
		"/v1/memory_stores/memstore_%61/memories",
	} {
		u := &url.URL{Scheme: "https", Host: MemoryHost, Opaque: "//" + MemoryHost + p}
		req := &http.Request{Method: "GET", URL: u, Header: http.Header{"Authorization": {"Bearer " + token}}, Host: MemoryHost}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("GET %s = %d %q; want 400", p, resp.StatusCode, b)
		}
	}
	if ms, up := f.memstore.list(), f.upstream.list(); len(ms)+len(up) != 0 {
		t.Errorf("memstore got %q, upstream %q; want nothing", ms, up)
	}
}

func TestOtherHostsTunnelled(t *testing.T) {
	f := newFixture(t)
	// A TLS server with its own certificate: the client sees that
	// certificate, not one of the proxy's, so the bytes went through.
	other := &seen{}
	srv := httptest.NewTLSServer(other.handler("other"))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(f.proxyURL), TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(srv.URL + "/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "other answered /x" || !resp.TLS.PeerCertificates[0].Equal(srv.Certificate()) {
		t.Errorf("tunnelled GET = %q; want the other server's answer with its own certificate", b)
	}

	// Raw bytes, both ways, through a CONNECT to a TCP echo server.
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	conn, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	payload := "\x00\x01binary\r\n\xffbytes"
	io.WriteString(conn, "CONNECT "+echo.Addr().String()+" HTTP/1.1\r\nHost: "+echo.Addr().String()+"\r\n\r\n"+payload)
	br := bufio.NewReader(conn)
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT = %v, %v", resp, err)
	}
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != payload {
		t.Errorf("echoed %q, %v; want %q", got, err, payload)
	}
}

func TestCANameConstraints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, CAKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	again, err := LoadCA(dir)
	if err != nil || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("second LoadCA: %v; want the same authority", err)
	}
	if ca.CertFile != filepath.Join(dir, CACertFile) {
		t.Errorf("CertFile = %q", ca.CertFile)
	}
	// A certificate the authority signs for another host is refused by a
	// client that trusts the authority, even though the signature is
	// good: the name constraints forbid it.
	for _, host := range []string{"example.com", "anthropic.com", "evil-api.anthropic.com.example"} {
		leaf, err := ca.issue(host)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}}
		srv.StartTLS()
		conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: ca.Pool(), ServerName: host})
		var inv x509.CertificateInvalidError
		if err == nil || !errors.As(err, &inv) || inv.Reason != x509.CANotAuthorizedForThisName {
			t.Errorf("TLS to a %s leaf: %v; want a name-constraint refusal", host, err)
		}
		if conn != nil {
			conn.Close()
		}
		srv.Close()
	}
	// The memory host's own certificate verifies.
	leaf, _ := ca.issue(MemoryHost)
	cert, _ := x509.ParseCertificate(leaf.Certificate[0])
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: MemoryHost}); err != nil {
		t.Errorf("the memory host's certificate: %v", err)
	}
	// A file that is not the authority is reported, not replaced.
	os.WriteFile(filepath.Join(dir, CACertFile), []byte("junk"), 0o600)
	if _, err := LoadCA(dir); err == nil || !strings.Contains(err.Error(), "remove") {
		t.Errorf("LoadCA over junk: %v; want an error saying to remove the files", err)
	}
}

// TestPlainHTTPForwarded: Claude Code sends its model calls to an http://
// ANTHROPIC_BASE_URL through the proxy too; they arrive unchanged, and the
// memstore token is refused there as well.
func TestPlainHTTPForwarded(t *testing.T) {
	f := newFixture(t)
	model := &seen{}
	srv := httptest.NewServer(model.handler("model"))
	defer srv.Close()
	body := `{"model":"claude","stream":true}`
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("X-Api-Key", "sk-ant-the-users-own")
	req.Header.Set("Accept-Encoding", "br")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "POST " + srv.Listener.Addr().String() + "/v1/messages?beta=true auth= key=sk-ant-the-users-own ae=br xff= body=" + body
	if got := model.list(); resp.StatusCode != 200 || string(b) != "model answered /v1/messages" || len(got) != 1 || got[0] != want {
		t.Errorf("POST through the proxy = %d %q, server got %q; want %q", resp.StatusCode, b, got, want)
	}
	if code, body, _ := f.do(t, "GET", srv.URL+"/v1/models", "Bearer "+token, ""); code != 403 || !strings.Contains(body, "refused to forward the memstore token") {
		t.Errorf("GET with the token = %d %q; want 403", code, body)
	}
	if got := model.list(); len(got) != 1 {
		t.Errorf("server got %q; want the first request only", got)
	}
}
