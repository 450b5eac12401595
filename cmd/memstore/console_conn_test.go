package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConsoleConnectionBusy: on --console-addr, the connection cap knows
// which console connections have a request in progress: new connections
// close idle ones to make room before one whose request is being read.
func TestConsoleConnectionBusy(t *testing.T) {
	const max = 2
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"), "--console-addr", "127.0.0.1:0",
		"--max-connections", strconv.Itoa(max), "--mcp-max-sessions", "1")
	base := s.consoleURL(t)
	addr := strings.TrimPrefix(base, "http://")
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(20 * time.Second))
		return c
	}

	// A sign-in whose form is still on its way: a request in progress.
	body := "workspace=default&name=nobody&password=not-the-password"
	busy := dial()
	fmt.Fprintf(busy, "POST /console/signin HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
		addr, base, len(body), body[:10])
	time.Sleep(300 * time.Millisecond) // for the server to read the headers

	// More connections than the cap: each makes room by closing an idle
	// one, and the request after them is served.
	for range max {
		dial()
	}
	hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(base + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// The request in progress was left alone: it ends with its answer.
	if _, err := busy.Write([]byte(body[10:])); err != nil {
		t.Fatalf("the connection of a request in progress was closed: %v", err)
	}
	resp, err = http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the connection of a request in progress was closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the sign-in answered %s, want 401", resp.Status)
	}
}

// TestConsoleShutdownWaitsForRequest stops a server whose console has its
// own address while a console request is in progress: as on the API's
// address, the request is answered in full before Main returns.
func TestConsoleShutdownWaitsForRequest(t *testing.T) {
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"), "--console-addr", "127.0.0.1:0")
	base := s.consoleURL(t)
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	body := "workspace=default&name=nobody&password=not-the-password"
	fmt.Fprintf(conn, "POST /console/signin HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
		addr, base, len(body), body[:10])
	time.Sleep(300 * time.Millisecond) // for the server to read the headers

	s.stop()
	s.wantRunning(t, "a console request")
	if _, err := conn.Write([]byte(body[10:])); err != nil {
		t.Fatalf("the console request in progress was cut off: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the console request in progress got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the sign-in answered %s, want 401", resp.Status)
	}
	s.wantReturned(t, "the last console request")
}
