package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/mcpserver"
)

// fuzzTimeout bounds one fuzz input's run: a hang is a failure.
const fuzzTimeout = 10 * time.Second

const (
	initializeLine  = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	probeLine       = `{"jsonrpc":"2.0","id":"probe","method":"ping"}`
)

// FuzzStdio sends lines to the stdio server between an initialize and a
// ping, then ends the input: whatever the lines, nothing panics, every
// line written is a JSON-RPC message, the ping is answered (the session
// went on) and the server returns once the input has ended.
func FuzzStdio(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	f.Add([]byte("not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_read\",\"arguments\":{\"path\":\"/mnt/memory/prefs/style.md\"}}}"))
	e := newEnv(f)
	ts, err := agenttool.New(e.services(), e.caller)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, lines []byte) {
		srv := mcpserver.New(ts, e.caller.Session, "fuzz", nil)
		in := strings.Join([]string{initializeLine, initializedLine, string(lines), probeLine}, "\n") + "\n"
		pr, pw := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- mcpserver.Stdio(ctx, srv, strings.NewReader(in), pw); pw.Close() }()

		probed := false
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				JSONRPC string `json:"jsonrpc"`
				ID      any    `json:"id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("a line written is no JSON-RPC message: %q", sc.Bytes())
			}
			probed = probed || m.ID == "probe"
		}
		if ctx.Err() != nil {
			t.Fatalf("the server had not returned %s after the end of its input", fuzzTimeout)
		}
		<-done
		if !probed {
			t.Fatalf("the ping after the fuzzed lines was not answered")
		}
	})
}

// FuzzHTTP posts bodies to /mcp, outside any MCP session and within one:
// nothing panics, no body gets a 5xx, and every session the SDK holds is
// one the handler counts, so that its caps and closing hold for it.
func FuzzHTTP(f *testing.F) {
	f.Add([]byte(initializeLine), "application/json")
	f.Add([]byte(initializeLine+" x"), "application/json")
	f.Add([]byte(strings.Replace(initializeLine, `"method":"initialize",`, `"method":"initialize","METHOD":"ping",`, 1)), "application/json")
	f.Add([]byte(strings.Replace(initializeLine, `"id":"init",`, "", 1)), "application/json")
	f.Add([]byte("["+initializeLine+","+initializedLine+"]"), "application/json")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_list","arguments":{"path":7}}}`), "application/json")
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`), "application/json; charset=utf-8")
	e := newEnv(f)
	client := &http.Client{Timeout: fuzzTimeout}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if strings.ContainsFunc(contentType, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			t.Skip("net/http sends no such header")
		}
		h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxBodyBytes: 64 << 10})
		sdkSessions := mcpserver.SDKSessions(h)
		sid := open(t, srv.URL, e.secret)
		for _, id := range []string{"", sid} {
			req, err := http.NewRequest("POST", srv.URL, strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+e.secret)
			if id != "" {
				req.Header.Set("Mcp-Session-Id", id)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("session %q: %v", id, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Fatalf("session %q: %d %s", id, res.StatusCode, b)
			}
		}
		// The SDK ends the sessions it made for nothing, and the handler
		// forgets those it closed, a moment after the answer.
		eventually(t, "every session the SDK holds counted", func() bool {
			ids := sdkSessions()
			for _, id := range ids {
				if !h.Counts(id) {
					return false
				}
			}
			return len(ids) <= h.OpenSessions()
		})
	})
}
