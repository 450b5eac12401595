package npmtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInstalled: a package counts as installed when node_modules holds it
// in the version the lock names, or in any version when the lock names
// none; not when it is missing or another version is there.
func TestInstalled(t *testing.T) {
	for _, c := range []struct {
		name, have, lock string
		want             bool
	}{
		{"the lock's version", `{"version":"1.14.0"}`, `{"packages":{"node_modules/@a/sdk":{"version":"1.14.0"}}}`, true},
		{"an older version", `{"version":"1.11.0"}`, `{"packages":{"node_modules/@a/sdk":{"version":"1.14.0"}}}`, false},
		{"a lock that names no version", `{"version":"1.11.0"}`, `{"lockfileVersion":1,"dependencies":{}}`, true},
		{"missing", "", `{"packages":{"node_modules/@a/sdk":{"version":"1.14.0"}}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			manifest := filepath.Join(dir, "node_modules", "@a", "sdk", "package.json")
			if c.have != "" {
				write(t, manifest, c.have)
			}
			write(t, filepath.Join(dir, "package-lock.json"), c.lock)
			if got := installed(dir, "@a/sdk", manifest); got != c.want {
				t.Errorf("installed: %v, want %v", got, c.want)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
