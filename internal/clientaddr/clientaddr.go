// Package clientaddr finds the address a request comes from: the one
// place that decides it, for whatever limits or records requests by their
// client.
//
// The address is the connection's peer, unless the peer is a trusted
// proxy: then it is the rightmost forwarded address that is not itself a
// trusted proxy. Each proxy appends the address it was reached from, so
// the entries right of that one were written by trusted proxies and it
// can be believed; anything further left came from the client and may be
// made up. From any other peer the forwarding headers are ignored, since
// any client may send them.
//
// The forwarded addresses are the entries of X-Forwarded-For when the
// request carries one, else the for= parameters of the standard Forwarded
// header (RFC 7239). Only one header is read: the other one reaches us
// from the client untouched by a proxy that writes just the first, so it
// names whatever the client likes. X-Forwarded-For wins because most
// proxies write it and pass a client's Forwarded through; a proxy that
// writes only Forwarded must drop a client's X-Forwarded-For.
// A forwarded entry that is not an address (malformed, obfuscated such as
// for=_hidden or for=unknown, or beyond MaxHops) ends the search: the
// address is then the nearest believed one, the proxy that passed it on.
package clientaddr

import (
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// IPv6Group is the prefix length by which IPv6 clients are grouped: a
// site, or an attacker, is given a whole /64 and may use any address in
// it. An IPv4 client is its single address.
const IPv6Group = 64

// MaxHops is how many forwarded entries are read at most, right to left:
// real chains of proxies are a few hops long, and a longer one is treated
// as an entry that is not an address.
const MaxHops = 32

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
	client, n := peer, 0
	for a, ok := range forwarded(r.Header) {
		if n++; !ok || n > MaxHops {
			// Not an address: the nearest believable one is the
			// proxy that passed it on.
			return client, true
		}
		client = a
		if !p.trusted(a) {
			return client, true
		}
	}
	return client, true
}

// forwarded yields the forwarded addresses of h right to left, from
// X-Forwarded-For when h has it, else from Forwarded (see the package's
// comment); false for an entry that is not an address.
func forwarded(h http.Header) iter.Seq2[netip.Addr, bool] {
	if lines := h.Values("X-Forwarded-For"); len(lines) > 0 {
		return rightToLeft(lines, commaSeparated, func(e string) (netip.Addr, bool) {
			return parse(strings.TrimSpace(e))
		})
	}
	return rightToLeft(h.Values("Forwarded"), forwardedElements, forwardedFor)
}

// rightToLeft yields, from the last header line to the first, the
// entries split(line) finds, read by addr. Entries are found right to
// left and one at a time, so that garbage a client put left of what its
// proxies appended is never read.
func rightToLeft(lines []string, split func(string) iter.Seq2[string, bool], addr func(string) (netip.Addr, bool)) iter.Seq2[netip.Addr, bool] {
	return func(yield func(netip.Addr, bool) bool) {
		for i := len(lines) - 1; i >= 0; i-- {
			for e, ok := range split(lines[i]) {
				a, aok := netip.Addr{}, false
				if ok {
					a, aok = addr(e)
				}
				if !yield(a, aok) || !aok {
					return
				}
			}
		}
	}
}

// commaSeparated yields the comma-separated entries of an
// X-Forwarded-For line right to left, empty ones included.
func commaSeparated(line string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		for {
			i := strings.LastIndexByte(line, ',')
			if !yield(line[i+1:], true) || i < 0 {
				return
			}
			line = line[:i]
		}
	}
}

// forwardedElements yields the elements of a Forwarded line right to
// left, skipping empty ones as lists allow; false, and no more, once the
// line cannot be split there (a quoted string never opened).
func forwardedElements(line string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		end := len(line)
		for i := len(line) - 1; i >= -1; i-- {
			switch {
			case i >= 0 && line[i] == '"':
				// Skip the quoted string, whose commas are not separators.
				if i = openingQuote(line, i); i < 0 {
					yield("", false)
					return
				}
			case i < 0 || line[i] == ',':
				if e := strings.Trim(line[i+1:end], " \t"); e != "" && !yield(e, true) {
					return
				}
				end = i
			}
		}
	}
}

// openingQuote is the index of the quote that opens the quoted string
// closed by the quote at line[end], or -1 when there is none: the first
// quote to the left not escaped by an odd run of backslashes.
func openingQuote(line string, end int) int {
	for i := end - 1; i >= 0; i-- {
		if line[i] != '"' {
			continue
		}
		escapes := 0
		for j := i - 1; j >= 0 && line[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i
		}
	}
	return -1
}

// forwardedFor reads the address of a Forwarded element's for= parameter:
// the element is name=value pairs separated by semicolons, each value a
// token or a quoted string, names case-insensitive; for= at most once.
func forwardedFor(e string) (netip.Addr, bool) {
	node, seen := "", false
	for {
		if e = strings.TrimLeft(e, " \t"); e == "" {
			return parseNode(node)
		}
		if e[0] == ';' {
			e = e[1:]
			continue
		}
		name := e[:tokenLen(e)]
		if name == "" || len(e) == len(name) || e[len(name)] != '=' {
			return netip.Addr{}, false
		}
		e = e[len(name)+1:]
		value, rest, ok := readValue(e)
		if !ok {
			return netip.Addr{}, false
		}
		if strings.EqualFold(name, "for") {
			if seen {
				return netip.Addr{}, false
			}
			node, seen = value, true
		}
		if e = strings.TrimLeft(rest, " \t"); e != "" && e[0] != ';' {
			return netip.Addr{}, false
		}
	}
}

// readValue reads a token or a quoted string at the start of s: its
// value and what follows it.
func readValue(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		n := tokenLen(s)
		return s[:n], s[n:], n > 0
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i++; i == len(s) {
				return "", "", false
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// tokenLen is the length of the HTTP token at the start of s.
func tokenLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return i
		}
	}
	return len(s)
}

// parseNode reads a Forwarded node: an IPv4 address or a bracketed IPv6
// one, either with an optional port. Any other node, such as unknown or
// an obfuscated _name, is not an address.
func parseNode(node string) (netip.Addr, bool) {
	host, port, bracketed := node, "", false
	if rest, ok := strings.CutPrefix(node, "["); ok {
		if host, port, bracketed = strings.Cut(rest, "]"); !bracketed {
			return netip.Addr{}, false
		}
	} else if i := strings.IndexByte(node, ':'); i >= 0 {
		host, port = node[:i], node[i:]
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Is6() != bracketed || a.Zone() != "" || port != "" && !validPort(port) {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// validPort reports whether p is a node's ":port": 1 to 5 digits, or an
// obfuscated port, "_" and letters, digits, ".", "_" or "-".
func validPort(p string) bool {
	p, ok := strings.CutPrefix(p, ":")
	digits := !strings.HasPrefix(p, "_")
	if !ok || len(p) < 1 || !digits && len(p) < 2 || digits && len(p) > 5 {
		return false
	}
	for _, c := range []byte(p) {
		if !('0' <= c && c <= '9' || !digits && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("._-", c) >= 0)) {
			return false
		}
	}
	return true
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
