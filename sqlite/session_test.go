package sqlite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
)

// TestSessionTokensStoredHashed proves that a session token's secret never
// reaches the database file, only its hash.
func TestSessionTokensStoredHashed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	st := mustStore(t, db)
	core := memstore.NewCore(db)
	s, _, first, err := core.CreateSession(ctx, asAlice, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := core.CreateSessionToken(ctx, asAlice, s.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{first, second} {
		if _, err := core.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The database, its WAL and shared memory; finding the hashes is the
	// control that these are the files holding the tokens.
	files, _ := filepath.Glob(path + "*")
	for i, secret := range []string{first, second} {
		var found []string
		hashed := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret[len(memstore.SessionTokenPrefix):])) {
				found = append(found, filepath.Base(f))
			}
			hashed = hashed || bytes.Contains(b, []byte(memstore.HashSecret(secret)))
		}
		if len(found) > 0 || !hashed {
			t.Errorf("token %d: the secret is in %v; its hash found: %v", i+1, found, hashed)
		}
	}
}
