package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

const healthcheckHelp = `Usage: memstore healthcheck [--url URL] [--timeout DURATION]

Asks a memstore server whether it can serve: GET URL/healthz. The exit
status is 0 when the server answers 200 itself (a redirect does not
count), 1 otherwise, with the reason on standard error. It is what a
container's HEALTHCHECK runs, where there is no curl.

The server is --url, else MEMSTORE_URL, else the one 'memstore serve'
runs with the same environment: MEMSTORE_ADDR (default 127.0.0.1:6366),
asked on loopback when it names every interface (0.0.0.0:6366, :6366),
over HTTPS when MEMSTORE_TLS_CERT is set, trusting the server only if it
shows the certificate in that file.
`

// defaultHealthcheckTimeout bounds a healthcheck's request, well within
// a container engine's own timeout of a health check (30 seconds by
// default), and above the server's own ping of its database
// (httpapi.HealthTimeout).
const defaultHealthcheckTimeout = 5 * time.Second

// healthcheckBodyBytes is how much of an unhealthy answer is shown.
const healthcheckBodyBytes = 512

func runHealthcheck(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "healthcheck", healthcheckHelp)
	base := fs.String("url", "", "memstore server `URL`, without /healthz (or MEMSTORE_URL; default from MEMSTORE_ADDR)")
	timeout := duration(defaultHealthcheckTimeout)
	fs.Var(&timeout, "timeout", "give up after `DURATION`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(e, "memstore healthcheck: unexpected argument %q", fs.Arg(0))
	}
	client := &http.Client{
		Timeout: time.Duration(timeout),
		// Only the server asked may say that it is healthy.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	target, from := *base, "--url"
	if target == "" {
		target, from = e.getenv("MEMSTORE_URL"), "MEMSTORE_URL"
	}
	if target == "" {
		var err error
		if target, client.Transport, err = localServer(e); err != nil {
			return err
		}
	} else if err := checkBaseURL(target); err != nil {
		return usageError(e, "memstore healthcheck: %s %q: %v", from, target, err)
	}
	u := strings.TrimSuffix(target, "/") + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return usageError(e, "memstore healthcheck: %v", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: no answer: %w", u, errors.Unwrap(err))
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, healthcheckBodyBytes))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", u, res.Status, bytes.TrimSpace(body))
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", u, res.Status)
	return nil
}

// checkBaseURL checks that s is a server's http(s) address, with nothing
// after the host but an optional "/".
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("must be http://HOST:PORT or https://HOST:PORT")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return errors.New("must be the server's address alone, such as http://127.0.0.1:6366, without a path")
	}
	return nil
}

// localServer is the base URL of the server that serve runs with e's
// environment, and the transport that reaches it: over HTTPS with
// MEMSTORE_TLS_CERT, trusting exactly that certificate, since a server's
// certificate rarely names the loopback address it is asked on.
func localServer(e env) (string, http.RoundTripper, error) {
	addr := hostPort(defaultAddr)
	if v := e.getenv("MEMSTORE_ADDR"); v != "" {
		if err := addr.Set(v); err != nil {
			return "", nil, usageError(e, "memstore healthcheck: MEMSTORE_ADDR=%q: %v", v, err)
		}
	}
	hostport := dialable(string(addr)) // checked by Set
	certFile := e.getenv("MEMSTORE_TLS_CERT")
	if certFile == "" {
		return "http://" + hostport, nil, nil
	}
	leaf, err := firstCertificate(certFile)
	if err != nil {
		return "", nil, fmt.Errorf("MEMSTORE_TLS_CERT: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{
		MinVersion: minTLSVersion,
		// The usual checks of names and issuers are replaced by one
		// stricter: the server's certificate is the one configured.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return fmt.Errorf("the server's certificate is not the one in %s (MEMSTORE_TLS_CERT)", certFile)
			}
			return nil
		},
	}
	return "https://" + hostport, t, nil
}

// firstCertificate is the DER of the first certificate in a PEM file:
// the server's own, in a chain as --tls-cert takes it.
func firstCertificate(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("%s holds no PEM certificate", name)
		}
		if b.Type == "CERTIFICATE" {
			return b.Bytes, nil
		}
	}
}
