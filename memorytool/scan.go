package memorytool

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxScanDepth is how deeply scanObject follows nested arrays and objects
// before it leaves the input to json.Unmarshal.
const maxScanDepth = 32

// scanObject splits input into the members of the JSON object it holds,
// checking the whole input as json.Unmarshal does; ok is false if it is
// not one JSON object, or if it holds something scanObject leaves to
// json.Unmarshal (a name with an escape or beyond ASCII, nesting deeper than
// maxScanDepth). Each member's value is its raw JSON text, as
// json.RawMessage keeps it; values alias input.
func scanObject(input []byte) (fields []field, ok bool) {
	s := scanner{b: input}
	s.space()
	if !s.byte('{') {
		return nil, false
	}
	fields = make([]field, 0, 4)
	ok = s.members('}', func() bool {
		name, ok := s.plainString()
		if !ok || !s.colon() {
			return false
		}
		start := s.i
		if !s.value(0) {
			return false
		}
		fields = append(fields, field{name, json.RawMessage(input[start:s.i])})
		return true
	})
	s.space()
	return fields, ok && s.i == len(s.b)
}

type scanner struct {
	b []byte
	i int
}

// space skips JSON whitespace.
func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// members consumes the members of an array or object, after its opening
// bracket and up to its closing one, close, each read by member.
func (s *scanner) members(close byte, member func() bool) bool {
	s.space()
	if s.byte(close) {
		return true
	}
	for {
		s.space()
		if !member() {
			return false
		}
		s.space()
		if s.byte(close) {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// colon consumes a name's colon and the space around it.
func (s *scanner) colon() bool {
	s.space()
	if !s.byte(':') {
		return false
	}
	s.space()
	return true
}

// byte consumes c if it is next.
func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString consumes a string of ASCII without escapes (as a name
// json.Unmarshal keeps byte for byte) and returns its content.
func (s *scanner) plainString() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return string(s.b[start : s.i-1]), true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false
		}
		s.i++
	}
	return "", false
}

// value consumes one JSON value at nesting depth.
func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == '[':
		s.i++
		return s.members(']', func() bool { return s.value(depth + 1) })
	case c == '{':
		s.i++
		return s.members('}', func() bool { return s.str() && s.colon() && s.value(depth+1) })
	}
	return s.word("true") || s.word("false") || s.word("null")
}

// word consumes the literal w.
func (s *scanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str consumes a string, checking its escapes; its bytes need not be
// UTF-8, as for json.Unmarshal.
func (s *scanner) str() bool {
	if !s.byte('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(s.b[s.i-2:]) < 0 {
					return false
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.byte('.') && !s.digits() {
		return false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// unquote decodes the JSON string raw, already checked (by scanObject or
// json.Unmarshal), as json.Unmarshal does: escapes decoded, a lone or
// broken surrogate and every byte of invalid UTF-8 replaced by U+FFFD.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	var b strings.Builder
	b.Grow(len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			if r+1 >= len(s) {
				return "", false
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := hex4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, hex4(s[r:])); dec != utf8.RuneError {
						r += 6
						b.WriteRune(dec)
						continue
					}
					rr = utf8.RuneError
				}
				b.WriteRune(rr)
				continue
			default:
				return "", false
			}
			r += 2
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b.WriteRune(rr)
			r += size
		}
	}
	return b.String(), true
}

// hex4 is the code unit of the escape \uXXXX at the start of s, or -1.
func hex4(s []byte) rune {
	var unit [2]byte
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	if _, err := hex.Decode(unit[:], s[2:6]); err != nil {
		return -1
	}
	return rune(unit[0])<<8 | rune(unit[1])
}
