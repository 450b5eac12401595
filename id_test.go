package memstore_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// acceptAll is a sink that takes every record it is handed.
type acceptAll struct{ memstore.RecordSink }

func (acceptAll) Begin(memstore.RecordKind, int64) error { return nil }
func (acceptAll) Workspace(*memstore.Workspace) error    { return nil }

// TestIDRules: an ID is checked by one rule. A lookup takes any text a
// backend can look up (ValidateID); a copied record's ID must also have
// the form memstore makes. Text that is no ID at all gets the same
// message from both.
func TestIDRules(t *testing.T) {
	copyWorkspace := func(id string) error {
		sink := memstore.CheckRecords(acceptAll{})
		if err := sink.Begin(memstore.KindWorkspaces, 1); err != nil {
			t.Fatal(err)
		}
		return sink.Workspace(&memstore.Workspace{ID: id, Name: "w"})
	}
	for _, bad := range []string{"wrkspc_a\x00b", "wrkspc_\xff"} {
		lookup := memstore.ValidateID("id", bad)
		copied := copyWorkspace(bad)
		if lookup == nil || copied == nil {
			t.Fatalf("%q: lookup %v, copy %v; want both refused", bad, lookup, copied)
		}
		if memstore.ErrorMessage(copied) != lookup.Error() {
			t.Errorf("%q: a copied record is told %q, a lookup %q; want one message", bad, memstore.ErrorMessage(copied), lookup)
		}
	}
	// The strict rule alone: the kind's prefix, then lowercase letters,
	// digits and "_", in a bounded length.
	for _, bad := range []string{"", "wrkspc_", "memstore_01abc", "wrkspc_AB", "wrkspc_../x", "wrkspc_" + strings.Repeat("a", 60)} {
		if bad != "" && memstore.ValidateID("id", bad) != nil {
			t.Errorf("ValidateID(%q) refuses an ID a lookup may name", bad)
		}
		err := copyWorkspace(bad)
		if memstore.ErrorCode(err) != memstore.EInvalid || !strings.Contains(err.Error(), `is not an ID`) || !strings.Contains(err.Error(), memstore.WorkspaceIDPrefix) {
			t.Errorf("a copied workspace %q: %v; want EInvalid naming the form %s", bad, err, memstore.WorkspaceIDPrefix)
		}
	}
	if err := copyWorkspace("wrkspc_01jq2x7v3k5m8n9p0r4s6t1w2y"); err != nil {
		t.Errorf("a copied workspace with a good ID: %v", err)
	}
}

// TestActivityActorNamesEveryKind: an actor filter whose ID names no
// kind is refused with a message that names the prefix of every kind.
func TestActivityActorNamesEveryKind(t *testing.T) {
	c := &memstore.Caller{WorkspaceID: "wrkspc_1", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_1"}}
	_, err := memstore.NewCore(nil).Activity(t.Context(), c, memstore.ActivityFilter{Actor: memstore.Actor{ID: "nobody_1"}})
	if memstore.ErrorCode(err) != memstore.EInvalid {
		t.Fatalf("an actor of no kind: %v, want EInvalid", err)
	}
	for _, p := range []string{memstore.APIKeyIDPrefix, memstore.SessionIDPrefix, memstore.UserIDPrefix, memstore.ServiceAccountIDPrefix} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q does not name %s", err, p)
		}
	}
}
