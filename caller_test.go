package memstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestPermissionsNamed: every check of a permission names one of the
// core's (memstore.Permission), never free text, which a surface could
// spell differently from the call it leads to.
func TestPermissionsNamed(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "CanAdminister" && sel.Sel.Name != "CanReadAdmin") {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok {
					t.Errorf("%s: %s(%s): name a memstore.Permission instead", fset.Position(lit.Pos()), sel.Sel.Name, lit.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckHeld: what a held caller stands on is read again by the core:
// a session token's stream of a store ends once the store is detached
// (EPermission) or the token revoked (EUnauthenticated); a store still
// attached, an API key, and a hold of no store go on.
func TestCheckHeld(t *testing.T) {
	f := newCoreFixture(t)
	ctx := t.Context()
	for what, err := range map[string]error{
		"a store still attached": memstore.CheckHeld(ctx, f.core, f.session, f.ro),
		"an API key":             memstore.CheckHeld(ctx, f.core, f.admin, f.rw),
		"no store":               memstore.CheckHeld(ctx, f.core, f.session, ""),
	} {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := f.core.DetachStore(ctx, f.admin, f.sessionID, f.rw); err != nil {
		t.Fatal(err)
	}
	if err := memstore.CheckHeld(ctx, f.core, f.session, f.rw); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a detached store: %v, want permission_error", err)
	}
	if _, err := f.core.RevokeSessionToken(ctx, f.admin, f.token); err != nil {
		t.Fatal(err)
	}
	if err := memstore.CheckHeld(ctx, f.core, f.session, ""); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked token: %v, want authentication_error", err)
	}
}
