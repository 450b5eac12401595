package dirsync

import (
	"testing"

	"github.com/memstore/memstore"
)

// TestOptionsCheck: an empty scope or side takes its default, and any
// other value than the two allowed is refused, naming both.
func TestOptionsCheck(t *testing.T) {
	base := Options{Memories: (*memstore.Core)(nil), StoreID: "memstore_1", Dir: t.TempDir()}
	o := base
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if o.Scope != ScopePrivate || o.Prefer != PreferRemote {
		t.Errorf("defaults: scope %q, prefer %q; want %q, %q", o.Scope, o.Prefer, ScopePrivate, PreferRemote)
	}
	for _, tc := range []struct {
		scope  Scope
		prefer string
		want   string
	}{
		{ScopeTeam, PreferLocal, ""},
		{"shared", "", `dirsync: scope "shared": want "private" or "team"`},
		{"", "newest", `dirsync: prefer "newest": want "remote" or "local"`},
	} {
		o := base
		o.Scope, o.Prefer = tc.scope, tc.prefer
		err := o.check()
		switch {
		case err != nil && err.Error() != tc.want:
			t.Errorf("scope %q, prefer %q: %q; want %q", tc.scope, tc.prefer, err, tc.want)
		case err == nil && tc.want != "":
			t.Errorf("scope %q, prefer %q: accepted; want %q", tc.scope, tc.prefer, tc.want)
		case err == nil && (o.Scope != tc.scope || o.Prefer != tc.prefer):
			t.Errorf("scope %q, prefer %q became %q, %q", tc.scope, tc.prefer, o.Scope, o.Prefer)
		}
	}
}
