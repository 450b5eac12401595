// Package origin says which server a URL names, so that whatever follows
// a redirect for memstore (the command-line client, which carries a
// credential; webhook deliveries, which carry a signature) stays on the
// server it was given.
package origin

import (
	"net"
	"net/url"
	"strings"
)

// Of is a URL's server: its scheme, host and port, the port written even
// when it is the scheme's default, all in lower case. Another port of
// the same host may be another program, so it is another server.
func Of(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Same reports whether a and b name the same server (Of).
func Same(a, b *url.URL) bool { return Of(a) == Of(b) }
