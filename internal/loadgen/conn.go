package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore/httpapi"
)

// requestTimeout bounds one request, from writing it to reading the last
// byte of the answer.
const requestTimeout = 30 * time.Second

// client knows the server and the headers every request carries. Each
// goroutine that sends requests takes a conn of its own from it.
//
// The generator shares the machine with the server in the usual setup, so
// every microsecond it spends per request is taken from the server. It
// therefore writes requests itself on a keep-alive connection and reads
// the answers itself (readResponse), without net/http's Transport, which
// hands each request to two goroutines per connection and cost about half
// the generator's CPU.
type client struct {
	addr   string      // host:port to dial
	tls    *tls.Config // nil for http
	prefix string      // the base URL's path, without its final slash
	header []byte      // request line's end, Host and the API's headers
}

func newClient(cfg Config) (*client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--url %q is not an http:// or https:// URL", cfg.URL)
	}
	c := &client{addr: u.Host, prefix: strings.TrimRight(u.Path, "/")}
	switch u.Scheme {
	case "http":
		if u.Port() == "" {
			c.addr = net.JoinHostPort(u.Hostname(), "80")
		}
	case "https":
		c.tls = &tls.Config{}
		if cfg.TLS != nil {
			c.tls = cfg.TLS.Clone()
		}
		if c.tls.ServerName == "" {
			c.tls.ServerName = u.Hostname()
		}
		if u.Port() == "" {
			c.addr = net.JoinHostPort(u.Hostname(), "443")
		}
	default:
		return nil, fmt.Errorf("--url %q is not an http:// or https:// URL", cfg.URL)
	}
	h := http.Header{}
	httpapi.SetHeaders(h, cfg.APIKey)
	var b bytes.Buffer
	b.WriteString(" HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	if err := h.Write(&b); err != nil {
		return nil, err
	}
	c.header = b.Bytes()
	return c, nil
}

// conn is one keep-alive connection, used by one goroutine at a time. It
// dials on first use and again after an error or a "Connection: close".
type conn struct {
	c    *client
	nc   net.Conn
	br   *bufio.Reader
	req  []byte // the request being written, reused
	body []byte // the answer's body, reused
}

func (c *client) conn() *conn { return &conn{c: c} }

// Close closes the connection, if open.
func (cn *conn) Close() {
	if cn.nc != nil {
		cn.nc.Close()
		cn.nc = nil
	}
}

func (cn *conn) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", cn.c.addr)
	if err != nil {
		return err
	}
	if cn.c.tls != nil {
		tc := tls.Client(nc, cn.c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return err
		}
		nc = tc
	}
	cn.nc = nc
	if cn.br == nil {
		cn.br = bufio.NewReaderSize(nc, 16<<10)
	} else {
		cn.br.Reset(nc)
	}
	return nil
}

// do sends a request and fails unless it succeeds.
func (cn *conn) do(ctx context.Context, method, path string, body, into any) error {
	status, err := cn.send(ctx, method, path, body, into)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		// The server's message says why, when it sent one.
		var e httpapi.ErrorJSON
		if json.Unmarshal(cn.body, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: HTTP %d: %s", method, path, status, e.Error.Message)
		}
		return fmt.Errorf("%s %s: HTTP %d", method, path, status)
	}
	return nil
}

// send sends a request and decodes a 2xx answer into into; the status is
// 0 when no answer came. A request under way is not cut short by ctx: it
// takes milliseconds, and requestTimeout bounds it.
func (cn *conn) send(ctx context.Context, method, path string, body, into any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, err
		}
	}
	if cn.nc == nil {
		// Like the request, the dial is not cut short by the end of the
		// run; the dialer's own timeout bounds it.
		if err := cn.dial(context.WithoutCancel(ctx)); err != nil {
			return 0, err
		}
	}
	b := append(cn.req[:0], method...)
	b = append(b, ' ')
	b = append(b, cn.c.prefix...)
	b = append(b, path...)
	b = append(b, cn.c.header...)
	if payload != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(payload)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, payload...)
	cn.req = b

	status, err := cn.roundTrip(b)
	if err != nil {
		cn.Close()
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if into != nil && status/100 == 2 {
		if err := json.Unmarshal(cn.body, into); err != nil {
			return status, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	if status == http.StatusUnauthorized {
		return status, fmt.Errorf("%s %s: the API key was refused", method, path)
	}
	return status, nil
}

// roundTrip writes a request and reads its whole answer into cn.body.
func (cn *conn) roundTrip(req []byte) (int, error) {
	if err := cn.nc.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		return 0, err
	}
	if _, err := cn.nc.Write(req); err != nil {
		return 0, err
	}
	status, closing, err := cn.readResponse()
	if err != nil {
		return 0, err
	}
	if closing {
		cn.Close()
	}
	return status, nil
}

// readResponse reads an HTTP/1.1 answer: its status, and its whole body
// into cn.body, by Content-Length or chunked. It says whether the server
// closes the connection after it. It reads only the headers it needs,
// without the header map and readers of http.ReadResponse, which took a
// fifth of the generator's CPU.
func (cn *conn) readResponse() (status int, closing bool, err error) {
	line, err := cn.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// HTTP/1.x NNN reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, false, fmt.Errorf("malformed status line %q", line)
		}
		status = status*10 + int(d-'0')
	}
	closing = line[7] == '0' // HTTP/1.0
	length, chunked := -1, false
	for {
		if line, err = cn.br.ReadSlice('\n'); err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("malformed header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("malformed header %q", line)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case chunked:
		body := bytes.NewBuffer(cn.body[:0])
		if _, err := body.ReadFrom(httputil.NewChunkedReader(cn.br)); err != nil {
			return 0, false, err
		}
		cn.body = body.Bytes()
		// The trailer, which memstore never sends, ends with an empty line.
		for {
			if line, err = cn.br.ReadSlice('\n'); err != nil {
				return 0, false, err
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
		}
	case length >= 0:
		cn.body = slices.Grow(cn.body[:0], length)[:length]
		if _, err := io.ReadFull(cn.br, cn.body); err != nil {
			return 0, false, err
		}
	case status/100 == 1 || status == http.StatusNoContent || status == http.StatusNotModified:
		cn.body = cn.body[:0]
	default: // the body ends with the connection
		body := bytes.NewBuffer(cn.body[:0])
		if _, err := body.ReadFrom(cn.br); err != nil {
			return 0, false, err
		}
		cn.body, closing = body.Bytes(), true
	}
	return status, closing, nil
}
