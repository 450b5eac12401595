package claudeproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryRoute is the path prefix of the memory stores API.
const MemoryRoute = "/v1/memory_stores/"

// connectHeaderTimeout bounds how long a client may take to send its
// CONNECT request.
const connectHeaderTimeout = 30 * time.Second

// Config is what a Proxy serves.
type Config struct {
	// CA signs the proxy's certificate for MemoryHost.
	CA *CA
	// Memstore is the memstore server's base URL (without /v1).
	Memstore *url.URL
	// Stores are the IDs of the stores whose routes go to memstore.
	Stores []string
	// Token is the memstore credential the client sends: a request
	// carrying it anywhere but to memstore is refused, never forwarded.
	Token string
	// Upstream, when set, is the HOST:PORT dialled in place of
	// MemoryHost:443 for everything that is not a memory route, and
	// UpstreamRoots the authorities trusted for it (nil: the system's).
	// Both exist for tests, which stand a local server in for the real
	// host; the server must still present a certificate for MemoryHost.
	Upstream      string
	UpstreamRoots *x509.CertPool
	// Log receives the proxy's own errors (never a body, a header or a
	// query); nil discards them.
	Log *log.Logger
}

// Proxy is a running proxy; Close stops it and every connection through
// it.
type Proxy struct {
	cfg      Config
	stores   map[string]bool
	leaf     *tls.Certificate
	outer    *http.Server
	inner    *http.Server
	intercep *connListener
	memstore *httputil.ReverseProxy
	upstream *httputil.ReverseProxy
	plain    *httputil.ReverseProxy // http:// requests
	log      *log.Logger

	mu      sync.Mutex
	tunnels map[net.Conn]bool
	closed  bool
}

// Start serves the proxy on l until Close.
func Start(l net.Listener, cfg Config) (*Proxy, error) {
	if cfg.CA == nil || cfg.Memstore == nil || cfg.Token == "" {
		return nil, errors.New("claudeproxy: a CA, a memstore URL and a token are required")
	}
	leaf, err := cfg.CA.issue(MemoryHost)
	if err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg, stores: map[string]bool{}, leaf: leaf, log: cfg.Log, tunnels: map[net.Conn]bool{}}
	if p.log == nil {
		p.log = log.New(io.Discard, "", 0)
	}
	for _, s := range cfg.Stores {
		p.stores[s] = true
	}
	p.memstore = p.reverseProxy(cfg.Memstore, &http.Transport{
		Proxy:              nil, // memstore is reached directly
		DisableCompression: true,
		ForceAttemptHTTP2:  false,
	})
	upstreamAddr := net.JoinHostPort(MemoryHost, "443")
	if cfg.Upstream != "" {
		upstreamAddr = cfg.Upstream
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	p.upstream = p.reverseProxy(&url.URL{Scheme: "https", Host: MemoryHost}, &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, upstreamAddr)
		},
		TLSClientConfig:     &tls.Config{ServerName: MemoryHost, RootCAs: cfg.UpstreamRoots},
		TLSHandshakeTimeout: 30 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   true,
	})
	p.plain = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.Out.Host = r.In.Host },
		Transport:     &http.Transport{Proxy: nil, DisableCompression: true},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Printf("claudeproxy: %s unreachable: %v", r.URL.Host, errors.Unwrap(err))
			writeError(w, http.StatusBadGateway, "api_error", "memstore claude's proxy could not reach "+r.URL.Host)
		},
	}
	p.intercep = newConnListener(l.Addr())
	p.inner = &http.Server{Handler: http.HandlerFunc(p.serveMemoryHost), ErrorLog: p.log}
	p.outer = &http.Server{Handler: http.HandlerFunc(p.serveConnect), ReadHeaderTimeout: connectHeaderTimeout, ErrorLog: p.log}
	go p.inner.Serve(p.intercep)
	go p.outer.Serve(l)
	return p, nil
}

// Close stops the proxy and ends every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.outer.Close()
	p.inner.Close()
	return err
}

// reverseProxy forwards to target, changing nothing of the request but
// its destination: no X-Forwarded-* headers, no compression negotiated,
// each chunk of a streamed answer flushed at once.
func (p *Proxy) reverseProxy(target *url.URL, t *http.Transport) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			if target.Host == MemoryHost {
				r.Out.Host = MemoryHost
			}
		},
		Transport:     t,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Printf("claudeproxy: %s unreachable: %v", target.Host, errors.Unwrap(err))
			writeError(w, http.StatusBadGateway, "api_error", "memstore claude's proxy could not reach "+target.Host)
		},
	}
}

// serveConnect answers a CONNECT: an interception for the memory host, a
// tunnel for any other.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		p.serveHTTP(w, r)
		return
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "CONNECT needs HOST:PORT")
		return
	}
	var upstream net.Conn
	intercept := strings.EqualFold(host, MemoryHost) && strings.HasSuffix(r.Host, ":443")
	if !intercept {
		d := net.Dialer{Timeout: 30 * time.Second}
		if upstream, err = d.DialContext(r.Context(), "tcp", r.Host); err != nil {
			writeError(w, http.StatusBadGateway, "api_error", "memstore claude's proxy could not reach "+r.Host)
			return
		}
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		if upstream != nil {
			upstream.Close()
		}
		return
	}
	conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		if upstream != nil {
			upstream.Close()
		}
		return
	}
	client := net.Conn(conn)
	if n := buf.Reader.Buffered(); n > 0 { // sent before our answer
		client = &prefixConn{Conn: conn, r: io.MultiReader(io.LimitReader(buf.Reader, int64(n)), conn)}
	}
	if intercept {
		tc := tls.Server(client, &tls.Config{
			Certificates: []tls.Certificate{*p.leaf},
			NextProtos:   []string{"http/1.1"},
			MinVersion:   tls.VersionTLS12,
		})
		if !p.intercep.push(tc) {
			tc.Close()
		}
		return
	}
	if !p.track(client, upstream) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go pipe(upstream, client)
	go pipe(client, upstream)
	<-done
	<-done
	p.untrack(client, upstream)
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = true
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.tunnels, c)
	}
}

// serveHTTP forwards a plain HTTP request (Claude Code sends its model
// calls to an http:// ANTHROPIC_BASE_URL through the proxy too) to its
// destination unchanged, unless it carries the memstore token.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case !r.URL.IsAbs() || r.URL.Scheme != "http":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "this proxy carries HTTPS (CONNECT HOST:PORT) and http:// URLs only")
	case p.carriesToken(r):
		writeError(w, http.StatusForbidden, "permission_error", "memstore claude's proxy refused to forward the memstore token to "+r.URL.Host)
	default:
		p.plain.ServeHTTP(w, r)
	}
}

// serveMemoryHost answers a request to the memory host: a configured
// store's routes go to memstore, the rest to the real host unless it
// carries the memstore token.
func (p *Proxy) serveMemoryHost(w http.ResponseWriter, r *http.Request) {
	store, isMemory, err := p.memoryStore(r.URL)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
	case isMemory && p.stores[store]:
		p.memstore.ServeHTTP(w, r)
	case p.carriesToken(r):
		writeError(w, http.StatusForbidden, "permission_error",
			"memstore claude's proxy refused to forward the memstore token to "+MemoryHost+": only the routes of the stores it was started with ("+MemoryRoute+"<store>/...) go to memstore")
	default:
		p.upstream.ServeHTTP(w, r)
	}
}

// memoryStore returns the store a memory route names. A path with dot
// segments, or a store ID written with escapes, is an error: it could name
// one store to the proxy and another to the server.
func (p *Proxy) memoryStore(u *url.URL) (store string, ok bool, err error) {
	rest, ok := strings.CutPrefix(u.Path, MemoryRoute)
	if !ok {
		return "", false, nil
	}
	clean := path.Clean(u.Path)
	if clean != u.Path && clean+"/" != u.Path {
		return "", false, errors.New("the path has . or .. segments or repeated slashes; memstore claude's proxy forwards only plain paths")
	}
	store, _, _ = strings.Cut(rest, "/")
	raw, _ := strings.CutPrefix(u.EscapedPath(), MemoryRoute)
	if !strings.HasPrefix(raw, store) || (len(raw) > len(store) && raw[len(store)] != '/') {
		return "", false, errors.New("the store ID in the path is escaped; memstore claude's proxy forwards only plain store IDs")
	}
	return store, true, nil
}

// carriesToken reports whether the memstore token is in the request's
// headers or URL.
func (p *Proxy) carriesToken(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, p.cfg.Token) || strings.Contains(r.URL.Path, p.cfg.Token) {
		return true
	}
	for _, vs := range r.Header {
		if slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, p.cfg.Token) }) {
			return true
		}
	}
	return false
}

// writeError answers in the API's error shape.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

// prefixConn is a connection whose first bytes were already read into a
// buffer.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// connListener hands the intercepted connections to the inner server.
type connListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }
