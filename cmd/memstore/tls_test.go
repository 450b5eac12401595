package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to PEM files in dir, and returns them with a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memstore test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

var consoleLine = regexp.MustCompile(`(?m)^memstore: console at (\S+)/console/ `)

// consoleURL is the base URL of the console on its own address, once the
// server has said it (after its serving line, which startServer awaits).
func (s *testServer) consoleURL(tb testing.TB) string {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := consoleLine.FindStringSubmatch(s.stderr.String()); m != nil {
			return m[1]
		}
	}
	tb.Fatalf("no console address in:\n%s", s.stderr)
	return ""
}

// TestServeTLS: with --tls-cert and --tls-key, the API and the console on
// its own address are served over HTTPS (TLS 1.2 at least, never plain
// HTTP), and the console's session cookie is Secure, HttpOnly and
// __Host- prefixed.
func TestServeTLS(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	const pw = "correct horse battery"
	if code, out, errOut := run(t, pw+"\n", "users", "create", "--db", db, "--name", "ann", "--role", "admin"); code != 0 {
		t.Fatalf("users create: %d %s %s", code, out, errOut)
	}
	cert, key, pool := selfSigned(t, dir)
	t.Setenv("MEMSTORE_TLS_KEY", key) // the variable and the flag combine
	s := startServer(t, "--db", db, "--tls-cert", cert, "--console-addr", "127.0.0.1:0")
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("serving %s; want https://", s.url)
	}
	consoleURL := s.consoleURL(t)
	if !strings.HasPrefix(consoleURL, "https://") {
		t.Fatalf("the console line is not https:\n%s", s.stderr)
	}
	trusting := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}

	t.Run("API", func(t *testing.T) {
		a := s.api(t)
		a.hc.Transport = trusting
		if id := a.createStore(t, "over TLS"); id == "" {
			t.Fatal("no store made")
		}
	})

	t.Run("refused", func(t *testing.T) {
		// Plain HTTP gets the server's 400, not the API.
		res, err := http.Get("http://" + strings.TrimPrefix(s.url, "https://") + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP to the HTTPS server: %s; want 400", res.Status)
			}
		}
		// TLS older than 1.2 is refused at the handshake.
		old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}}
		if res, err := old.Get(s.url + "/healthz"); err == nil {
			res.Body.Close()
			t.Errorf("a TLS 1.1 client was served: %s", res.Status)
		}
	})

	t.Run("console", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Transport: trusting, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		checkSecureCookie(t, consoleSignIn(t, c, consoleURL, "ann", pw))
		res, err := c.Get(consoleURL + "/console/stores")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("stores signed in over HTTPS: %s", res.Status)
		}
	})
}

// TestServeConsoleSecureCookies: behind a proxy that ends TLS,
// --console-secure-cookies makes the cookie Secure and __Host- prefixed
// over plain HTTP.
func TestServeConsoleSecureCookies(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	const pw = "correct horse battery"
	if code, out, errOut := run(t, pw+"\n", "users", "create", "--db", db, "--name", "ann", "--role", "admin"); code != 0 {
		t.Fatalf("users create: %d %s %s", code, out, errOut)
	}
	s := startServer(t, "--db", db, "--console-secure-cookies")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	checkSecureCookie(t, consoleSignIn(t, c, s.url, "ann", pw))
}

// consoleSignIn signs in to the console at base as a browser would, and
// returns the one cookie it sets.
func consoleSignIn(t *testing.T, c *http.Client, base, name, password string) *http.Cookie {
	t.Helper()
	form := url.Values{"workspace": {"default"}, "name": {name}, "password": {password}}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cks := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || len(cks) != 1 {
		t.Fatalf("sign in: %s, %d cookies", res.Status, len(cks))
	}
	return cks[0]
}

// checkSecureCookie checks that a session cookie is one the browser keeps
// to HTTPS and this host, away from script.
func checkSecureCookie(t *testing.T, ck *http.Cookie) {
	t.Helper()
	if ck.Name != "__Host-memstore_console" || !ck.Secure || !ck.HttpOnly || ck.Path != "/" || ck.Domain != "" {
		t.Errorf("cookie %s Secure=%v HttpOnly=%v Path=%q Domain=%q; want __Host-memstore_console, Secure, HttpOnly, Path=/, no Domain",
			ck.Name, ck.Secure, ck.HttpOnly, ck.Path, ck.Domain)
	}
}

// TestServeTLSFileErrors: a certificate or key that cannot be read, or is
// not one, stops serve at start with a message naming the file, before
// the database is made.
func TestServeTLSFileErrors(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	cert, key, _ := selfSigned(t, dir)
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tt := range []struct {
		name, cert, key string
		want            []string
	}{
		{"missing certificate", missing, key, []string{"cannot read the TLS certificate (--tls-cert)", missing, "no such file"}},
		{"missing key", cert, missing, []string{"cannot read the TLS private key (--tls-key)", missing, "no such file"}},
		{"not a certificate", garbage, key, []string{garbage, key, "are not a PEM certificate and its key"}},
		{"key of another", cert, cert, []string{"are not a PEM certificate and its key"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			code, out, errOut := run(t, "", "serve", "--db", db, "--addr", "127.0.0.1:0", "--tls-cert", tt.cert, "--tls-key", tt.key)
			if code != 1 || out != "" {
				t.Errorf("exit status %d, stdout %q; want 1 and nothing", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q; want it to contain %q", errOut, w)
				}
			}
			if strings.Contains(errOut, "PRIVATE KEY") {
				t.Errorf("the key's content is in the message: %q", errOut)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("the database was created (%v)", err)
			}
		})
	}
}
