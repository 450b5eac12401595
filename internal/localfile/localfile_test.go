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
