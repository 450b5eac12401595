package memdir_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore/memdir"
)

func TestValidateOverride(t *testing.T) {
	const home = "/home/u"
	tests := []struct {
		value        string
		fromSettings bool
		want         string // "" when rejected
		reason       string // part of the error when rejected
	}{
		// The examples of docs/memory-directory.md (Overrides).
		{"/a", false, "", "near-root"},
		{"/ab", false, "/ab/", ""},
		{"/tmp/./a/../mem///", false, "/tmp/mem/", ""},
		{"~/mem", true, "/home/u/mem/", ""},
		{"~/mem", false, "", "not an absolute path"},
		// Empty, and the home directory or above from settings.
		{"", false, "", "empty"},
		{"", true, "", "empty"},
		{"~", true, "", "home directory itself"},
		{"~/", true, "", "home directory itself"},
		{"~/.", true, "", "home directory itself"},
		{`~/.\`, true, "", "home directory itself"}, // "\" is trimmed as Claude Code does, leaving ~/.
		{"~/..", true, "", "above the home directory"},
		{"~/foo/..", true, "", "home directory itself"},
		{`~\mem`, true, "/home/u/mem/", ""},
		{"~/../x", true, "/home/x/", ""},
		{"~/../..", true, "", "not an absolute path"}, // / without its separator
		// Roots, relative paths, NUL, UNC.
		{"/", false, "", "not an absolute path"},
		{"///", false, "", "not an absolute path"},
		{"relative/mem", false, "", "not an absolute path"},
		{"relative/mem", true, "", "not an absolute path"},
		{"/ab/../..", false, "", "not an absolute path"},
		{"C:", false, "", "not an absolute path"},
		{`\\server\share`, false, "", "not an absolute path"},
		{"/mem\x00x", false, "", "NUL"},
		{"/\u00e9", false, "", "near-root"}, // two UTF-16 units
		{"/😀", false, "/😀/", ""},            // three
		// POSIX cleaning turns a leading // into /, as Node's does.
		{"//server/share", false, "/server/share/", ""},
		// Trailing separators of either kind go; NFC applies.
		{`/ab\`, false, "/ab/", ""},
		{"/tmp/cafe\u0301", false, "/tmp/caf\u00e9/", ""},
	}
	for _, tt := range tests {
		got, err := memdir.ValidateOverride(tt.value, tt.fromSettings, home)
		if tt.want != "" {
			if err != nil || got != tt.want {
				t.Errorf("ValidateOverride(%q, %v) = %q, %v; want %q", tt.value, tt.fromSettings, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidateOverride(%q, %v) = %q; want it rejected (%s)", tt.value, tt.fromSettings, got, tt.reason)
		} else if !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("ValidateOverride(%q, %v) rejected it with %q; want a reason with %q", tt.value, tt.fromSettings, err, tt.reason)
		}
	}
}

func TestValidateOverrideUnknownHome(t *testing.T) {
	_, err := memdir.ValidateOverride("~/mem", true, "")
	if err == nil || !strings.Contains(err.Error(), "home directory is unknown") {
		t.Errorf("~/mem without a home: %v; want the home reported unknown", err)
	}
	if got, err := memdir.ValidateOverride("/srv/mem", true, ""); err != nil || got != "/srv/mem/" {
		t.Errorf("an absolute path needs no home: %q, %v", got, err)
	}
}
