package memstore_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/memstore/memstore"

// deps lists the packages that pkg depends on, itself included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestImportRules keeps the layering of the design: the root package
// depends on no sibling, and the official SDK (a test and adapter
// dependency) stays out of the memstore binary and the core packages.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, d := range deps(t, module) {
		if strings.HasPrefix(d, module+"/") {
			t.Errorf("the root package depends on %s", d)
		}
	}
	for _, pkg := range []string{module + "/cmd/memstore", module + "/memorytool"} {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, "github.com/anthropics/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
