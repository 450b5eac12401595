package localfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

func TestReadAtMost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := localfile.ReadAtMost(path, 5); err != nil || string(b) != "12345" {
		t.Errorf("a file at the limit: %q, %v", b, err)
	}
	if b, err := localfile.ReadAtMost(path, 4); err == nil || b != nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("a file past the limit: %q, %v", b, err)
	}
	if _, err := localfile.ReadAtMost(path+"x", 4); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
