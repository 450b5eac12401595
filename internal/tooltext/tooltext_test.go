package tooltext_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/tooltext"
)

func TestAppendNumbered(t *testing.T) {
	var sb strings.Builder
	tooltext.AppendNumbered(&sb, []string{"a", "", "ü"}, 99)
	if want := "    99\ta\n   100\t\n   101\tü"; sb.String() != want {
		t.Errorf("%q, want %q", sb.String(), want)
	}
	sb.Reset()
	tooltext.AppendNumbered(&sb, nil, 1)
	if sb.Len() != 0 {
		t.Errorf("no lines gave %q", sb.String())
	}
}

func TestOccurrences(t *testing.T) {
	for _, tc := range []struct {
		content, old string
		want         []int
	}{
		{"aaa", "aa", []int{0, 1}},
		{"a\nb\na", "a", []int{0, 4}},
		{"héllo héllo", "é", []int{1, 8}},
		{"abc", "x", nil},
		{"ab", "abc", nil},
	} {
		if got := tooltext.Occurrences(tc.content, tc.old); !slices.Equal(got, tc.want) {
			t.Errorf("Occurrences(%q, %q) = %v, want %v", tc.content, tc.old, got, tc.want)
		}
	}
	if got := tooltext.LineIndex("a\nb\nc", 4); got != 2 {
		t.Errorf("LineIndex = %d, want 2", got)
	}
}

func TestPercentTrap(t *testing.T) {
	for p, want := range map[string]string{
		"/memories/%2E%2E/x": "%2e", "/a/%2fb": "%2f", "/a%5cb": "%5c", "/a%252e": "%25",
		"/a%00": "%00", "/%c0%ae": "%c0", "/100%": "", "/50%off": "", "/plain": "",
	} {
		if got := tooltext.PercentTrap(p); got != want {
			t.Errorf("PercentTrap(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestAppendListItem(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("- 09:30 ")
	tooltext.AppendListItem(&sb, "first  \nsecond\t\n\nthird")
	if want := "- 09:30 first\n  second\n\n  third\n"; sb.String() != want {
		t.Errorf("%q, want %q", sb.String(), want)
	}
}
