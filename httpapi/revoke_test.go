package httpapi_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storetest"
)

// The authentication cache must let go of a credential the moment it
// stops working in this process, and never keep one past its expiry.
// Each server here runs on a clock that moves only when told, so that
// nothing leaves the cache by the passing of time unless the test says so.

// newRevocationEnv is a server whose cache keeps callers for ttl, on a
// database file at path, with one store and a session attached to it.
func newRevocationEnv(t *testing.T, path string, clock *storetest.Clock, ttl time.Duration) (e *serverEnv, store, sessionID, token string) {
	t.Helper()
	db := sqlitetest.OpenAt(t, path, sqlite.Options{Now: clock.Now})
	e = newServerEnvOn(t, db, func(c *httpapi.Config) { c.Now, c.AuthCacheTTL = clock.Now, ttl })
	store = e.createStore(t, "notes")
	s, token := e.createSession(t, attach(store, ""))
	return e, store, s["id"].(string), token
}

// write creates a memory with the session token, the request an ended
// session must no longer make.
func write(t *testing.T, e *serverEnv, store, token, path string) apiResult {
	t.Helper()
	return e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{"path": path, "content": "x"}), as(token))
}

func TestArchivedSessionStopsAtOnce(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	e, store, sid, token := newRevocationEnv(t, filepath.Join(t.TempDir(), "m.db"), clock, time.Hour)
	if res := write(t, e, store, token, "/before.md"); res.status != 200 {
		t.Fatalf("write before the archive: %d %s", res.status, res.body)
	}
	e.ok(t, "POST", "/v1/sessions/"+sid+"/archive", "")
	write(t, e, store, token, "/after.md").apiError(t, 401, "authentication_error")
	e.call(t, "GET", "/v1/sessions/"+sid, "", as(token)).apiError(t, 401, "authentication_error")
}

func TestRevokedTokenStopsAtOnce(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	e, store, sid, token := newRevocationEnv(t, filepath.Join(t.TempDir(), "m.db"), clock, time.Hour)
	other := e.ok(t, "POST", "/v1/sessions/"+sid+"/tokens", "{}")
	for _, tok := range []string{token, other["token"].(string)} {
		if res := write(t, e, store, tok, "/"+tok[len(tok)-6:]+".md"); res.status != 200 {
			t.Fatalf("write before the revocation: %d %s", res.status, res.body)
		}
	}
	first := e.ok(t, "GET", "/v1/sessions/"+sid+"/tokens", "")["data"].([]any)[0].(map[string]any)["id"].(string)
	e.ok(t, "POST", "/v1/sessions/"+sid+"/tokens/"+first+"/revoke", "")
	write(t, e, store, token, "/after.md").apiError(t, 401, "authentication_error")
	// The session's other token is another credential: it still works.
	if res := write(t, e, store, other["token"].(string), "/other.md"); res.status != 200 {
		t.Errorf("the session's other token after the revocation: %d %s", res.status, res.body)
	}
}

func TestRevokedKeyStopsAtOnce(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	e, _, _, _ := newRevocationEnv(t, filepath.Join(t.TempDir(), "m.db"), clock, time.Hour)
	key, secret := sqlitetest.APIKey(t, e.db, e.workspace, "to revoke")
	asKey := withHeader("X-Api-Key", secret)
	e.ok(t, "GET", "/v1/memory_stores", "", asKey)
	// Revoked through the server's own database handle, as an embedding
	// program or a command in the same process would.
	if _, err := memstore.NewCore(e.db).RevokeAPIKey(context.Background(), key.ID); err != nil {
		t.Fatal(err)
	}
	e.call(t, "GET", "/v1/memory_stores", "", asKey).apiError(t, 401, "authentication_error")
	e.ok(t, "GET", "/v1/memory_stores", "") // the other key is untouched
}

// TestRevokedElsewhereStopsWithinMoments revokes through a second handle
// on the same file, as 'memstore keys revoke' and 'memstore sessions
// revoke' do from their own process: the server reads it from the
// database within moments, long before its cache would forget the
// credential (the clock never moves).
func TestRevokedElsewhereStopsWithinMoments(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	path := filepath.Join(t.TempDir(), "m.db")
	e, store, sid, token := newRevocationEnv(t, path, clock, time.Hour)
	elsewhere := memstore.NewCore(sqlitetest.OpenAt(t, path, sqlite.Options{Now: clock.Now}))
	key, secret := sqlitetest.APIKey(t, e.db, e.workspace, "to revoke")
	asKey := withHeader("X-Api-Key", secret)
	e.ok(t, "GET", "/v1/memory_stores", "", asKey)
	if res := write(t, e, store, token, "/before.md"); res.status != 200 {
		t.Fatalf("write before the archive: %d %s", res.status, res.body)
	}
	ctx := context.Background()
	if _, err := elsewhere.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.ArchiveSession(ctx, e.caller(), sid); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for e.call(t, "GET", "/v1/memory_stores", "", asKey).status != 401 || write(t, e, store, token, "/after.md").status != 401 {
		if time.Since(revoked) > 3*time.Second {
			t.Fatal("a key and a session ended by another handle still work 3s after")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.ok(t, "GET", "/v1/memory_stores", "") // the other key is untouched

	// Without the cache, nothing is remembered at all.
	path = filepath.Join(t.TempDir(), "off.db")
	off, _, _, _ := newRevocationEnv(t, path, clock, -1)
	elsewhere = memstore.NewCore(sqlitetest.OpenAt(t, path, sqlite.Options{}))
	off.ok(t, "GET", "/v1/memory_stores", "")
	if _, err := elsewhere.RevokeAPIKey(ctx, off.keyID); err != nil {
		t.Fatal(err)
	}
	off.call(t, "GET", "/v1/memory_stores", "").apiError(t, 401, "authentication_error")
}

func TestExpiredTokenIsNotRemembered(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	e, store, sid, _ := newRevocationEnv(t, filepath.Join(t.TempDir(), "m.db"), clock, time.Hour)
	tok := e.ok(t, "POST", "/v1/sessions/"+sid+"/tokens", `{"expires_in_seconds":1}`)["token"].(string)
	if res := write(t, e, store, tok, "/before.md"); res.status != 200 {
		t.Fatalf("write before expiry: %d %s", res.status, res.body)
	}
	clock.Advance(time.Second - time.Millisecond)
	if res := write(t, e, store, tok, "/just-before.md"); res.status != 200 {
		t.Fatalf("write a millisecond before expiry: %d %s", res.status, res.body)
	}
	clock.Advance(time.Millisecond)
	write(t, e, store, tok, "/after.md").apiError(t, 401, "authentication_error")
}

// revokingKeys revokes each key right after authenticating it, as a
// revocation committed by another request between the lookup of a key
// and its keeping in the cache would.
type revokingKeys struct {
	memstore.KeyService
	once sync.Once
}

func (k *revokingKeys) Authenticate(ctx context.Context, secret string) (*memstore.Caller, error) {
	c, err := k.KeyService.Authenticate(ctx, secret)
	if err == nil {
		k.once.Do(func() { _, err = k.KeyService.RevokeAPIKey(ctx, c.Actor.ID) })
	}
	return c, err
}

func TestRevocationDuringAuthenticationIsNotRemembered(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	db := sqlitetest.Open(t, sqlite.Options{})
	e := newServerEnvOn(t, db, func(c *httpapi.Config) {
		c.Now, c.AuthCacheTTL = clock.Now, time.Hour
		c.Keys = &revokingKeys{KeyService: c.Keys}
	})
	// The request that raced the revocation is served; the next is not.
	e.ok(t, "GET", "/v1/memory_stores", "")
	e.call(t, "GET", "/v1/memory_stores", "").apiError(t, 401, "authentication_error")
}
