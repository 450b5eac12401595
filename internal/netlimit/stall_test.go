package netlimit_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/netlimit"
)

// endless answers with data until a write fails, then tells ended its
// request's ?id. Once one of its writes has been blocked for twice
// netlimit.WriteGrace, it tells blocked so, once.
func endless(blocked, ended chan<- string) http.Handler {
	chunk := []byte(strings.Repeat("x", 32<<10))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		var since atomic.Int64 // when the write in progress began, 0 between writes
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				if s := since.Load(); s != 0 && time.Since(time.Unix(0, s)) > 2*netlimit.WriteGrace {
					blocked <- id
					return
				}
			}
		}()
		for {
			since.Store(time.Now().UnixNano())
			_, err := w.Write(chunk)
			since.Store(0)
			if err != nil {
				ended <- id
				return
			}
		}
	})
}

// dialSmall opens a connection with a small receive buffer, so that the
// server's writes block as soon as it stops reading.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).SetReadBuffer(1024); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestUnreadAnswersMakeRoom: at the cap, with every connection's client
// asking for an answer and never reading it, a new connection closes the
// one whose write has been blocked the longest, within a few seconds,
// rather than waiting for one to end.
func TestUnreadAnswersMakeRoom(t *testing.T) {
	const max = 3
	blocked, ended := make(chan string, max), make(chan string, max)
	ln, url := serve(t, max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			io.WriteString(w, "fast")
			return
		}
		endless(blocked, ended).ServeHTTP(w, r)
	}))
	for i := range max {
		c := dialSmall(t, url)
		if _, err := fmt.Fprintf(c, "GET /?id=%d HTTP/1.1\r\nHost: x\r\n\r\n", i); err != nil {
			t.Fatal(err)
		}
		// Each blocks before the next begins: the first has been blocked
		// the longest.
		select {
		case got := <-blocked:
			if got != fmt.Sprint(i) {
				t.Fatalf("request %s blocked, want %d", got, i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the answer to request %d never blocked", i)
		}
	}
	if n := ln.Held(); n != max {
		t.Fatalf("%d connections held, want %d", n, max)
	}

	begun := time.Now()
	got, err := get(url + "/fast")
	if err != nil {
		t.Fatalf("a new request at the cap, every answer unread: %v (after %v)", err, time.Since(begun))
	}
	if got != "fast" {
		t.Fatalf("answer %.20q", got)
	}
	select {
	case id := <-ended:
		if id != "0" {
			t.Errorf("the answer to request %s was ended; want 0's, blocked the longest", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no unread answer was ended")
	}
	select {
	case id := <-ended:
		t.Errorf("the answer to request %s was ended too", id)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestStalledWriteEnds: an answer its client stops reading is ended once
// it has made no progress for WriteStallTimeout, cap or no cap; one its
// client reads slowly but steadily comes whole, however long it takes.
func TestStalledWriteEnds(t *testing.T) {
	t.Parallel()
	const size = 400 << 10
	blocked, ended := make(chan string, 2), make(chan string, 2)
	_, url := serve(t, 8, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/endless" {
			endless(blocked, ended).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.Write([]byte(strings.Repeat("y", size)))
	}))

	t.Run("unread", func(t *testing.T) {
		t.Parallel()
		c := dialSmall(t, url)
		begun := time.Now()
		fmt.Fprintf(c, "GET /endless?id=unread HTTP/1.1\r\nHost: x\r\n\r\n")
		select {
		case <-ended:
		case <-time.After(netlimit.WriteStallTimeout + 10*time.Second):
			t.Fatalf("an answer nobody reads still goes on after %v", time.Since(begun))
		}
		if took := time.Since(begun); took < netlimit.WriteStallTimeout {
			t.Errorf("the answer was ended after %v, before WriteStallTimeout (%v)", took, netlimit.WriteStallTimeout)
		}
	})

	t.Run("slow reader", func(t *testing.T) {
		t.Parallel()
		// 8 KiB every quarter second: 32 KiB a second, so the answer
		// takes over 12 s, more than WriteStallTimeout.
		c := dialSmall(t, url)
		fmt.Fprintf(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReaderSize(c, 8<<10)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		buf := make([]byte, 8<<10)
		for {
			m, err := io.ReadFull(res.Body, buf)
			n += m
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("after %d bytes: %v", n, err)
				}
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if n != size {
			t.Errorf("read %d bytes of %d", n, size)
		}
	})
}

// serveTLS runs an HTTPS server, HTTP/2 included, with h on a Listener
// of max connections; client returns a new client of its own connection
// that trusts it and speaks HTTP/2.
func serveTLS(t *testing.T, max int, h http.Handler) (ln *netlimit.Listener, url string, client func() *http.Client) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = netlimit.New(inner, max)
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	ln.Serve(srv)
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("ServeTLS: %v", err)
		}
	})
	client = func() *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	return ln, "https://" + inner.Addr().String(), client
}

// TestHTTP2SlowBodiesMakeRoom: at the cap, with every HTTP/2 connection
// carrying requests whose bodies never come (a new one as soon as the
// last is given up), a new connection closes one of them, within a few
// seconds.
func TestHTTP2SlowBodiesMakeRoom(t *testing.T) {
	const max = 3
	started := make(chan string, 1000)
	ln, url, client := serveTLS(t, max, echoLength(started))
	stop := make(chan struct{})
	defer close(stop)
	for i := range max {
		hc := client()
		// A request whose body never comes, again every second, so that
		// one always waits, on one connection of its own.
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				pr, pw := io.Pipe()
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/slow%d", url, i), pr)
				req.ContentLength = 200
				go func() {
					if res, err := hc.Do(req); err == nil {
						res.Body.Close()
					}
				}()
				select {
				case <-stop:
					pw.Close()
					return
				case <-tick.C:
				}
			}
		}()
	}
	// Every connection has a request in progress.
	seen := map[string]bool{}
	for len(seen) < max {
		select {
		case p := <-started:
			seen[p] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d connections began a request", len(seen), max)
		}
	}
	if n := ln.Held(); n != max {
		t.Fatalf("%d connections held, want %d", n, max)
	}
	hc := client()
	begun := time.Now()
	res, err := hc.Get(url + "/fast")
	if err != nil {
		t.Fatalf("a new request at the cap, every HTTP/2 connection waiting for bodies: %v (after %v)", err, time.Since(begun))
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.ProtoMajor != 2 || string(b) != "0 bytes" {
		t.Errorf("answer %s %s %q", res.Proto, res.Status, b)
	}
}

// dialH2 opens an HTTP/2 connection to url's server that never lets it
// send data (its flow-control window is 0) and sends a GET of path on
// it; what the server sends is read and dropped.
func dialH2(t *testing.T, url, path string) {
	t.Helper()
	c, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	go io.Copy(io.Discard, c)
	frame := func(typ, flags byte, stream uint32, payload []byte) []byte {
		n := len(payload)
		h := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
		return append(h, payload...)
	}
	// HPACK, each field a literal without indexing, nothing compressed.
	var block []byte
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", path}, {":authority", "127.0.0.1"}} {
		block = append(block, 0, byte(len(f[0])))
		block = append(block, f[0]...)
		block = append(block, byte(len(f[1])))
		block = append(block, f[1]...)
	}
	const (
		typeHeaders, typeSettings = 1, 4
		endStream, endHeaders     = 1, 4
		ack                       = 1
		initialWindowSize         = 4
	)
	msg := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	msg = append(msg, frame(typeSettings, 0, 0, []byte{0, initialWindowSize, 0, 0, 0, 0})...)
	msg = append(msg, frame(typeSettings, ack, 0, nil)...)
	msg = append(msg, frame(typeHeaders, endStream|endHeaders, 1, block)...)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
}

// TestHTTP2UnreadAnswersMakeRoom: at the cap, an HTTP/2 connection whose
// client reads what is sent but never lets the server send an answer's
// data (its flow-control window stays 0) is closed to make room, within a
// few seconds: whether the answer's handler is blocked writing it, or
// has ended with the answer left to send.
func TestHTTP2UnreadAnswersMakeRoom(t *testing.T) {
	for _, size := range []int{100, 1 << 20} {
		t.Run(fmt.Sprintf("%d bytes", size), func(t *testing.T) {
			t.Parallel()
			started := make(chan string, 10)
			ln, url, client := serveTLS(t, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- r.URL.Path
				if r.URL.Path == "/fast" {
					io.WriteString(w, "fast")
					return
				}
				w.Write([]byte(strings.Repeat("x", size)))
			}))
			dialH2(t, url, "/unread")
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the request was not begun")
			}
			if n := ln.Held(); n != 1 {
				t.Fatalf("%d connections held, want 1", n)
			}
			hc := client()
			begun := time.Now()
			res, err := hc.Get(url + "/fast")
			if err != nil {
				t.Fatalf("a new request at the cap, the one HTTP/2 connection's answer unread: %v (after %v)", err, time.Since(begun))
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(b) != "fast" {
				t.Errorf("answer %s %q", res.Status, b)
			}
		})
	}
}
