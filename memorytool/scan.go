package memorytool

import "encoding/json"

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
	s.space()
	if !s.byte('}') {
		for {
			s.space()
			name, ok := s.plainString()
			if !ok {
				return nil, false
			}
			s.space()
			if !s.byte(':') {
				return nil, false
			}
			s.space()
			start := s.i
			if !s.value(0) {
				return nil, false
			}
			fields = append(fields, field{name, json.RawMessage(input[start:s.i])})
			s.space()
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return nil, false
			}
		}
	}
	s.space()
	return fields, s.i == len(s.b)
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
		s.space()
		if s.byte(']') {
			return true
		}
		for {
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.byte(']') {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	case c == '{':
		s.i++
		s.space()
		if s.byte('}') {
			return true
		}
		for {
			s.space()
			if !s.str() {
				return false
			}
			s.space()
			if !s.byte(':') {
				return false
			}
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.byte('}') {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
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
				for range 4 {
					if s.i >= len(s.b) || !isHex(s.b[s.i]) {
						return false
					}
					s.i++
				}
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
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
