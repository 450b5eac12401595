package memorytool

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1, "1B"}, {1023, "1023B"}, {1024, "1K"}, {1025, "1.0K"},
		{1076, "1.1K"}, {1280, "1.3K"}, // a tie rounds half up, not to even
		{1536, "1.5K"}, {2047, "2.0K"}, {2048, "2K"}, {4096, "4K"},
		{1048575, "1024.0K"}, {1048576, "1M"}, {1572864, "1.5M"},
		{1073741823, "1024.0M"}, {1073741824, "1G"}, {1 << 40, "1T"},
	} {
		if got := formatSize(tc.n); got != tc.want {
			t.Errorf("formatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestSortUTF16(t *testing.T) {
	// JavaScript's default sort: uppercase before lowercase, and a
	// character above U+FFFF (a surrogate pair) before U+E000-U+FFFF.
	names := []string{"b", "！", "😀", "a", "B", "Z", "é", "\uE000", "aa", "A"}
	sortUTF16(names)
	want := []string{"A", "B", "Z", "a", "aa", "b", "é", "😀", "\uE000", "！"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted = %q, want %q", names, want)
	}
	// Two astral characters compare by code point.
	if !lessUTF16("😀", "😁") || lessUTF16("😁", "😀") {
		t.Error("astral characters out of order")
	}
}

func TestDecodeUTF8(t *testing.T) {
	const r = "\uFFFD"
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"valid", "héllo 😀", "héllo 😀"},
		{"BOM kept", "\xEF\xBB\xBFx", "\uFEFFx"},
		{"truncated 4-byte", "a\xF0\x9F\x98b", "a" + r + "b"},
		{"truncated at end", "a\xF0\x9F\x98", "a" + r},
		{"surrogate", "\xED\xA0\x80", r + r + r},
		{"lone continuation", "\x80\x80", r + r},
		{"overlong", "\xC0\xAF", r + r},
		{"E0 bad second", "\xE0\x80\x80", r + r + r},
		{"F4 above max", "\xF4\x90\x80\x80", r + r + r + r},
		{"F5", "\xF5", r},
		{"two-byte cut by ASCII", "\xC3a", r + "a"},
		{"three-byte cut", "\xE2\x82x", r + "x"},
	} {
		if got := decodeUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: decodeUTF8(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestSelectRange(t *testing.T) {
	lines := []string{"1", "2", "3", "4", "5"}
	for _, tc := range []struct {
		a, b  int
		want  string
		first int
	}{
		{1, -1, "1 2 3 4 5", 1},
		{0, 2, "1 2", 1},
		{-5, 2, "1 2", 1},
		{2, 4, "2 3 4", 2}, // end is a slice end, so inclusive in 1-based terms
		{2, -2, "2 3", 2},  // negative end counts from the end
		{4, 100, "4 5", 4}, // clamped
		{5, 3, "", 5},      // reversed: empty, not an error
		{0, 0, "", 1},
		{9, -1, "", 9},
		{3, -9, "", 3},
	} {
		got, first := selectRange(lines, tc.a, tc.b)
		if strings.Join(got, " ") != tc.want || first != tc.first {
			t.Errorf("selectRange([%d, %d]) = %q from %d, want %q from %d", tc.a, tc.b, got, first, tc.want, tc.first)
		}
	}
}

func TestInsert(t *testing.T) {
	for _, tc := range []struct {
		content string
		line    int
		text    string
		want    string
		err     string
	}{
		{"", 0, "first", "first\n", ""},
		{"a\nb\n", 0, "x", "x\na\nb\n", ""},
		{"a\nb\n", 2, "c\n", "a\nb\nc\n", ""},
		{"a\nb\n", 3, "d", "a\nb\n\nd", ""}, // at L: a blank line and no final LF
		{"a\nb", 2, "c", "a\nb\nc", ""},
		{"a\nb", 1, "x\n\n", "a\nx\n\nb", ""}, // only one trailing LF goes
		{"a\r\nb", 1, "x\r\n", "a\r\nx\r\nb", ""},
		{"a\nb", 1, "m1\nm2", "a\nm1\nm2\nb", ""},
		{"a\nb", 3, "x", "", "Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]"},
		{"a\nb", -1, "x", "", "Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 2]"},
		{"", 2, "x", "", "Invalid `insert_line` parameter: 2. It should be within the range of lines of the file: [0, 1]"},
	} {
		got, err := insert(tc.content, tc.line, tc.text)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("insert(%q, %d, %q) error = %v, want %q", tc.content, tc.line, tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("insert(%q, %d, %q) = %q, %v; want %q", tc.content, tc.line, tc.text, got, err, tc.want)
		}
	}
}

func TestReplace(t *testing.T) {
	const p = "/memories/f"
	const head = snippetHeader
	for _, tc := range []struct {
		name            string
		content, o, n   string
		want, out, fail string
	}{
		{name: "unique", content: "a\nb\nc\nd\ne\nf\ng", o: "d", n: "D",
			want: "a\nb\nc\nD\ne\nf\ng", out: head + "     2\tb\n     3\tc\n     4\tD\n     5\te\n     6\tf"},
		{name: "dollar is literal", content: "x", o: "x", n: "$&$1$$", want: "$&$1$$", out: head + "     1\t$&$1$$"},
		{name: "first line", content: "a\nb\nc\nd", o: "a", n: "A", want: "A\nb\nc\nd", out: head + "     1\tA\n     2\tb\n     3\tc"},
		{name: "trailing empty line shown", content: "a\n", o: "a", n: "b", want: "b\n", out: head + "     1\tb\n     2\t"},
		{name: "multi-line old_str", content: "a\nb\nc\nd", o: "b\nc", n: "X", want: "a\nX\nd", out: head + "     1\ta\n     2\tX\n     3\td"},
		{name: "multi-line new_str shown whole", content: "1\n2\n3\n4\n5\n6\n7\n8", o: "4", n: "4a\n4b\n4c\n4d",
			want: "1\n2\n3\n4a\n4b\n4c\n4d\n5\n6\n7\n8",
			out:  head + "     2\t2\n     3\t3\n     4\t4a\n     5\t4b\n     6\t4c\n     7\t4d\n     8\t5\n     9\t6"},
		{name: "none", content: "abc", o: "x", fail: "No replacement was performed, old_str `x` did not appear verbatim in /memories/f."},
		{name: "many lines", content: "x\ny\nx", o: "x", fail: "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. Please ensure it is unique"},
		{name: "twice on one line", content: "a\nxx x\n", o: "x", fail: "No replacement was performed. Multiple occurrences of old_str `x` in lines: 2, 2, 2. Please ensure it is unique"},
		{name: "overlapping", content: "aaa", o: "aa", fail: "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1. Please ensure it is unique"},
		{name: "empty old_str, one line", content: "abc", o: "", n: ">", want: ">abc", out: head + "     1\t>abc"},
		{name: "empty old_str, empty file", content: "", o: "", n: "x", want: "x", out: head + "     1\tx"},
		{name: "empty old_str, many lines", content: "a\nb\n", o: "", fail: "No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 2, 3. Please ensure it is unique"},
		{name: "CRLF multi-line", content: "a\r\nb\r\n", o: "a\r\nb", n: "c", want: "c\r\n", out: head + "     1\tc\r\n     2\t"},
	} {
		got, out, err := replace(p, tc.content, tc.o, tc.n)
		if tc.fail != "" {
			if err == nil || err.Error() != tc.fail {
				t.Errorf("%s: error = %v, want %q", tc.name, err, tc.fail)
			}
			continue
		}
		if err != nil || got != tc.want || out != tc.out {
			t.Errorf("%s: replace = %q, %q, %v\nwant %q, %q", tc.name, got, out, err, tc.want, tc.out)
		}
	}
}

func TestRenderFileLimits(t *testing.T) {
	content := "alpha\nbravo\ncharlie\ndelta\necho"
	full, _ := renderFile("/memories/f", content, nil, 0)
	if want := "Here's the content of /memories/f with line numbers:\n     1\talpha\n     2\tbravo\n     3\tcharlie\n     4\tdelta\n     5\techo"; full != want {
		t.Fatalf("renderFile = %q, want %q", full, want)
	}
	// A limit that fits the header and two lines cuts after line 2 and
	// tells where to go on.
	limit := len("Here's the content of /memories/f with line numbers:\n     1\talpha\n     2\tbravo")
	got, _ := renderFile("/memories/f", content, nil, limit)
	want := "Here's the content of /memories/f with line numbers:\n     1\talpha\n     2\tbravo\n\n" +
		"[Showing lines 1-2 of 5; the rest was cut at the " + strconv.Itoa(limit) + "-character view limit. Continue with view_range [3, -1].]"
	if got != want {
		t.Errorf("cut view = %q\nwant %q", got, want)
	}
	// Within a range, the note keeps the range's end.
	got, _ = renderFile("/memories/f", content, []int{2, 4}, limit)
	if !strings.HasSuffix(got, "[Showing lines 2-2 of 5; the rest was cut at the "+strconv.Itoa(limit)+"-character view limit. Continue with view_range [3, 4].]") {
		t.Errorf("cut ranged view = %q", got)
	}
	// A line longer than the whole limit is cut inside, never dropped.
	got, _ = renderFile("/memories/f", strings.Repeat("é", 500), nil, 100)
	if !strings.Contains(got, "     1\té") || !strings.Contains(got, "[Line 1 is longer than the 100-character view limit and was cut. Continue with view_range [2, -1].]") {
		t.Errorf("long line view = %q", got)
	}
	if n := len([]rune(strings.SplitN(got, "\n\n[", 2)[0])); n != 100 {
		t.Errorf("long line cut to %d characters, want 100", n)
	}
	// Too many lines.
	_, err := renderFile("/memories/big", strings.Repeat("\n", 999_999), nil, 0)
	if err == nil || err.Error() != "File /memories/big has too many lines (1000000). Maximum is 999,999 lines." {
		t.Errorf("too many lines: %v", err)
	}
}
