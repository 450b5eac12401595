package schema

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestRead: migrations come back in order with their numbers and texts;
// a name without a number, or a folder without migrations, is an error
// that names it.
func TestRead(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_more.sql":   {Data: []byte("two")},
		"m/0001_schema.sql": {Data: []byte("one")},
		"m/notes.txt":       {Data: []byte("not a migration")},
		"m/dev/0001_x.sql":  {Data: []byte("dev")},
		"bad/first.sql":     {Data: []byte("?")},
	}
	ms, err := Read(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != (Migration{1, "m/0001_schema.sql", "one"}) || ms[1] != (Migration{2, "m/0002_more.sql", "two"}) {
		t.Errorf("Read = %+v", ms)
	}
	if _, err := Read(fsys, "bad"); err == nil || !strings.Contains(err.Error(), "bad/first.sql") {
		t.Errorf("a name without a number: %v", err)
	}
	if _, err := Read(fsys, "none"); err == nil || !strings.Contains(err.Error(), "no migrations in none") {
		t.Errorf("no migrations: %v", err)
	}
}

// TestDevelopment: only the last development version is taken over; an
// earlier one is sent to the last development build, a later one to the
// build that made it.
func TestDevelopment(t *testing.T) {
	if err := Development(18, 18); err != nil {
		t.Errorf("the last development version: %v", err)
	}
	if err := Development(3, 18); err == nil || !strings.Contains(err.Error(), "development version 3;") || !strings.Contains(err.Error(), "commit "+LastDevelopmentBuild) {
		t.Errorf("an early development version: %v", err)
	}
	if err := Development(19, 18); err == nil || !strings.Contains(err.Error(), "newer than this one") {
		t.Errorf("a later development version: %v", err)
	}
}
