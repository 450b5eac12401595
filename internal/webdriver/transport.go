package webdriver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxAnswer bounds one answer (a screenshot is the largest).
const maxAnswer = 64 << 20

// marionette is Firefox's protocol: each message is its JSON's length in
// decimal, a colon, and the JSON; a command is [0, id, name, params] and
// its answer [1, id, error, result].
type marionette struct {
	conn net.Conn
	r    *bufio.Reader
	id   int
}

func dialMarionette(addr string) (*marionette, error) {
	conn, err := net.DialTimeout("tcp", addr, Timeout)
	if err != nil {
		return nil, err
	}
	m := &marionette{conn: conn, r: bufio.NewReader(conn)}
	// The server speaks first: {"applicationType":"gecko","marionetteProtocol":3}.
	var hello struct{ MarionetteProtocol int }
	if err := m.read(&hello); err != nil || hello.MarionetteProtocol != 3 {
		conn.Close()
		return nil, fmt.Errorf("marionette at %s: greeting %+v (%v), want protocol 3", addr, hello, err)
	}
	return m, nil
}

func (m *marionette) read(out any) error {
	m.conn.SetReadDeadline(time.Now().Add(Timeout))
	head, err := m.r.ReadString(':')
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(head, ":"))
	if err != nil || n < 0 || n > maxAnswer {
		return fmt.Errorf("marionette: bad length %q", cut(head, 20))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(m.r, buf); err != nil {
		return err
	}
	return json.Unmarshal(buf, out)
}

func (m *marionette) do(cmd string, params map[string]any) (json.RawMessage, error) {
	m.id++
	if params == nil {
		params = map[string]any{}
	}
	msg, err := json.Marshal([]any{0, m.id, cmd, params})
	if err != nil {
		return nil, err
	}
	m.conn.SetWriteDeadline(time.Now().Add(Timeout))
	if _, err := m.conn.Write(append([]byte(strconv.Itoa(len(msg))+":"), msg...)); err != nil {
		return nil, err
	}
	var answer []json.RawMessage
	if err := m.read(&answer); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	var id int
	if len(answer) != 4 || json.Unmarshal(answer[1], &id) != nil || id != m.id {
		return nil, fmt.Errorf("%s: unexpected answer %.200s", cmd, answer)
	}
	var e struct{ Error, Message string }
	if json.Unmarshal(answer[2], &e) == nil && e.Error != "" {
		return nil, &Error{Command: cmd, Code: e.Error, Message: e.Message}
	}
	return unwrap(answer[3]), nil
}

func (m *marionette) close() error { return m.conn.Close() }

// route is where a command goes in W3C WebDriver over HTTP: method and
// path, whose {name} segments are taken from the parameters.
type route struct{ method, path string }

var routes = map[string]route{
	"WebDriver:NewSession":       {http.MethodPost, "/session"},
	"WebDriver:DeleteSession":    {http.MethodDelete, ""},
	"WebDriver:Navigate":         {http.MethodPost, "/url"},
	"WebDriver:GetCurrentURL":    {http.MethodGet, "/url"},
	"WebDriver:FindElement":      {http.MethodPost, "/element"},
	"WebDriver:GetActiveElement": {http.MethodGet, "/element/active"},
	"WebDriver:ElementClick":     {http.MethodPost, "/element/{id}/click"},
	"WebDriver:ElementClear":     {http.MethodPost, "/element/{id}/clear"},
	"WebDriver:ElementSendKeys":  {http.MethodPost, "/element/{id}/value"},
	"WebDriver:GetElementText":   {http.MethodGet, "/element/{id}/text"},
	"WebDriver:ExecuteScript":    {http.MethodPost, "/execute/sync"},
	"WebDriver:PerformActions":   {http.MethodPost, "/actions"},
	"WebDriver:SetWindowRect":    {http.MethodPost, "/window/rect"},
	"WebDriver:TakeScreenshot":   {http.MethodGet, "/screenshot"},
}

// w3c is W3C WebDriver over HTTP; every path but the new session's is
// under /session/{its id}.
type w3c struct {
	base, session string
	client        http.Client
}

func (w *w3c) do(cmd string, params map[string]any) (json.RawMessage, error) {
	r, ok := routes[cmd]
	if !ok {
		return nil, fmt.Errorf("%s: no such command in this client", cmd)
	}
	path := r.path
	if cmd != "WebDriver:NewSession" {
		path = "/session/" + w.session + path
	}
	body := map[string]any{}
	for k, v := range params {
		if seg := "{" + k + "}"; strings.Contains(path, seg) {
			path = strings.Replace(path, seg, fmt.Sprint(v), 1)
		} else {
			body[k] = v
		}
	}
	var rd io.Reader
	if r.method == http.MethodPost {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(r.method, w.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	var answer struct {
		Value json.RawMessage
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, fmt.Errorf("%s: %d %s", cmd, resp.StatusCode, cut(string(raw), 200))
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		json.Unmarshal(answer.Value, &e)
		return nil, &Error{Command: cmd, Code: e.Error, Message: e.Message}
	}
	if cmd == "WebDriver:NewSession" {
		var s struct{ SessionID string }
		json.Unmarshal(answer.Value, &s)
		w.session = s.SessionID
	}
	return answer.Value, nil
}

func (w *w3c) close() error { return nil }
