package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestHealthcheck: 'memstore healthcheck' exits 0 when the server's
// /healthz answers 200, asking the server that serve would run with the
// same environment when no URL is given (an address of every interface is
// asked on loopback), and 1 with the reason when the server is down,
// unhealthy or answers anything but 200 itself.
func TestHealthcheck(t *testing.T) {
	clearEnv(t)
	t.Setenv("MEMSTORE_ADDR", "")
	t.Setenv("MEMSTORE_TLS_CERT", "")
	srv := startServer(t, "--db", t.TempDir()+"/m.db")

	code, out, errOut := run(t, "", "healthcheck", "--url", srv.url)
	if code != 0 || !strings.Contains(out, srv.url+"/healthz: 200 OK") {
		t.Fatalf("healthcheck --url %s: status %d, stdout %q, stderr %q", srv.url, code, out, errOut)
	}

	// From serve's environment, as a container's HEALTHCHECK runs it.
	u, _ := url.Parse(srv.url)
	t.Setenv("MEMSTORE_ADDR", "0.0.0.0:"+u.Port())
	code, out, errOut = run(t, "", "healthcheck")
	if want := "http://127.0.0.1:" + u.Port() + "/healthz: 200 OK"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("healthcheck with MEMSTORE_ADDR=0.0.0.0:%s: status %d, stdout %q, stderr %q; want %q", u.Port(), code, out, errOut, want)
	}
	t.Setenv("MEMSTORE_ADDR", "[::]:"+u.Port())
	if code, out, errOut = run(t, "", "healthcheck"); code != 0 {
		t.Fatalf("healthcheck with MEMSTORE_ADDR=[::]:%s: status %d, stdout %q, stderr %q", u.Port(), code, out, errOut)
	}
	// The flag wins over the variable.
	t.Setenv("MEMSTORE_URL", "http://127.0.0.1:1")
	if code, out, errOut = run(t, "", "healthcheck", "--url", srv.url); code != 0 {
		t.Fatalf("--url over MEMSTORE_URL: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Setenv("MEMSTORE_URL", "")

	// Nobody listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	code, out, errOut = run(t, "", "healthcheck", "--url", closed)
	if code != 1 || !strings.Contains(errOut, closed+"/healthz") || !strings.Contains(errOut, "no answer") {
		t.Fatalf("healthcheck of a closed port: status %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A server whose database is away answers 503; a redirect is not
	// followed: only the server asked may say it is healthy.
	unhealthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"unavailable","database":"unreachable"}`))
	}))
	defer unhealthy.Close()
	code, out, errOut = run(t, "", "healthcheck", "--url", unhealthy.URL+"/")
	if code != 1 || !strings.Contains(errOut, "503 Service Unavailable") || !strings.Contains(errOut, `"database":"unreachable"`) {
		t.Fatalf("healthcheck of an unhealthy server: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	redirect := httptest.NewServer(http.RedirectHandler(srv.url+"/healthz", http.StatusFound))
	defer redirect.Close()
	if code, out, errOut = run(t, "", "healthcheck", "--url", redirect.URL); code != 1 || !strings.Contains(errOut, "302 Found") {
		t.Fatalf("healthcheck of a redirect: status %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Usage errors.
	for _, args := range [][]string{
		{"healthcheck", "--url", "ftp://127.0.0.1/"},
		{"healthcheck", "--url", "127.0.0.1:6366"},
		{"healthcheck", "--url", srv.url + "/v1"},
		{"healthcheck", "--timeout", "0s"},
		{"healthcheck", "extra"},
	} {
		if code, _, errOut := run(t, "", args...); code != 2 || !strings.Contains(errOut, "memstore healthcheck") {
			t.Errorf("%q: status %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
	t.Setenv("MEMSTORE_URL", srv.url+"/v1")
	if code, _, errOut := run(t, "", "healthcheck"); code != 2 || !strings.Contains(errOut, "MEMSTORE_URL") {
		t.Errorf("MEMSTORE_URL with a path: status %d, stderr %q; want a usage error naming the variable", code, errOut)
	}
	t.Setenv("MEMSTORE_URL", "")
	t.Setenv("MEMSTORE_ADDR", "nonsense")
	if code, _, errOut := run(t, "", "healthcheck"); code != 2 || !strings.Contains(errOut, "MEMSTORE_ADDR") {
		t.Errorf("MEMSTORE_ADDR=nonsense: status %d, stderr %q; want a usage error naming the variable", code, errOut)
	}
}

// TestHealthcheckTLS: with MEMSTORE_TLS_CERT, as serve, healthcheck asks
// over HTTPS and trusts the server only if it shows that very
// certificate (whatever names it holds).
func TestHealthcheckTLS(t *testing.T) {
	clearEnv(t)
	dir, other := t.TempDir(), t.TempDir()
	cert, key, _ := selfSigned(t, dir)
	otherCert, _, _ := selfSigned(t, other)
	srv := startServer(t, "--db", dir+"/m.db", "--tls-cert", cert, "--tls-key", key)
	u, _ := url.Parse(srv.url)
	t.Setenv("MEMSTORE_ADDR", "0.0.0.0:"+u.Port())

	t.Setenv("MEMSTORE_TLS_CERT", cert)
	code, out, errOut := run(t, "", "healthcheck")
	if want := "https://127.0.0.1:" + u.Port() + "/healthz: 200 OK"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("healthcheck over TLS: status %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	t.Setenv("MEMSTORE_TLS_CERT", otherCert)
	if code, out, errOut = run(t, "", "healthcheck"); code != 1 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("healthcheck of a server showing another certificate: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Setenv("MEMSTORE_TLS_CERT", dir+"/missing.pem")
	if code, out, errOut = run(t, "", "healthcheck"); code != 1 || !strings.Contains(errOut, "MEMSTORE_TLS_CERT") {
		t.Fatalf("healthcheck with a missing certificate file: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	// An explicit https URL is verified as any client would: the
	// self-signed certificate is not trusted.
	t.Setenv("MEMSTORE_TLS_CERT", "")
	if code, out, errOut = run(t, "", "healthcheck", "--url", srv.url); code != 1 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("healthcheck --url of a self-signed server: status %d, stdout %q, stderr %q", code, out, errOut)
	}
}
