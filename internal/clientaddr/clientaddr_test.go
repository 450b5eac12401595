package clientaddr_test

import (
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
