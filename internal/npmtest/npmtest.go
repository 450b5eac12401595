// Package npmtest gives tests the Node.js packages they drive (the
// official TypeScript SDK and memory tool), installing them from a
// committed package-lock.json when they are missing or not the version
// it names, so that the tests run wherever node and npm are, without a
// setup step of their own.
package npmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu       sync.Mutex
	installs = map[string]error{} // by directory: the outcome of its install
)

// Need makes sure that dir (holding package.json and package-lock.json)
// has pkg installed in its node_modules, running `npm ci` there once per
// test binary when it has not. It skips the test when node is not on
// PATH, since then nothing could run the package, and fails it when the
// install fails.
func Need(t testing.TB, dir, pkg string) {
	t.Helper()
	if err := installOnce(t, dir, pkg); err != nil {
		t.Fatalf("cannot install %s: %v", pkg, err)
	}
}

// Want is Need for a package that is too large to require everywhere (a
// whole program): where npm cannot install it, the test is skipped with
// npm's reason instead of failed.
func Want(t testing.TB, dir, pkg string) {
	t.Helper()
	if err := installOnce(t, dir, pkg); err != nil {
		t.Skipf("npm cannot install %s here, so this test cannot run: %v", pkg, err)
	}
}

// installOnce installs pkg in dir once per test binary and returns the
// outcome, skipping the test when node is not on PATH.
func installOnce(t testing.TB, dir, pkg string) error {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not on PATH: this test runs %s under Node.js (install nodejs and npm, e.g. apt-get install nodejs npm)", pkg)
	}
	mu.Lock()
	defer mu.Unlock()
	err, done := installs[dir]
	if !done {
		err = install(dir, pkg)
		installs[dir] = err
	}
	return err
}

func install(dir, pkg string) error {
	// Test binaries of several packages run at once and may share dir
	// (the GloVe vectors): one installs while the others wait, since
	// npm ci first deletes node_modules, under another's feet.
	unlock, err := lockDir(dir)
	if err != nil {
		return fmt.Errorf("lock %s for npm: %v", dir, err)
	}
	defer unlock()
	manifest := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")
	if installed(dir, pkg, manifest) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("node is installed but npm is not, and %s/node_modules is missing: install npm, or run `npm ci` in %s", dir, dir)
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("`npm ci` in %s failed: %v\n%s", dir, err, out)
	}
	if !installed(dir, pkg, manifest) {
		return fmt.Errorf("`npm ci` in %s did not install the version of %s that package-lock.json names", dir, pkg)
	}
	return nil
}

// installed reports whether node_modules holds pkg, in the version that
// dir's package-lock.json names when it names one: a node_modules left
// by an older lock (a checkout updated since its install) is installed
// again.
func installed(dir, pkg, manifest string) bool {
	var have struct{ Version string }
	if readJSON(manifest, &have) != nil {
		return false
	}
	var lock struct {
		Packages map[string]struct{ Version string }
	}
	if readJSON(filepath.Join(dir, "package-lock.json"), &lock) != nil {
		return true
	}
	want := lock.Packages["node_modules/"+pkg].Version
	return want == "" || have.Version == want
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
