package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// runKeys runs the tests of memstore.KeyService. open returns a fresh,
// empty database for each subtest.
func runKeys(t *testing.T, open func(t *testing.T) memstore.KeyService) {
	t.Run("Workspaces", func(t *testing.T) { testWorkspaces(t, open(t)) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open(t)) })
	t.Run("Authenticate", func(t *testing.T) { testAuthenticate(t, open(t)) })
	t.Run("KeyLimit", func(t *testing.T) { testKeyLimit(t, open(t)) })
}

func testWorkspaces(t *testing.T, ks memstore.KeyService) {
	ctx := context.Background()
	a, err := ks.CreateWorkspace(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ID, "wrkspc_") || a.Name != "default" || a.CreatedAt.IsZero() {
		t.Errorf("created %+v", a)
	}
	tick()
	b, err := ks.CreateWorkspace(ctx, "team-B.2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ks.CreateWorkspace(ctx, "default")
	wantError(t, err, memstore.ErrWorkspaceExists("default"), "duplicate name")
	for _, bad := range []string{"", strings.Repeat("a", 65), "has space", "tab\t", "ünï", "wrkspc_x", "a/b"} {
		_, err := ks.CreateWorkspace(ctx, bad)
		wantCode(t, err, memstore.EInvalid, "name "+bad)
	}
	for _, key := range []string{a.ID, "default"} {
		got, err := ks.Workspace(ctx, key)
		if err != nil || got.ID != a.ID || got.Name != a.Name || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Errorf("Workspace(%q) = %+v, %v; want %+v", key, got, err, a)
		}
	}
	_, err = ks.Workspace(ctx, "nope")
	wantError(t, err, memstore.ErrNoWorkspace("nope"), "unknown workspace")
	all, err := ks.Workspaces(ctx)
	if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
		t.Errorf("Workspaces = %+v, %v; want [%s %s]", all, err, a.ID, b.ID)
	}
}

func testAPIKeys(t *testing.T, ks memstore.KeyService) {
	ctx := context.Background()
	w1, _ := ks.CreateWorkspace(ctx, "one")
	w2, _ := ks.CreateWorkspace(ctx, "two")
	k1, s1, err := ks.CreateAPIKey(ctx, w1.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k1.ID, "apikey_") || k1.WorkspaceID != w1.ID || k1.Name != "laptop" || k1.RevokedAt != nil || k1.LastUsedAt != nil {
		t.Errorf("created %+v", k1)
	}
	if !strings.HasPrefix(s1, memstore.APIKeyPrefix) || len(s1) < len(memstore.APIKeyPrefix)+40 {
		t.Errorf("secret %q is not a long %s... secret", s1, memstore.APIKeyPrefix)
	}
	if k1.Hint != "..."+s1[len(s1)-4:] || strings.Contains(k1.Name+k1.Hint, s1[len(memstore.APIKeyPrefix):len(s1)-4]) {
		t.Errorf("hint %q of %q", k1.Hint, s1)
	}
	tick()
	k2, s2, err := ks.CreateAPIKey(ctx, w2.ID, "")
	if err != nil || s2 == s1 {
		t.Fatalf("second key: %v (secret repeated: %v)", err, s2 == s1)
	}
	_, _, err = ks.CreateAPIKey(ctx, "wrkspc_nope", "x")
	wantError(t, err, memstore.ErrNoWorkspace("wrkspc_nope"), "key in unknown workspace")
	_, _, err = ks.CreateAPIKey(ctx, w1.ID, "bad\nname")
	wantCode(t, err, memstore.EInvalid, "control character in name")
	_, _, err = ks.CreateAPIKey(ctx, w1.ID, strings.Repeat("n", 256))
	wantCode(t, err, memstore.EInvalid, "overlong name")

	ids := func(keys []memstore.APIKey, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, k := range keys {
			s = append(s, k.ID)
		}
		return strings.Join(s, ",")
	}
	if got, want := ids(ks.APIKeys(ctx, "", "", 0)), k1.ID+","+k2.ID; got != want {
		t.Errorf("all keys %s, want %s", got, want)
	}
	if got := ids(ks.APIKeys(ctx, w2.ID, "", 0)); got != k2.ID {
		t.Errorf("keys of two: %s, want %s", got, k2.ID)
	}
	// Pages: after a key, at most n.
	tick()
	k3, _, err := ks.CreateAPIKey(ctx, w1.ID, "third")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(ks.APIKeys(ctx, w1.ID, "", 1)); got != k1.ID {
		t.Errorf("first page of one: %s, want %s", got, k1.ID)
	}
	if got := ids(ks.APIKeys(ctx, w1.ID, k1.ID, 1)); got != k3.ID {
		t.Errorf("the page after %s: %s, want %s", k1.ID, got, k3.ID)
	}
	if got := ids(ks.APIKeys(ctx, w1.ID, k3.ID, 1)); got != "" {
		t.Errorf("the page after the last: %s, want none", got)
	}
	if got, want := ids(ks.APIKeys(ctx, "", k1.ID, 0)), k2.ID+","+k3.ID; got != want {
		t.Errorf("every workspace's keys after %s: %s, want %s", k1.ID, got, want)
	}

	got, err := ks.APIKey(ctx, k1.ID)
	if err != nil || got.ID != k1.ID || got.WorkspaceID != w1.ID || got.Name != "laptop" || got.Hint != k1.Hint || got.RevokedAt != nil {
		t.Errorf("APIKey(%s) = %+v, %v; want %+v", k1.ID, got, err, k1)
	}
	_, err = ks.APIKey(ctx, "apikey_nope")
	wantError(t, err, memstore.ErrNoAPIKey("apikey_nope"), "get unknown key")

	r, err := ks.RevokeAPIKey(ctx, k1.ID)
	if err != nil || r.RevokedAt == nil || r.ID != k1.ID {
		t.Fatalf("revoke = %+v, %v", r, err)
	}
	tick()
	again, err := ks.RevokeAPIKey(ctx, k1.ID)
	if err != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(*r.RevokedAt) {
		t.Errorf("revoking again moved RevokedAt: %+v, %v (first %v)", again, err, r.RevokedAt)
	}
	_, err = ks.RevokeAPIKey(ctx, "apikey_nope")
	wantError(t, err, memstore.ErrNoAPIKey("apikey_nope"), "revoke unknown key")
	keys, _ := ks.APIKeys(ctx, w1.ID, "", 0)
	if len(keys) != 2 || keys[0].RevokedAt == nil || keys[1].RevokedAt != nil {
		t.Errorf("revoked key listed as %+v", keys)
	}
	if got, err := ks.APIKey(ctx, k1.ID); err != nil || got.RevokedAt == nil {
		t.Errorf("revoked key got as %+v, %v", got, err)
	}
}

func testAuthenticate(t *testing.T, ks memstore.KeyService) {
	ctx := context.Background()
	w, _ := ks.CreateWorkspace(ctx, "default")
	k, secret, err := ks.CreateAPIKey(ctx, w.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ks.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	want := memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: k.ID}}
	if *c != want {
		t.Errorf("caller %+v, want %+v", *c, want)
	}
	keys, _ := ks.APIKeys(ctx, w.ID, "", 0)
	if len(keys) != 1 || keys[0].LastUsedAt == nil {
		t.Errorf("LastUsedAt not recorded: %+v", keys)
	}
	wrong := []string{"", "x", secret + "x", secret[:len(secret)-1], strings.ToUpper(secret), " " + secret, memstore.APIKeyPrefix}
	for _, s := range wrong {
		_, err := ks.Authenticate(ctx, s)
		if wantCode(t, err, memstore.EUnauthenticated, "secret "+s) && s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q repeats the secret", err)
		}
	}
	if _, err := ks.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = ks.Authenticate(ctx, secret)
	if wantCode(t, err, memstore.EUnauthenticated, "revoked key") && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q repeats the secret", err)
	}
}

// testKeyLimit fills a workspace up to MaxAPIKeysPerWorkspace, revoked
// keys included, with the last few keys raced for by more creates than
// there is room for: exactly the room is made, the rest are refused with
// a message that says what to do, and another workspace is unaffected.
func testKeyLimit(t *testing.T, ks memstore.KeyService) {
	ctx := context.Background()
	full, _ := ks.CreateWorkspace(ctx, "full")
	other, _ := ks.CreateWorkspace(ctx, "other")
	const room, racers = 3, 8
	for i := 0; i < memstore.MaxAPIKeysPerWorkspace-room; i++ {
		k, _, err := ks.CreateAPIKey(ctx, full.ID, "")
		if err != nil {
			t.Fatalf("key %d of %d: %v", i+1, memstore.MaxAPIKeysPerWorkspace, err)
		}
		if i%2 == 0 { // revoked keys count as well
			if _, err := ks.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	made, errs := race(racers, func() error { _, _, err := ks.CreateAPIKey(ctx, full.ID, "racer"); return err })
	if made != room {
		t.Errorf("%d concurrent creates made %d keys with room for %d", racers, made, room)
	}
	for _, err := range errs {
		wantKeyLimit(t, err, full.ID, "a concurrent key beyond the limit")
	}
	_, _, err := ks.CreateAPIKey(ctx, full.ID, "one more")
	wantKeyLimit(t, err, full.ID, "a key beyond the limit")
	if keys, err := ks.APIKeys(ctx, full.ID, "", 0); err != nil || len(keys) != memstore.MaxAPIKeysPerWorkspace {
		t.Errorf("the full workspace holds %d keys (%v), want %d", len(keys), err, memstore.MaxAPIKeysPerWorkspace)
	}
	if _, _, err := ks.CreateAPIKey(ctx, other.ID, "unaffected"); err != nil {
		t.Errorf("a key in another workspace: %v", err)
	}
}

// wantKeyLimit reports an error unless err is the refusal of a key past
// the limit of workspaceID's keys.
func wantKeyLimit(t *testing.T, err error, workspaceID, what string) {
	t.Helper()
	wantRefusal(t, err, memstore.ErrAPIKeyLimit(workspaceID), "", what)
}
