//go:build linux

package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/netlimit"
)

// probeAtTheCap asks for /healthz and, with the server's key, the list of
// stores, each on a new connection, and fails the test unless both answer
// 200 within a few seconds (generous for a loaded machine).
func probeAtTheCap(t *testing.T, s *testServer, tr *http.Transport, why string) {
	t.Helper()
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.DisableKeepAlives = true
	hc := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	for _, p := range []struct{ what, path, key string }{
		{"GET /healthz", "/healthz", ""},
		{"an API request with a key", "/v1/memory_stores", s.key},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.url+p.path, nil)
		if p.key != "" {
			req.Header.Set("X-Api-Key", p.key)
		}
		begun := time.Now()
		res, err := hc.Do(req)
		if err != nil {
			t.Errorf("%s at the cap, %s: %v (after %v)", p.what, why, err, time.Since(begun))
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		t.Logf("%s: %s after %v", p.what, res.Status, time.Since(begun))
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s at the cap, %s: %s", p.what, why, res.Status)
		}
	}
}

// dialSmall connects to addr with a receive buffer as small as the
// system allows, set before connecting, so that the server's writes block
// as soon as the client stops reading.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
		return err
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// quietFor reports how long c has received no data (the system's
// TCP_INFO): a client that never reads receives none once the server is
// blocked writing to it.
func quietFor(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info syscall.TCPInfo
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		size := uint32(unsafe.Sizeof(info))
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO, uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	})
	if errno != 0 {
		t.Fatalf("TCP_INFO: %v", errno)
	}
	return time.Duration(info.Last_data_recv) * time.Millisecond
}

// TestUnreadAnswersAtTheCap fills a server's connections with clients
// that ask and never read the answers: sign-in pages asked for again and
// again on one connection, and, with a key, lists of memories of over
// 8 MiB, more than the system's buffers hold. A new /healthz and a
// request with a key are still answered within a few seconds.
func TestUnreadAnswersAtTheCap(t *testing.T) {
	clearEnv(t)
	const max, unread = 8, 16 << 20
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db, "--max-connections", strconv.Itoa(max), "--mcp-max-sessions", strconv.Itoa(max/2))
	a := s.api(t)
	store := a.createStore(t, "large")
	content := strings.Repeat("\x01", 100_000) // 6 bytes each in JSON
	for i := range 20 {
		a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]any{"path": fmt.Sprintf("/m%d.md", i), "content": content}, nil)
	}
	list := "/v1/memory_stores/" + store + "/memories?view=full&limit=20"
	_, page, err := a.call("GET", list, nil, nil)
	if err != nil || len(page) < unread/2 {
		t.Fatalf("the list is %d bytes (%v); want %d at least", len(page), err, unread/2)
	}
	_, signin, err := a.call("GET", "/console/signin", nil, nil)
	if err != nil || len(signin) == 0 {
		t.Fatalf("the sign-in page: %v", err)
	}
	a.hc.CloseIdleConnections() // the stuck connections alone are held
	addr := strings.TrimPrefix(s.url, "http://")
	for _, tc := range []struct {
		name, request string
		times         int
	}{
		{"sign-in pages, pipelined", fmt.Sprintf("GET /console/signin HTTP/1.1\r\nHost: %s\r\n\r\n", addr), unread/len(signin) + 1},
		{"lists with a key", fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nX-Api-Key: %s\r\n\r\n", list, addr, s.key), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stuck []net.Conn
			for range max {
				c := dialSmall(t, addr)
				stuck = append(stuck, c)
				// Every request is sent before the answers are looked at,
				// so that the server never waits for the next one; or the
				// server stopped taking them, blocked writing answers.
				c.SetWriteDeadline(time.Now().Add(3 * time.Second))
				if _, err := c.Write(bytes.Repeat([]byte(tc.request), tc.times)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatal(err)
				}
				// The answers begin, and are never read past this.
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				status := make([]byte, len("HTTP/1.1 200"))
				if _, err := io.ReadFull(c, status); err != nil || string(status) != "HTTP/1.1 200" {
					t.Fatalf("the answer began %q, %v", status, err)
				}
			}
			// The server is blocked writing to each: nothing has come
			// for a while, more answers due than the system's buffers
			// hold.
			for i, c := range stuck {
				for deadline := time.Now().Add(30 * time.Second); quietFor(t, c) < 500*time.Millisecond; time.Sleep(50 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the server still writes to connection %d after 30s", i)
					}
				}
			}
			probeAtTheCap(t, s, nil, "every connection's answers unread")
		})
	}
}

// TestHTTP2SlowBodiesAtTheCap fills the connections of an HTTPS server
// with HTTP/2 connections, each with a sign-in whose body never comes,
// and a new one every second so that one always waits. A new /healthz
// and a request with a key are still answered within a few seconds.
func TestHTTP2SlowBodiesAtTheCap(t *testing.T) {
	clearEnv(t)
	const max = 8
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	s := startServer(t, "--db", filepath.Join(dir, "m.db"), "--max-connections", strconv.Itoa(max), "--mcp-max-sessions", strconv.Itoa(max/2),
		"--tls-cert", cert, "--tls-key", key)
	transport := func() *http.Transport {
		return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, ExpectContinueTimeout: time.Minute}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	waiting := make(chan struct{}, max)
	for range max {
		tr := transport()
		hc := &http.Client{Transport: tr}
		var once sync.Once
		wg.Go(func() {
			defer tr.CloseIdleConnections()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				// Expect: 100-continue: the server says when it begins to
				// read the body, which never comes.
				pr, pw := io.Pipe()
				defer pw.Close()
				trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(func() { waiting <- struct{}{} }) }}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodPost, s.url+"/console/signin", pr)
				req.ContentLength = 200
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", s.url)
				req.Header.Set("Expect", "100-continue")
				go func() {
					if res, err := hc.Do(req); err == nil {
						res.Body.Close()
					}
				}()
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		})
	}
	for i := range max {
		select {
		case <-waiting:
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d HTTP/2 connections have a sign-in waiting for its body", i, max)
		}
	}
	probeAtTheCap(t, s, transport(), "every HTTP/2 connection waiting for bodies")
}

// TestSignInFloodAtTheCap sends 800 whole sign-in forms with made-up
// names from 40 addresses (each address's allowance is 20), each on a
// connection kept open. The password hashes they wait for are bounded:
// a new /healthz and a request with a key are answered within a few
// seconds, again and again; a sign-in beyond the queue is told at once
// that the server is busy (503 with Retry-After), and none waits for a
// hash much longer than memstore.HashWaitTimeout.
func TestSignInFloodAtTheCap(t *testing.T) {
	clearEnv(t)
	const max, addrs, perAddr = 64, 40, memstore.SignInAddrBurst
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db, "--max-connections", strconv.Itoa(max), "--mcp-max-sessions", strconv.Itoa(max/2))
	addr := strings.TrimPrefix(s.url, "http://")

	type outcome struct {
		status     int
		retryAfter string
		body       string
		took       time.Duration
	}
	outcomes := make(chan outcome, addrs*perAddr)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for a := range addrs {
		for i := range perAddr {
			wg.Go(func() {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 3, 0, byte(2+a))}}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					outcomes <- outcome{body: err.Error()}
					return
				}
				defer c.Close()
				form := url.Values{"workspace": {"default"}, "name": {fmt.Sprintf("nobody-%d-%d", a, i)}, "password": {"not the password at all"}}.Encode()
				begun := time.Now()
				fmt.Fprintf(c, "POST /console/signin HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
					addr, s.url, len(form), form)
				c.SetReadDeadline(time.Now().Add(90 * time.Second))
				res, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					outcomes <- outcome{took: time.Since(begun)} // closed, to make room
					return
				}
				b, _ := io.ReadAll(res.Body)
				outcomes <- outcome{res.StatusCode, res.Header.Get("Retry-After"), string(b), time.Since(begun)}
				// The connection stays open until the test ends.
				<-t.Context().Done()
			})
		}
	}
	for range 6 {
		probeAtTheCap(t, s, nil, "with sign-ins waiting for password hashes")
		time.Sleep(500 * time.Millisecond)
	}

	// Every sign-in is answered or closed in time.
	counts := map[int]int{}
	deadline := time.After(60 * time.Second)
	for range addrs * perAddr {
		select {
		case o := <-outcomes:
			counts[o.status]++
			switch o.status {
			case 0:
				if o.body != "" {
					t.Errorf("dial: %s", o.body)
				}
			case http.StatusUnauthorized:
			case http.StatusServiceUnavailable:
				if n, err := strconv.Atoi(o.retryAfter); err != nil || n < 1 || !strings.Contains(o.body, "busy") {
					t.Errorf("a sign-in refused as the server is busy: Retry-After %q, %q", o.retryAfter, o.body)
				}
			default:
				t.Errorf("a sign-in answered %d: %.200q", o.status, o.body)
			}
			if o.took > memstore.HashWaitTimeout+10*time.Second {
				t.Errorf("a sign-in was answered after %v", o.took)
			}
		case <-deadline:
			t.Fatalf("sign-ins still unanswered after 60s: %v so far", counts)
		}
	}
	t.Logf("sign-ins answered, by status: %v", counts)
	if counts[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no sign-in was told that the server is busy: %v", counts)
	}
}

// headerTransport sets a header on every request it sends through rt.
type headerTransport struct {
	rt          http.RoundTripper
	name, value string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.rt.RoundTrip(r)
}

// TestStreamsOutliveWriteStall: the change feed's streams, over HTTP/1
// and HTTP/2, and an MCP session over HTTP/2, stay open and deliver past
// netlimit.WriteStallTimeout without a write, whatever the connection
// limits end.
func TestStreamsOutliveWriteStall(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	s := startServer(t, "--db", filepath.Join(dir, "m.db"), "--max-connections", "8", "--mcp-max-sessions", "4", "--tls-cert", cert, "--tls-key", key)
	h1 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	h2 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	a := s.api(t)
	a.hc.Transport = h1
	store := a.createStore(t, "streams")

	type line struct {
		proto, text string
	}
	lines := make(chan line, 100)
	for _, tr := range []*http.Transport{h1, h2} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", s.url+"/v1/memory_stores/"+store+"/events", nil)
		req.Header.Set("X-Api-Key", s.key)
		req.Header.Set("Accept", "text/event-stream")
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode != 200 {
			t.Fatalf("a stream over %s: %s", res.Proto, res.Status)
		}
		go func() {
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				lines <- line{res.Proto, sc.Text()}
			}
			lines <- line{res.Proto, "ended: " + fmt.Sprint(sc.Err())}
		}()
	}
	var sess httpapi.SessionJSON
	a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{
		map[string]any{"type": "memory_store", "memory_store_id": store},
	}}, &sess)
	token := sess.Token
	cs := mcpConnect(t, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{h2, "Authorization", "Bearer " + token}}, MaxRetries: -1})

	time.Sleep(netlimit.WriteStallTimeout + time.Second)
	a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]any{"path": "/late.md", "content": "after a quiet while"}, nil)
	got := map[string]bool{}
	for timeout := time.After(10 * time.Second); len(got) < 2; {
		select {
		case l := <-lines:
			if strings.HasPrefix(l.text, "ended: ") {
				t.Fatalf("the stream over %s %s", l.proto, l.text)
			}
			if strings.Contains(l.text, "/late.md") {
				got[l.proto] = true
			}
		case <-timeout:
			t.Fatalf("the change was delivered over %v only", got)
		}
	}
	if text, isErr := mcpCall(t, cs, "memory_write", map[string]any{"path": "/mnt/memory/streams/quiet.md", "content": "after a quiet while\n"}); isErr {
		t.Errorf("a tool call over HTTP/2 after a quiet while: %s", text)
	}
}
