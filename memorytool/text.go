package memorytool

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLines is the most lines view shows; a longer file is refused.
const maxLines = 999_999

// decodeUTF8 returns b as a string, replacing invalid bytes the way the
// WHATWG Encoding Standard (and so Node's readFile(..., "utf-8")) does: one
// U+FFFD per maximal invalid subpart. Go's own conversions differ
// (utf8.DecodeRune gives one per byte, strings.ToValidUTF8 one per run), and
// the result is what the model sees and what an edit writes back.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			i++
			continue
		}
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			sb.Write(b[i : i+n])
			i += n
			continue
		}
		// Invalid here: consume the lead byte and as many continuation bytes
		// as a valid sequence starting with this lead could still accept.
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lo = 2, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			need = 2
		case c == 0xED:
			need, hi = 2, 0x9F
		case c == 0xF0:
			need, lo = 3, 0x90
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		case c == 0xF4:
			need, hi = 3, 0x8F
		}
		i++
		for ; need > 0 && i < len(b) && b[i] >= lo && b[i] <= hi; need-- {
			i++
			lo, hi = 0x80, 0xBF
		}
		sb.WriteRune(utf8.RuneError)
	}
	return sb.String()
}

// lessUTF16 orders names by UTF-16 code units, as JavaScript's default sort
// does: a character above U+FFFF sorts as its lead surrogate (U+D800-U+DBFF),
// so before U+E000-U+FFFF. Byte or code-point order differs.
func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ka, kb := utf16Lead(ra), utf16Lead(rb)
			if ka != kb {
				return ka < kb
			}
			return ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

func utf16Lead(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// formatSize renders a byte count the way the reference does: B, K, M, G in
// powers of 1024, no decimals when the value is whole, otherwise one decimal
// rounded half up. Integer arithmetic, because strconv rounds ties to even.
// From 1 TiB on the reference prints "undefined" as the unit; memstore
// prints T.
func formatSize(n int64) string {
	if n <= 0 {
		return "0B"
	}
	units := [...]string{"B", "K", "M", "G", "T"}
	i, unit := 0, int64(1)
	for i < len(units)-1 && n >= unit*1024 {
		unit *= 1024
		i++
	}
	if n%unit == 0 {
		return strconv.FormatInt(n/unit, 10) + units[i]
	}
	tenths := (20*n + unit) / (2 * unit)
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + units[i]
}

// selectRange returns the lines of a file that view shows for a view_range of
// [a, b], with the 1-based number of the first: start at max(1, a); b == -1
// means the end, otherwise b is a JavaScript slice end (negative counts from
// the end, past the end is clamped). An empty selection is not an error.
func selectRange(lines []string, a, b int) ([]string, int) {
	start := max(1, a) - 1
	end := b
	switch {
	case b == -1:
		end = len(lines)
	case b < 0:
		end = max(0, len(lines)+b)
	case b > len(lines):
		end = len(lines)
	}
	if start >= end {
		return nil, start + 1
	}
	return lines[start:end], start + 1
}

// sortUTF16 sorts names in place by UTF-16 code units.
func sortUTF16(names []string) {
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case lessUTF16(a, b):
			return -1
		}
		return 1
	})
}
