package netlimit_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/netlimit"
)

// serve runs an HTTP server with h on a Listener of max connections.
func serve(t testing.TB, max int, h http.Handler) (*netlimit.Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := netlimit.New(inner, max)
	srv := &http.Server{Handler: h}
	ln.Serve(srv)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln, "http://" + inner.Addr().String()
}

// dial opens a connection that sends nothing.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// open reports whether the server still holds c: a read that times out,
// rather than ending, means it does.
func open(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// eventually waits for cond, for up to 5 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

// get sends a request on a connection of its own and returns the answer.
func get(url string) (string, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })

// TestIdleConnectionsMakeRoom: connections that send nothing are closed,
// oldest first, to make room for new ones, each once its
// FirstRequestGrace has passed; a request still gets through.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	const max, extra = 4, 6
	ln, url := serve(t, max, hello)
	var conns []net.Conn
	begun := time.Now()
	for range max + extra {
		conns = append(conns, dial(t, url))
	}
	// The last is accepted when the last of the extra ones is closed.
	eventually(t, "the last connection accepted", func() bool { return !open(conns[extra-1]) })
	if took := time.Since(begun); took < netlimit.FirstRequestGrace {
		t.Errorf("connections were closed %v after they came, within their FirstRequestGrace (%v)", took, netlimit.FirstRequestGrace)
	}
	for i, c := range conns {
		if want := i >= extra; open(c) != want {
			t.Errorf("connection %d of %d held: %v, want %v (the oldest idle ones make room)", i, len(conns), !want, want)
		}
	}
	if got, err := get(url); got != "hello" || err != nil {
		t.Errorf("answer %q, %v", got, err)
	}
	if n := ln.Held(); n > max {
		t.Errorf("%d connections held, max %d", n, max)
	}
}

// TestBusyConnectionsAreKept: a connection with a request in progress is
// never closed to make room; a new connection waits for one to end.
func TestBusyConnectionsAreKept(t *testing.T) {
	const max = 2
	release := make(chan struct{})
	started := make(chan struct{}, max)
	ln, url := serve(t, max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		io.WriteString(w, "done "+r.URL.Path)
	}))
	slow := make(chan string, max)
	for range max {
		go func() {
			got, err := get(url + "/slow")
			if err != nil {
				got = err.Error()
			}
			slow <- got
		}()
	}
	for range max {
		<-started
	}
	fast := make(chan string, 1)
	go func() {
		got, err := get(url + "/fast")
		if err != nil {
			got = err.Error()
		}
		fast <- got
	}()
	select {
	case got := <-fast:
		t.Fatalf("a request was served while %d were in progress: %q", max, got)
	case <-time.After(200 * time.Millisecond):
	}
	if n := ln.Held(); n != max {
		t.Errorf("%d connections held, want %d", n, max)
	}
	close(release)
	for range max {
		if got := <-slow; got != "done /slow" {
			t.Errorf("a request in progress ended with %q", got)
		}
	}
	if got := <-fast; got != "done /fast" {
		t.Errorf("the waiting request: %q", got)
	}
}

// holdOne makes a Listener with room for one connection, dials it dials
// times and accepts the first, which it returns.
func holdOne(t *testing.T, dials int) (*netlimit.Listener, net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := netlimit.New(inner, 1)
	t.Cleanup(func() { ln.Close() })
	for range dials {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	held, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return ln, held
}

// TestCloseEndsAWaitingAccept: a server stopping while every connection
// is busy stops accepting at once.
func TestCloseEndsAWaitingAccept(t *testing.T) {
	ln, held := holdOne(t, 1)
	ln.ConnState(held, http.StateActive)
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		accepted <- err
	}()
	select {
	case err := <-accepted:
		t.Fatalf("Accept returned %v with the one connection busy", err)
	case <-time.After(100 * time.Millisecond):
	}
	ln.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waits after Close")
	}
	// Closing the held connection makes room, once.
	held.Close()
	held.Close()
	if n := ln.Held(); n != 0 {
		t.Errorf("%d held after closing the only connection", n)
	}
}

// TestTLSConnectionBusy: an HTTPS server reports the state of its TLS
// connections, which wrap the Listener's: a busy one is kept too.
func TestTLSConnectionBusy(t *testing.T) {
	ln, held := holdOne(t, 2)
	// As http.Server.ServeTLS does, which then reports the *tls.Conn.
	ln.ConnState(tls.Server(held, &tls.Config{}), http.StateActive)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	select {
	case c := <-accepted:
		if c != nil {
			c.Close()
		}
		t.Fatal("Accept made room by closing a busy TLS connection")
	case <-time.After(200 * time.Millisecond):
	}
	ln.Close()
	<-accepted
}
