package textdiff

import (
	"slices"
	"testing"
)

// TestLines classifies a diff's lines, a deleted line that itself starts
// with "--" and an added one that starts with "++" included.
func TestLines(t *testing.T) {
	d, err := Unified("old", "new", "keep\n-- sig\n", "keep\n++ more\n")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range Lines(d) {
		kinds = append(kinds, l.Kind+":"+l.Text)
	}
	want := []string{"head:--- old", "head:+++ new", "hunk:@@ -1,2 +1,2 @@", ": keep", "del:--- sig", "add:+++ more"}
	if !slices.Equal(kinds, want) {
		t.Errorf("lines %q, want %q", kinds, want)
	}
	if a, r := Count(d); a != 1 || r != 1 {
		t.Errorf("count +%d -%d, want +1 -1", a, r)
	}
	if d, _ := Unified("a", "b", "same\n", "same\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	if !Binary("a\x00b") || Binary("text\n") {
		t.Error("Binary")
	}
}
