package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlowBodiesAtTheCap fills a server's connection cap with requests
// whose headers came whole and whose bodies come a byte now and then:
// sign-in forms, which need no credential, and API writes with a key. A
// new /healthz and a request with a credential are still answered at
// once, on the API's address and on the console's own; and a body that
// trickles is ended by the minimum rate, its connection closed.
func TestSlowBodiesAtTheCap(t *testing.T) {
	clearEnv(t)
	const max = 8
	for _, own := range []bool{false, true} {
		name := "console beside the API"
		if own {
			name = "console on its own address"
		}
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			if code, _, errOut := run(t, consolePassword+"\n", "users", "create", "--db", db, "--name", "ann", "--role", "admin"); code != 0 {
				t.Fatalf("users create: %d %s", code, errOut)
			}
			args := []string{"--db", db, "--max-connections", strconv.Itoa(max), "--mcp-max-sessions", strconv.Itoa(max / 2)}
			if own {
				args = append(args, "--console-addr", "127.0.0.1:0")
			}
			s := startServer(t, args...)
			consoleBase := s.url
			if own {
				consoleBase = s.consoleURL(t)
			}
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			ck := consoleSignIn(t, noRedirect, consoleBase, "ann", consolePassword)
			cookie := ck.Name + "=" + ck.Value

			// Every connection of the API's address, then of the console's,
			// holds a request whose body trickles in.
			apiAddr := strings.TrimPrefix(s.url, "http://")
			consoleAddr := strings.TrimPrefix(consoleBase, "http://")
			form := "workspace=default&name=ann&password=wrong-password-for-sure"
			signin := fmt.Sprintf("POST /console/signin HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n",
				consoleAddr, consoleBase, len(form)+1000)
			write := fmt.Sprintf("POST /v1/memory_stores HTTP/1.1\r\nHost: %s\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n",
				apiAddr, s.key)
			var slow []*trickle
			for i := range max {
				switch {
				case own:
					slow = append(slow, startTrickle(t, consoleAddr, signin), startTrickle(t, apiAddr, write))
				case i%2 == 0:
					slow = append(slow, startTrickle(t, apiAddr, signin))
				default:
					slow = append(slow, startTrickle(t, apiAddr, write))
				}
			}
			hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			expect := func(what, method, url string, header http.Header, status int) {
				t.Helper()
				req, _ := http.NewRequest(method, url, nil)
				for k, v := range header {
					req.Header[k] = v
				}
				begun := time.Now()
				res, err := hc.Do(req)
				if err != nil {
					t.Errorf("%s at the cap, with every connection's body trickling: %v", what, err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != status {
					t.Errorf("%s: %s after %v, want %d", what, res.Status, time.Since(begun), status)
				}
			}
			expect("GET /healthz", "GET", s.url+"/healthz", nil, 200)
			expect("an API request with a key", "GET", s.url+"/v1/memory_stores", http.Header{"X-Api-Key": {s.key}}, 200)
			expect("a signed-in console page", "GET", consoleBase+"/console/stores", http.Header{"Cookie": {cookie}}, 200)
			expect("the sign-in page", "GET", consoleBase+"/console/signin", nil, 200)

			// Those the cap left are ended by the minimum rate.
			for _, tr := range slow {
				if ended := tr.wait(t, 30*time.Second); !ended {
					t.Errorf("a body trickling to %s was not ended within 30s", tr.addr)
				}
			}
			// A write whose body trickles is told why it is refused.
			tr := startTrickle(t, apiAddr, write)
			if !tr.wait(t, 30*time.Second) {
				t.Fatal("a write whose body trickles was not ended within 30s")
			}
			if tr.res == nil || tr.res.StatusCode != http.StatusBadRequest || !strings.Contains(tr.body, "came too slowly") {
				t.Errorf("a write whose body trickles: %v %q; want 400 saying why", tr.res, tr.body)
			}
		})
	}
}

// A trickle is a request whose body comes a byte every half second, once
// its handler has begun to read it.
type trickle struct {
	addr  string
	ended chan struct{}  // closed when the server ended the request or the connection
	res   *http.Response // the answer, if any, once ended
	body  string
}

// startTrickle sends head, a request's headers but their blank line, on
// a new connection to addr, asking the server to say when it begins to
// read the body (Expect: 100-continue). Once it has said so, the request
// waits for its body: a byte of it comes every half second until the
// server answers or closes the connection.
func startTrickle(t *testing.T, addr, head string) *trickle {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head+"Expect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	const cont = "HTTP/1.1 100 Continue\r\n\r\n"
	got := make([]byte, len(cont))
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != cont {
		t.Fatalf("the server never began to read the body of a request to %s: %q, %v", addr, got, err)
	}
	tr := &trickle{addr: addr, ended: make(chan struct{})}
	go func() {
		defer close(tr.ended)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		// An answer, or the connection closed.
		if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			b, _ := io.ReadAll(res.Body)
			tr.res, tr.body = res, string(b)
		}
	}()
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tr.ended:
				return
			case <-tick.C:
				if _, err := io.WriteString(c, "x"); err != nil {
					return
				}
			}
		}
	}()
	return tr
}

// wait reports whether the server ends the trickle within d.
func (tr *trickle) wait(t *testing.T, d time.Duration) bool {
	t.Helper()
	select {
	case <-tr.ended:
		return true
	case <-time.After(d):
		return false
	}
}
