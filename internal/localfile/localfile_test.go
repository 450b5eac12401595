package localfile_test

import (
	"testing"

	"github.com/memstore/memstore/internal/localfile"
)

func TestHidden(t *testing.T) {
	for name, want := range map[string]bool{
		".git": true, ".env": true, ".": true, "..": true, ".memstore-sync.json": true,
		"git": false, "a.md": false, "notes.": false, "": false, "x.git": false,
	} {
		if got := localfile.Hidden(name); got != want {
			t.Errorf("Hidden(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for data, want := range map[string]bool{
		"": true, "notes\n": true, "é ✓\n": true,
		"\x00\x01\x02": false, "text\x00": false, "\xff\xfe": false, "\x89PNG\r\n\x1a\n": false,
	} {
		if got := localfile.Text([]byte(data)); got != want {
			t.Errorf("Text(%q) = %v, want %v", data, got, want)
		}
	}
}
