package memstore

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL: any URL an endpoint may be given. Refusals are
// invalid-request errors; a URL accepted without the allowance is https,
// without credentials, and its host is a public address, or a name that
// is not a localhost name and that no URL parser reads as an IPv4
// address (its last label not a number); with the allowance, http too.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/hooks", "https://[::ffff:0:127.0.0.1]/x", "https://2130706433/", "https://0x7f.1/",
		"https://127.1/", "https://localhost./", "https://a.LOCALHOST/", "https://[fe80::1%25eth0]:8443/", "http://example.com/",
		"https://user@example.com/", "https://bücher.example/", "https://example.com:0/", "https://[64:ff9b::a00:1]/", "https://93.184.215.14/x",
		"https://[2002:a00:1::]/", "https:///x", "https://example..com/", "https://x_y.example/"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allow bool) {
		ws := NewWebhooks(nil, WebhooksAllowPrivate(allow))
		err := ws.CheckURL(t.Context(), raw)
		if err != nil {
			if ErrorCode(err) != EInvalid {
				t.Fatalf("%q: a refusal that is not an invalid request: %v", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.User != nil || u.Hostname() == "" || len(raw) > MaxWebhookURLLength {
			t.Fatalf("%q accepted: %v", raw, perr)
		}
		if u.Scheme != "https" && !(allow && u.Scheme == "http") {
			t.Fatalf("%q accepted with scheme %q", raw, u.Scheme)
		}
		if allow {
			return
		}
		host := u.Hostname()
		if a, err := netip.ParseAddr(host); err == nil {
			if CheckWebhookAddr(a) != nil {
				t.Fatalf("%q accepted: its address %s is not public", raw, a)
			}
			return
		}
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		if name == "localhost" || strings.HasSuffix(name, ".localhost") {
			t.Fatalf("%q accepted: a localhost name", raw)
		}
		labels := strings.Split(name, ".")
		last := strings.TrimPrefix(labels[len(labels)-1], "0x")
		if strings.Trim(last, "0123456789abcdef") == "" && (last == "" || strings.HasPrefix(labels[len(labels)-1], "0x") || strings.Trim(last, "0123456789") == "") {
			t.Fatalf("%q accepted: its host reads as an IPv4 address", raw)
		}
	})
}
