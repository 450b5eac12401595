package sqlrow

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestEveryKind: each kind of record a database holds has its table, and
// only those kinds do, so that a kind added to memstore.RecordKinds
// cannot be left out of a copy.
func TestEveryKind(t *testing.T) {
	if len(kinds) != len(memstore.RecordKinds) {
		t.Errorf("%d kinds have tables; memstore.RecordKinds has %d", len(kinds), len(memstore.RecordKinds))
	}
	for _, k := range memstore.RecordKinds {
		d, ok := kinds[k]
		if !ok {
			t.Errorf("kind %s has no table", k)
			continue
		}
		if got := d.rows().Kind; got != k {
			t.Errorf("the table of kind %s is of kind %s", k, got)
		}
	}
}

// TestInsert: an insert names every column once, with a placeholder
// each, then the conflict clause.
func TestInsert(t *testing.T) {
	param := func(n int) string { return "$" + string(rune('0'+n)) }
	got := cursors.table.Insert(param)
	want := `INSERT INTO webhook_cursors (endpoint_id, store_id, seq, owed_to) VALUES ($1, $2, $3, $4) ` + cursors.table.Conflict
	if got != want {
		t.Errorf("Insert:\n%s\nwant\n%s", got, want)
	}
	if n := strings.Count(versions.table.Insert(func(int) string { return "?" }), "?"); n != 14 {
		t.Errorf("the insert of a version has %d placeholders; want 14", n)
	}
}

// TestRecordValues: the rows the backends write of users and webhook
// endpoints have a value for each column, each field of a type value
// takes (must would panic otherwise).
func TestRecordValues(t *testing.T) {
	if got, want := len(UserValues(&memstore.User{})), strings.Count(UserColumns, ",")+1; got != want {
		t.Errorf("a user writes %d values for %d columns", got, want)
	}
	w := &memstore.WebhookEndpoint{EnabledEvents: []string{memstore.WebhookStoreCreated}}
	if got, want := len(WebhookValues(w)), strings.Count(WebhookColumns, ",")+1; got != want {
		t.Errorf("a webhook endpoint writes %d values for %d columns", got, want)
	}
}

// TestVersionColumns: a list without content reads NULL in its place,
// and every other column as they are.
func TestVersionColumns(t *testing.T) {
	full, short := VersionColumns(true, "NULL"), VersionColumns(false, "NULL")
	if full != versions.table.Columns || strings.Replace(full, "content", "NULL", 1) != short {
		t.Errorf("VersionColumns: %q and %q", full, short)
	}
}

// TestSignInColumns: a sign-in's row is read with its user's, each
// column of both tables once, of its table's alias.
func TestSignInColumns(t *testing.T) {
	want := "s." + strings.ReplaceAll(signIns.table.Columns, ", ", ", s.") + ", u." + strings.ReplaceAll(users.table.Columns, ", ", ", u.")
	if SignInColumns != want {
		t.Errorf("SignInColumns = %q, want %q", SignInColumns, want)
	}
	if got := len(SignInValues(&memstore.SignIn{})); got != strings.Count(signIns.table.Columns, ",")+1 {
		t.Errorf("a sign-in writes %d values", got)
	}
}
