package storetest

import (
	"os"
	"testing"

	"github.com/memstore/memstore/internal/textdiff"
)

// Golden holds got, a backend's schema as text, to the committed file:
// a change of the schema shows in the file's diff, and one made by
// mistake fails. With update, the file is rewritten instead.
func Golden(t *testing.T, file, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the schema of a new database differs from %s (-want +got; -update rewrites it):\n%s", file, Diff(string(want), got))
	}
}

// Diff is the unified diff of two texts, for a failure's message.
func Diff(want, got string) string {
	d, err := textdiff.Unified("want", "got", want, got)
	if err != nil {
		return err.Error()
	}
	return d
}
