package memdir

import (
	"strconv"
	"unicode/utf16"
)

// maxSlugUnits is the longest sanitized name kept whole; a longer one is
// cut and given a hash of the original so that long paths stay apart.
const maxSlugUnits = 200

// Sanitize turns a path into the name of its directory under projects/,
// as Claude Code does: every UTF-16 code unit that is not an ASCII letter
// or digit becomes '-' (so a character outside the Basic Multilingual
// Plane gives two), without collapsing runs or changing case. A result
// longer than 200 units keeps its first 200, then '-' and the base-36
// absolute value of the djb2 hash of the original path.
//
// Different paths can give the same name ("my_project" and "my-project"),
// as they do in Claude Code.
func Sanitize(path string) string {
	// An invalid UTF-8 byte decodes to U+FFFD, one unit, which becomes '-'.
	units := utf16.Encode([]rune(path))
	b := make([]byte, len(units))
	for i, u := range units {
		if u < 0x80 && asciiAlnum(byte(u)) {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= maxSlugUnits {
		return string(b)
	}
	// abs in 64 bits: the absolute value of math.MinInt32 does not fit in
	// 32, and JavaScript's Math.abs gives 2147483648.
	h := int64(djb2(units))
	if h < 0 {
		h = -h
	}
	return string(b[:maxSlugUnits]) + "-" + strconv.FormatInt(h, 36)
}

// djb2 is the hash Claude Code uses for long names: h = h*31 + unit over
// UTF-16 code units from 0, wrapping as a signed 32-bit integer.
func djb2(units []uint16) int32 {
	var h int32
	for _, u := range units {
		h = h<<5 - h + int32(u)
	}
	return h
}

func asciiAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
