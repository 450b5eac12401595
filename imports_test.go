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

// TestImportRules keeps the layering of the design: the root package,
// with its one core, depends on no sibling, the surfaces depend on its
// interfaces and never on a backend, and the official SDK (a test and
// adapter dependency) stays out of the memstore binary and the core
// packages.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, d := range deps(t, module) {
		if strings.HasPrefix(d, module+"/") {
			t.Errorf("the root package depends on %s", d)
		}
	}
	// The text side of search, which every backend and memdir share, and
	// the PostgreSQL test server depend on no package of the module but
	// the free port finder, itself such a leaf.
	freeport := module + "/internal/freeport"
	for _, leaf := range []string{module + "/internal/searchtext", module + "/internal/pgtest", freeport} {
		for _, d := range deps(t, leaf) {
			if (d == module || strings.HasPrefix(d, module+"/")) && d != leaf && d != freeport {
				t.Errorf("%s depends on %s", leaf, d)
			}
		}
	}
	for _, pkg := range []string{module + "/memorytool", module + "/httpapi", module + "/agenttool", module + "/mcpserver", module + "/dirsync", module + "/memdir", module + "/webhook"} {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, "github.com/anthropics/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	// In the memstore binary, the SDK is the model's client of dreams
	// alone: internal/agentloop is the one package that imports it.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/cmd/memstore").Output()
	if err != nil {
		t.Fatalf("go list -deps %s/cmd/memstore: %v", module, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(f[0], module) || f[0] == module+"/internal/agentloop" {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "github.com/anthropics/") {
				t.Errorf("%s imports %s: only internal/agentloop calls the model", f[0], imp)
			}
		}
	}
	// Surfaces receive the root package's services, a Core's, never a
	// concrete backend; backends know nothing of surfaces or of each
	// other, nor of anything but the root package and internal helpers.
	forbidden := map[string][]string{
		"/httpapi":    {"/sqlite", "/postgres", "/mcpserver"},
		"/mcpserver":  {"/sqlite", "/postgres", "/httpapi"},
		"/agenttool":  {"/sqlite", "/postgres", "/httpapi", "/mcpserver"},
		"/memorytool": {"/sqlite", "/postgres", "/httpapi", "/mcpserver"},
		"/dirsync":    {"/sqlite", "/postgres", "/httpapi", "/mcpserver", "/memorytool"},
		"/memdir":     {"/sqlite", "/postgres", "/httpapi", "/mcpserver", "/dirsync"},
		"/storediff":  {"/sqlite", "/postgres", "/httpapi", "/mcpserver"},
		"/storetest":  {"/sqlite", "/postgres", "/httpapi"},
		"/console":    {"/sqlite", "/postgres", "/httpapi", "/mcpserver"},
		"/webhook":    {"/sqlite", "/postgres", "/httpapi", "/mcpserver"},
		"/dream":      {"/sqlite", "/postgres", "/httpapi", "/mcpserver", "/console"},
		"/sqlite":     {"/httpapi", "/mcpserver", "/postgres", "/agenttool", "/memorytool", "/dirsync", "/memdir", "/storetest", "/console", "/internal/httpstatus", "/internal/heldcallers"},
		"/postgres":   {"/httpapi", "/mcpserver", "/sqlite", "/agenttool", "/memorytool", "/dirsync", "/memdir", "/storetest", "/internal/pgtest", "/console", "/internal/httpstatus", "/internal/heldcallers"},
		// What the backends share knows neither of them, and the edges'
		// shared homes know no backend.
		"/internal/sqlrow":      {"/sqlite", "/postgres", "/httpapi", "/console", "/mcpserver"},
		"/internal/sqlread":     {"/sqlite", "/postgres", "/httpapi", "/console", "/mcpserver"},
		"/internal/httpstatus":  {"/sqlite", "/postgres", "/httpapi", "/console", "/mcpserver"},
		"/internal/heldcallers": {"/sqlite", "/postgres", "/httpapi", "/console", "/mcpserver"},
	}
	for pkg, bad := range forbidden {
		for _, d := range deps(t, module+pkg) {
			for _, b := range bad {
				if d == module+b {
					t.Errorf("%s depends on %s", module+pkg, d)
				}
			}
		}
	}
	// Only the command's wiring names the SQLite backend: every other
	// surface reaches storage through a Core it is given.
	out, err = exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", module, err)
	}
	wiring := map[string]bool{module + "/cmd/memstore": true, module + "/sqlite": true, module + "/sqlite/sqlitetest": true}
	for _, pkg := range strings.Fields(string(out)) {
		if wiring[pkg] {
			continue
		}
		for _, d := range deps(t, pkg) {
			if d == module+"/sqlite" {
				t.Errorf("%s depends on %s: only cmd/memstore wires the backend", pkg, d)
			}
		}
	}
}
