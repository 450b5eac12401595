package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUnreadBodyClosesConnection: a request answered without its body
// being read (a refusal before authentication, a route that takes no
// body) is answered at once and its connection closed, rather than held,
// unanswered, while the server waits for a body the client never sends.
func TestUnreadBodyClosesConnection(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	_, _, secret := h.newKey(t, "one")
	addr := strings.TrimPrefix(h.URL, "http://")
	for _, tc := range []struct {
		name, request string
		status        int
	}{
		{"no key", "POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", http.StatusUnauthorized},
		{"route without a body", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", http.StatusOK},
		{"unknown route", "POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", http.StatusNotFound},
		{"a key on a route without a body", "GET /v1/memory_stores HTTP/1.1\r\nHost: x\r\nX-Api-Key: " + secret + "\r\nContent-Length: 1000\r\n\r\n", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, tc.request); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			res, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer while the body is unsent: %v", err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !res.Close {
				t.Errorf("status %d, Connection: close %v; want %d and the connection closed", res.StatusCode, res.Close, tc.status)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				t.Errorf("the connection stayed open after the answer: %v", err)
			}
		})
	}
}

// TestReadBodyKeepsConnection: a body read to its end keeps the
// connection alive, as before.
func TestReadBodyKeepsConnection(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	_, _, secret := h.newKey(t, "one")
	for range 2 {
		req, _ := http.NewRequest("POST", h.URL+"/v1/memory_stores", strings.NewReader(`{"name":"x"}`))
		req.Header.Set("X-Api-Key", secret)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Close {
			t.Fatalf("status %d, Connection: close %v; want 200 and the connection kept", res.StatusCode, res.Close)
		}
	}
}
