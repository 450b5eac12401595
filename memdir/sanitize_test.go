package memdir_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/memstore/memstore/memdir"
)

// The expected names of the long paths were computed with Claude Code's
// algorithm in JavaScript (UTF-16 strings, Math.abs, toString(36)).
func TestSanitize(t *testing.T) {
	// minHash is a path whose djb2 hash is math.MinInt32: abs must give
	// 2147483648, not a negative number.
	minHash := "/" + strings.Repeat("a", 210) + "\x02\x03\x12\x1a\x0f\x08\x11"
	tests := []struct {
		name, in, want string
	}{
		{"mac path", "/Users/foo/my-project", "-Users-foo-my-project"},
		{"underscore", "/home/user/my_project", "-home-user-my-project"},
		{"dot directory", "/Users/me/proj/.worktrees/2573", "-Users-me-proj--worktrees-2573"},
		{"windows drive keeps its case", `C:\Projects\my-app`, "C--Projects-my-app"},
		{"NFC letter is one unit", "/tmp/caf\u00e9", "-tmp-caf-"},
		{"NFD letter is two units", "/tmp/cafe\u0301", "-tmp-cafe-"},
		{"non-BMP is two units", "/x/😀", "-x---"},
		{"root", "/", "-"},
		{"empty", "", ""},
		{"no collapsing, no case change", "/A//B..c", "-A--B--c"},
		{"invalid UTF-8 is one unit", "/a\xffb", "-a-b"},
		{"exactly 200 units", "/" + strings.Repeat("b", 199), "-" + strings.Repeat("b", 199)},
		{"201 units", "/" + strings.Repeat("b", 199) + "c", "-" + strings.Repeat("b", 199) + "-86ms40"},
		{
			"long path",
			"/home/user/" + strings.Repeat("projects/deeply-nested/", 9) + "app",
			"-home-user-" + strings.Repeat("projects-deeply-nested-", 8) + "proje-lo780b",
		},
		{
			"long non-BMP path counts units, not bytes or runes",
			"/home/" + strings.Repeat("😀", 120),
			"-home-" + strings.Repeat("-", 194) + "-ciej0p",
		},
		{"hash of math.MinInt32", minHash, "-" + strings.Repeat("a", 199) + "-zik0zk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memdir.Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDjb2(t *testing.T) {
	tests := []struct {
		in   string
		want int32
	}{
		{"", 0},
		{"abc", 96354},
		{"/" + strings.Repeat("a", 210) + "\x02\x03\x12\x1a\x0f\x08\x11", -2147483648},
	}
	for _, tt := range tests {
		if got := memdir.Djb2(tt.in); got != tt.want {
			t.Errorf("djb2(%q) = %d; want %d", tt.in, got, tt.want)
		}
	}
	if got := strconv.FormatInt(int64(memdir.Djb2("abc")), 36); got != "22ci" {
		t.Errorf("djb2(abc) in base 36 = %s; want 22ci", got)
	}
}

// Paths that differ only in punctuation share a name, as in Claude Code.
func TestSanitizeCollides(t *testing.T) {
	if a, b := memdir.Sanitize("/w/my_project"), memdir.Sanitize("/w/my-project"); a != b {
		t.Errorf("Sanitize gave %q and %q; want one name", a, b)
	}
}
