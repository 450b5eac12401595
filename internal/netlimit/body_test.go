package netlimit_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/netlimit"
)

// echoLength answers with the length of the body it read, or 400 and the
// error of the read; a request with "?auth" is vouched for first. Each
// request is told on started once its handler runs.
func echoLength(started chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if started != nil {
			started <- r.URL.Path
		}
		if r.URL.Query().Has("auth") {
			netlimit.Authenticated(r)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d bytes", len(b))
	})
}

// sendHeaders opens a connection and sends the headers of a POST of n
// bytes to path, and the body's first byte.
func sendHeaders(t *testing.T, url, path string, n int) net.Conn {
	t.Helper()
	c := dial(t, url)
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nx", path, n); err != nil {
		t.Fatal(err)
	}
	return c
}

// awaitBody opens a connection and sends the headers of a POST of n bytes
// to path that expect 100 Continue, and returns once the server has sent
// it: its handler is then reading the body, of which nothing has come.
func awaitBody(t *testing.T, url, path string, n int) net.Conn {
	t.Helper()
	c := dial(t, url)
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", path, n); err != nil {
		t.Fatal(err)
	}
	const cont = "HTTP/1.1 100 Continue\r\n\r\n"
	got := make([]byte, len(cont))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != cont {
		t.Fatalf("the server did not begin reading the body: %q, %v", got, err)
	}
	c.SetReadDeadline(time.Time{})
	return c
}

// TestSlowBodiesMakeRoom: at the cap, with every connection's request
// waiting for a body that does not come, a new connection closes the one
// that has waited the longest, at once, rather than waiting for one to
// end.
func TestSlowBodiesMakeRoom(t *testing.T) {
	const max = 2
	ln, url := serve(t, max, echoLength(nil))
	var slow []net.Conn
	for i := range max {
		// Each waits for its body before the next begins.
		slow = append(slow, awaitBody(t, url, fmt.Sprintf("/slow%d", i), 1000))
	}
	if n := ln.Held(); n != max {
		t.Fatalf("%d connections held, want %d", n, max)
	}

	begun := time.Now()
	got, err := get(url + "/fast")
	if took := time.Since(begun); took >= netlimit.BodyGrace/2 {
		t.Errorf("a new request waited %v, as long as the slow bodies are given (%v)", took, netlimit.BodyGrace)
	}
	if got != "0 bytes" || err != nil {
		t.Fatalf("answer %q, %v", got, err)
	}
	if open(slow[0]) {
		t.Error("the connection that waited longest for its body is still held")
	}
	if !open(slow[1]) {
		t.Error("the other slow body's connection was closed too")
	}
}

// TestIdleBeforeSlowBody: an idle connection makes room before one whose
// request waits for its body, however long each has waited: one idle
// between requests, and one that has sent nothing since it was accepted,
// once its FirstRequestGrace has passed.
func TestIdleBeforeSlowBody(t *testing.T) {
	for _, between := range []bool{true, false} {
		name := "new"
		if between {
			name = "between requests"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const max = 2
			ln, url := serve(t, max, echoLength(nil))
			slow := awaitBody(t, url, "/slow", 1000)
			idle := dial(t, url)
			if between {
				fmt.Fprintf(idle, "GET /idle HTTP/1.1\r\nHost: x\r\n\r\n")
				res, err := http.ReadResponse(bufio.NewReader(idle), nil)
				if err != nil {
					t.Fatal(err)
				}
				io.ReadAll(res.Body)
			}
			eventually(t, "both connections held", func() bool { return ln.Held() == max })
			if !between {
				time.Sleep(netlimit.FirstRequestGrace)
			}
			if got, err := get(url + "/fast"); got != "0 bytes" || err != nil {
				t.Fatalf("answer %q, %v", got, err)
			}
			if open(idle) {
				t.Error("the idle connection is still held")
			}
			if !open(slow) {
				t.Fatal("the slow body's connection was closed while an idle one could make room")
			}
			// Its request goes on, and ends when its body has come.
			if _, err := io.WriteString(slow, strings.Repeat("y", 1000)); err != nil {
				t.Fatal(err)
			}
			slow.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(slow), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || string(b) != "1000 bytes" {
				t.Errorf("the slow request: %s %q", res.Status, b)
			}
		})
	}
}

// TestNewConnectionKept: at the cap, a connection accepted less than
// FirstRequestGrace ago, whose request has not been read yet, is not
// closed to make room, and neither is a request waiting for its body
// meanwhile: a new connection waits until the first proves idle, which
// is then closed.
func TestNewConnectionKept(t *testing.T) {
	const max = 2
	ln, url := serve(t, max, echoLength(nil))
	slow := awaitBody(t, url, "/slow", 1000)
	begun := time.Now()
	fresh := dial(t, url)
	eventually(t, "both connections held", func() bool { return ln.Held() == max })
	if got, err := get(url + "/fast"); got != "0 bytes" || err != nil {
		t.Fatalf("answer %q, %v", got, err)
	}
	if took := time.Since(begun); took < netlimit.FirstRequestGrace {
		t.Errorf("room was made %v after the new connection came, within its FirstRequestGrace (%v)", took, netlimit.FirstRequestGrace)
	}
	if open(fresh) {
		t.Error("the new connection, idle past its grace, is still held")
	}
	if !open(slow) {
		t.Error("the connection waiting for its body was closed while a new one could prove idle")
	}
}

// dribble sends the rest of a body of n bytes (its first byte sent)
// on c, a byte every gap, until the server ends it; it returns the
// answer, and how long after the headers it came.
func dribble(t *testing.T, c net.Conn, n int, gap time.Duration) (*http.Response, string, time.Duration) {
	t.Helper()
	begun := time.Now()
	answered := make(chan struct{})
	go func() {
		for i := 1; i < n; i++ {
			select {
			case <-answered:
				return
			case <-time.After(gap):
			}
			if _, err := io.WriteString(c, "y"); err != nil {
				return
			}
		}
	}()
	defer close(answered)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer to a body that came too slowly: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	took := time.Since(begun)
	if _, err := r.ReadByte(); err == nil {
		t.Error("the connection stays open after a body that came too slowly")
	}
	return res, string(b), took
}

// TestDribbledBodyEnds: a body that comes a byte now and then fails to be
// read once its grace has passed, saying why, and its connection ends.
func TestDribbledBodyEnds(t *testing.T) {
	t.Parallel()
	_, url := serve(t, 4, echoLength(nil))
	c := sendHeaders(t, url, "/?auth", 1000)
	res, body, took := dribble(t, c, 1000, 200*time.Millisecond)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "came too slowly") {
		t.Errorf("answer %s %q; want the read's error", res.Status, body)
	}
	if took < netlimit.BodyGrace || took > netlimit.BodyGrace+5*time.Second {
		t.Errorf("the body was ended after %v; want after its grace of %v, and soon after", took, netlimit.BodyGrace)
	}
}

// TestUnauthenticatedBodyTimeout: a body that comes steadily, above the
// minimum rate, is ended after UnauthenticatedBodyTimeout unless a
// credential vouches for its request.
func TestUnauthenticatedBodyTimeout(t *testing.T) {
	t.Parallel()
	// 100 bytes every 50 ms: twice the minimum rate, for 15 s.
	const n, gap, chunk = 30000, 50 * time.Millisecond, 100
	_, url := serve(t, 4, echoLength(nil))
	send := func(c net.Conn, stop <-chan struct{}) {
		for sent := 1; sent < n; sent += chunk {
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
			if _, err := io.WriteString(c, strings.Repeat("y", min(chunk, n-sent))); err != nil {
				return
			}
		}
	}
	for _, path := range []string{"/", "/?auth"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			c := sendHeaders(t, url, path, n)
			stop := make(chan struct{})
			defer close(stop)
			go send(c, stop)
			begun := time.Now()
			c.SetReadDeadline(time.Now().Add(40 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			took := time.Since(begun)
			if path == "/" {
				if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "came too slowly") {
					t.Errorf("a body without a credential after %v: %s %q; want it ended", took, res.Status, b)
				}
				if took < netlimit.UnauthenticatedBodyTimeout || took > netlimit.UnauthenticatedBodyTimeout+5*time.Second {
					t.Errorf("ended after %v; want after %v, and soon after", took, netlimit.UnauthenticatedBodyTimeout)
				}
				return
			}
			if res.StatusCode != 200 || string(b) != fmt.Sprintf("%d bytes", n) {
				t.Errorf("a body with a credential after %v: %s %q; want it read in full", took, res.Status, b)
			}
		})
	}
}

// TestHandlerOutlivesBodyDeadline: once its body has come, a request's
// handler may take longer than the body's pace allowed the body: its
// context is not ended, and its connection is kept for the next request.
func TestHandlerOutlivesBodyDeadline(t *testing.T) {
	t.Parallel()
	_, url := serve(t, 4, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "context ended: "+context.Cause(r.Context()).Error(), http.StatusInternalServerError)
			return
		case <-time.After(netlimit.BodyGrace + time.Second):
		}
		fmt.Fprintf(w, "%d bytes", len(b))
	}))
	hc := &http.Client{Timeout: 30 * time.Second}
	for i := range 2 {
		res, err := hc.Post(url, "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != "5 bytes" {
			t.Errorf("request %d: %s %q", i, res.Status, b)
		}
	}
}
