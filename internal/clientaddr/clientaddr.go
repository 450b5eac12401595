// Package clientaddr finds the address a request comes from: the one
// place that decides it, for whatever limits or records requests by their
// client.
//
// The address is the connection's peer, unless the peer is a trusted
// proxy: then it is the rightmost address of X-Forwarded-For that is not
// itself a trusted proxy. Each proxy appends the address it was reached
// from, so the entries right of that one were written by trusted proxies
// and it can be believed; anything further left came from the client and
// may be made up. From any other peer X-Forwarded-For is ignored, since
// any client may send one.
package clientaddr

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// IPv6Group is the prefix length by which IPv6 clients are grouped: a
// site, or an attacker, is given a whole /64 and may use any address in
// it. An IPv4 client is its single address.
const IPv6Group = 64

// Proxies are the address ranges of trusted proxies, none by default.
// Its Set and String make it a flag.Value of comma-separated CIDR ranges
// or single addresses.
type Proxies []netip.Prefix

// Parse reads comma-separated CIDR ranges ("10.0.0.0/8") or single
// addresses ("192.0.2.7", a /32 or /128); "" is none.
func Parse(s string) (Proxies, error) {
	var ps Proxies
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q is neither a CIDR range such as 10.0.0.0/8 or fd00::/8 nor an IP address", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			// Addresses are compared unmapped (see parse).
			if p.Bits() < 96 {
				return nil, fmt.Errorf("%q mixes IPv4-mapped and other IPv6 addresses; give IPv4 ranges as such, 10.0.0.0/8", v)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}

// Set implements flag.Value.
func (p *Proxies) Set(s string) error {
	ps, err := Parse(s)
	if err != nil {
		return err
	}
	*p = ps
	return nil
}

func (p *Proxies) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(*p))
	for i, pr := range *p {
		s[i] = pr.String()
	}
	return strings.Join(s, ",")
}

// trusted reports whether a is a trusted proxy's address.
func (p Proxies) trusted(a netip.Addr) bool {
	for _, pr := range p {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// Addr is the address r comes from (see the package's comment); false
// when its peer's address is not an IP address.
func (p Proxies) Addr(r *http.Request) (netip.Addr, bool) {
	peer, ok := parse(r.RemoteAddr)
	if !ok || !p.trusted(peer) {
		return peer, ok
	}
	client := peer
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		entries := strings.Split(hops[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			a, ok := parse(strings.TrimSpace(entries[j]))
			if !ok {
				// Not an address: the nearest believable one is the
				// proxy that passed it on.
				return client, true
			}
			client = a
			if !p.trusted(a) {
				return client, true
			}
		}
	}
	return client, true
}

// Key is the key by which r's client is counted: its IPv4 address, or the
// /64 (IPv6Group) of its IPv6 address; the raw peer address when that is
// not an IP address.
func (p Proxies) Key(r *http.Request) string {
	a, ok := p.Addr(r)
	if !ok {
		return r.RemoteAddr
	}
	if a.Is6() {
		return netip.PrefixFrom(a, IPv6Group).Masked().String()
	}
	return a.String()
}

// parse reads an IP address, with or without a port, as the peer's
// address or a forwarded one is written; an IPv4 address mapped into
// IPv6 is the IPv4 address, and a zone is dropped.
func parse(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
