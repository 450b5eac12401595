package clientaddr_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/clientaddr"
)

func TestKey(t *testing.T) {
	proxies, err := clientaddr.Parse("10.0.0.0/8, 192.0.2.7,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string // X-Forwarded-For headers, in order
		want       string
	}{
		{"IPv4 peer", "198.51.100.4:5000", nil, "198.51.100.4"},
		{"IPv6 peer, grouped by /64", "[2001:db8:1:2:aaaa::1]:5000", nil, "2001:db8:1:2::/64"},
		{"another address of that /64", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:5000", nil, "2001:db8:1:2::/64"},
		{"the next /64", "[2001:db8:1:3::1]:5000", nil, "2001:db8:1:3::/64"},
		{"IPv4 mapped into IPv6", "[::ffff:198.51.100.4]:5000", nil, "198.51.100.4"},
		{"spoofed from an untrusted peer", "198.51.100.4:5000", []string{"203.0.113.9"}, "198.51.100.4"},
		{"spoofed trusted chain from an untrusted peer", "198.51.100.4:5000", []string{"203.0.113.9, 10.0.0.1"}, "198.51.100.4"},
		{"trusted peer, no header", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"trusted peer", "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"trusted chain, client's made-up entries ignored", "10.1.2.3:5000", []string{"1.1.1.1, 203.0.113.9, 10.9.9.9", "192.0.2.7"}, "203.0.113.9"},
		{"trusted peer, IPv6 client grouped", "[fd00::1]:443", []string{"2001:db8:5:6::42"}, "2001:db8:5:6::/64"},
		{"trusted peer, entry with a port", "10.1.2.3:5000", []string{"[2001:db8::7]:1234"}, "2001:db8::/64"},
		{"trusted peer, every entry trusted", "10.1.2.3:5000", []string{"10.4.4.4, 10.5.5.5"}, "10.4.4.4"},
		{"trusted peer, garbage stops at the last proxy", "10.1.2.3:5000", []string{"203.0.113.9, nonsense, 10.5.5.5"}, "10.5.5.5"},
		{"the single trusted address", "192.0.2.7:1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"next to the single trusted address", "192.0.2.8:1", []string{"203.0.113.9"}, "192.0.2.8"},
		{"peer not an IP address", "@", []string{"203.0.113.9"}, "@"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, h := range c.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := proxies.Key(r); got != c.want {
			t.Errorf("%s: Key = %q, want %q", c.name, got, c.want)
		}
	}

	// Without trusted proxies, X-Forwarded-For is never read.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := clientaddr.Proxies(nil).Key(r); got != "10.1.2.3" {
		t.Errorf("no trusted proxies: Key = %q, want the peer", got)
	}
}

func TestParse(t *testing.T) {
	var p clientaddr.Proxies
	if err := p.Set(" 10.0.0.0/8,,2001:db8::1, ::ffff:192.0.2.0/120, 172.16.5.5/12"); err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), "10.0.0.0/8,2001:db8::1/128,192.0.2.0/24,172.16.0.0/12"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if p, err := clientaddr.Parse(""); err != nil || len(p) != 0 {
		t.Errorf(`Parse("") = %v, %v; want none`, p, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1:80", "fe80::1%eth0", "::ffff:0:0/80"} {
		_, err := clientaddr.Parse("10.0.0.0/8," + bad)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Parse(%q): %v, want an error that names it", bad, err)
		}
	}
}

// fromProxy is a request from peer with the given Forwarded and
// X-Forwarded-For header lines, in order.
func fromProxy(peer string, fwd, xff []string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = peer
	for _, h := range fwd {
		r.Header.Add("Forwarded", h)
	}
	for _, h := range xff {
		r.Header.Add("X-Forwarded-For", h)
	}
	return r
}

func TestForwarded(t *testing.T) {
	proxies, err := clientaddr.Parse("10.0.0.0/8, 192.0.2.7,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	const proxy = "10.1.2.3:5000"
	for _, c := range []struct {
		name, peer string
		fwd, xff   []string
		want       string
	}{
		{"IPv4", proxy, []string{"for=203.0.113.9"}, nil, "203.0.113.9"},
		{"with other parameters", proxy, []string{"for=203.0.113.9;proto=http;by=10.1.2.3"}, nil, "203.0.113.9"},
		{"for not first", proxy, []string{"proto=https;for=203.0.113.9"}, nil, "203.0.113.9"},
		{"quoted IPv4 with a port", proxy, []string{`for="203.0.113.9:4711"`}, nil, "203.0.113.9"},
		{"quoted IPv6 with a port", proxy, []string{`for="[2001:db8:cafe::17]:4711"`}, nil, "2001:db8:cafe::/64"},
		{"quoted IPv6 without a port", proxy, []string{`for="[2001:db8:cafe::17]"`}, nil, "2001:db8:cafe::/64"},
		{"obfuscated port", proxy, []string{`for="203.0.113.9:_p0rt"`}, nil, "203.0.113.9"},
		{"escaped characters in a quoted string", proxy, []string{`for="\2\03.0.113.9";ext="a\"b,c;d"`}, nil, "203.0.113.9"},
		{"IPv4 mapped into IPv6", proxy, []string{`for="[::ffff:203.0.113.9]"`}, nil, "203.0.113.9"},
		{"mixed-case parameter names", proxy, []string{"For=203.0.113.9;PROTO=https"}, nil, "203.0.113.9"},
		{"the RFC's example", proxy, []string{`for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"`}, nil, "2001:db8:cafe::/64"},
		{"trusted chain, client's made-up elements ignored", proxy,
			[]string{"for=1.1.1.1, for=203.0.113.9", " for=10.9.9.9 ,for=192.0.2.7"}, nil, "203.0.113.9"},
		{"several header lines, rightmost untrusted wins", proxy, []string{"for=198.51.100.1", "for=203.0.113.9"}, nil, "203.0.113.9"},
		{"every element trusted", proxy, []string{"for=10.4.4.4, for=10.5.5.5"}, nil, "10.4.4.4"},
		{"empty elements are skipped", proxy, []string{"for=203.0.113.9,, ,for=10.5.5.5,", ""}, nil, "203.0.113.9"},
		{"commas and semicolons inside quotes", proxy, []string{`for=203.0.113.9;ext=", for=10.6.6.6;"`}, nil, "203.0.113.9"},

		// Not an address: the nearest believable one is the proxy that
		// passed it on.
		{"unknown", proxy, []string{"for=unknown"}, nil, "10.1.2.3"},
		{"obfuscated", proxy, []string{"for=203.0.113.9, for=_hidden, for=10.5.5.5"}, nil, "10.5.5.5"},
		{"UNKNOWN behind trusted hops", proxy, []string{"for=203.0.113.9, for=UNKNOWN", "for=10.5.5.5"}, nil, "10.5.5.5"},
		{"no for parameter", proxy, []string{"for=203.0.113.9, proto=https, for=10.5.5.5"}, nil, "10.5.5.5"},
		{"only semicolons", proxy, []string{"for=203.0.113.9, ;;"}, nil, "10.1.2.3"},
		{"IPv6 not bracketed", proxy, []string{`for="2001:db8::1"`}, nil, "10.1.2.3"},
		{"IPv6 not quoted", proxy, []string{"for=[2001:db8::1]"}, nil, "10.1.2.3"},
		{"IPv4 with a port not quoted", proxy, []string{"for=203.0.113.9:80"}, nil, "10.1.2.3"},
		{"bad port", proxy, []string{`for="203.0.113.9:http"`}, nil, "10.1.2.3"},
		{"port too long", proxy, []string{`for="203.0.113.9:123456"`}, nil, "10.1.2.3"},
		{"IPv6 zone", proxy, []string{`for="[fe80::1%eth0]"`}, nil, "10.1.2.3"},
		{"host name", proxy, []string{"for=example.com"}, nil, "10.1.2.3"},
		{"for twice", proxy, []string{"for=203.0.113.9;for=198.51.100.1"}, nil, "10.1.2.3"},
		{"unterminated quote", proxy, []string{`for="203.0.113.9`}, nil, "10.1.2.3"},
		{"stray quote", proxy, []string{`for=203.0.113"9`}, nil, "10.1.2.3"},
		{"missing value", proxy, []string{"for="}, nil, "10.1.2.3"},
		{"missing name", proxy, []string{"=203.0.113.9"}, nil, "10.1.2.3"},
		{"space around =", proxy, []string{"for = 203.0.113.9"}, nil, "10.1.2.3"},
		{"text after a quoted string", proxy, []string{`for="203.0.113.9"x`}, nil, "10.1.2.3"},
		{"malformed element stops at the last proxy", proxy, []string{"for=203.0.113.9, for=@@, for=10.5.5.5"}, nil, "10.5.5.5"},
		{"client's garbage left of the proxy's element is never read", proxy, []string{`for="oops, for=203.0.113.9`}, nil, "203.0.113.9"},
		{"client's garbage in an earlier line is never read", proxy, []string{`for="`, "for=203.0.113.9"}, nil, "203.0.113.9"},

		{"too many trusted hops", proxy, []string{"for=203.0.113.9" + strings.Repeat(", for=10.7.7.7", clientaddr.MaxHops)}, nil, "10.7.7.7"},
		{"as many trusted hops as allowed", proxy, []string{"for=203.0.113.9" + strings.Repeat(", for=10.7.7.7", clientaddr.MaxHops-1)}, nil, "203.0.113.9"},
		{"as many trusted X-Forwarded-For entries as allowed", proxy, nil, []string{"203.0.113.9" + strings.Repeat(", 10.7.7.7", clientaddr.MaxHops-1)}, "203.0.113.9"},
		{"too many trusted X-Forwarded-For entries", proxy, nil, []string{"203.0.113.9" + strings.Repeat(", 10.7.7.7", clientaddr.MaxHops)}, "10.7.7.7"},

		{"untrusted peer's Forwarded is ignored", "198.51.100.4:5000", []string{"for=203.0.113.9"}, nil, "198.51.100.4"},
		{"untrusted peer's Forwarded with a trusted chain is ignored", "198.51.100.4:5000", []string{"for=203.0.113.9, for=10.0.0.1"}, nil, "198.51.100.4"},
		{"IPv6 trusted peer", "[fd00::1]:443", []string{`for="[2001:db8:5:6::42]:80"`}, nil, "2001:db8:5:6::/64"},

		// A proxy that appends only to X-Forwarded-For passes the
		// client's Forwarded on untouched: it must not be read.
		{"both headers: X-Forwarded-For wins", proxy, []string{"for=203.0.113.9"}, []string{"198.51.100.1"}, "198.51.100.1"},
		{"both headers: X-Forwarded-For wins even when unusable", proxy, []string{"for=203.0.113.9"}, []string{"unknown"}, "10.1.2.3"},
		{"empty X-Forwarded-For still wins", proxy, []string{"for=203.0.113.9"}, []string{""}, "10.1.2.3"},
		{"X-Forwarded-For alone", proxy, nil, []string{"198.51.100.1"}, "198.51.100.1"},
	} {
		if got := proxies.Key(fromProxy(c.peer, c.fwd, c.xff)); got != c.want {
			t.Errorf("%s: Key = %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzAddr feeds arbitrary Forwarded and X-Forwarded-For headers from a
// trusted proxy: Addr never panics and names either the peer or an
// address found in the headers.
func FuzzAddr(f *testing.F) {
	for _, s := range []string{
		"for=203.0.113.9",
		`for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"`,
		`For="203.0.113.9:_p";ext="a\"b,c"`,
		"for=unknown, for=_hidden",
		`for="oops, for=10.1.1.1`,
		`for="\\"`,
		"203.0.113.9, 10.5.5.5",
		"[2001:db8::7]:1234, nonsense",
	} {
		f.Add(s, "", s)
		f.Add("", s, s)
		f.Add(s, s, "")
	}
	proxies, err := clientaddr.Parse("10.0.0.0/8")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, fwd, xff, line2 string) {
		var xs []string
		if xff != "" {
			xs = []string{xff, line2}
		}
		r := fromProxy("10.1.2.3:5000", []string{fwd, line2}, xs)
		a, ok := proxies.Addr(r)
		if !ok {
			t.Fatalf("Addr = %v, false for an IP address peer", a)
		}
		if a.String() != "10.1.2.3" && !strings.Contains(fwd+xff+line2, a.String()) &&
			!strings.ContainsAny(fwd+xff+line2, `\:`) {
			t.Errorf("Addr = %v, neither the peer nor found in the headers", a)
		}
	})
}
