package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// mustRun runs memstore and requires exit status 0, returning standard
// output.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, stdin, args...)
	if code != 0 {
		t.Fatalf("memstore %q: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// mustRefuse runs memstore and requires exit status code with says in
// standard error.
func mustRefuse(t *testing.T, code int, says string, args ...string) {
	t.Helper()
	c, out, errOut := run(t, "", args...)
	if c != code || !strings.Contains(errOut, says) {
		t.Errorf("memstore %q: exit %d, %q %q; want exit %d saying %q", args, c, out, errOut, code, says)
	}
}

// TestAdminCommandsRemote runs keys, users and webhooks against a real
// server with its API key (--url), on SQLite and PostgreSQL: each command
// works as on the database file, within the key's workspace, and is
// refused another workspace's objects and a session token.
func TestAdminCommandsRemote(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			clearEnv(t)
			db := filepath.Join(t.TempDir(), "m.db")
			if backend == "postgres" {
				db = postgresDB(t, "pw")
			}
			s := startServer(t, "--db", db, "--webhook-allow-private")
			remote := func(args ...string) []string { return append(args, "--url", s.url, "--api-key", s.key) }
			local := func(args ...string) []string { return append(args, "--db", db) }

			// Another workspace, made on the database.
			var otherKey keyJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", local("keys", "create", "--workspace", "other", "--json")...)), &otherKey); err != nil {
				t.Fatal(err)
			}
			mustRun(t, "", local("users", "create", "--workspace", "other", "--name", "cy", "--link")...)
			var otherHook httpapi.WebhookEndpointJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", local("webhooks", "create", "--workspace", "other", "--webhook-allow-private",
				"--endpoint-url", "http://127.0.0.1:9/other", "--event", "memory_store.created", "--json")...)), &otherHook); err != nil {
				t.Fatal(err)
			}

			// keys
			var ci keyJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", remote("keys", "create", "--name", "ci", "--json")...)), &ci); err != nil ||
				!strings.HasPrefix(ci.Secret, "sk-memstore-") || ci.Name != "ci" || ci.WorkspaceID == otherKey.WorkspaceID {
				t.Fatalf("keys create: %+v, %v", ci, err)
			}
			if out := mustRun(t, "", "keys", "ls", "--url", s.url, "--api-key", ci.Secret); !strings.Contains(out, ci.ID) || strings.Contains(out, otherKey.ID) {
				t.Errorf("keys ls with the new key shows:\n%s", out)
			}
			var keys []keyJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", remote("keys", "ls", "--json")...)), &keys); err != nil || len(keys) != 2 {
				t.Errorf("keys ls --json: %+v, %v; want the first key and ci", keys, err)
			}
			mustRefuse(t, 1, "no API key", remote("keys", "revoke", "--yes", otherKey.ID)...)
			if out := mustRun(t, "", remote("keys", "revoke", "--yes", ci.ID)...); !strings.Contains(out, ci.ID+" ("+ci.Hint+")") || !strings.Contains(out, "revoked") {
				t.Errorf("keys revoke: %s", out)
			}
			mustRefuse(t, 1, "revoked", "keys", "ls", "--url", s.url, "--api-key", ci.Secret)
			var listed []keyJSON
			json.Unmarshal([]byte(mustRun(t, "", local("keys", "ls", "--workspace", "other", "--json")...)), &listed)
			if len(listed) != 1 || listed[0].RevokedAt != nil {
				t.Errorf("the other workspace's key after a refused revocation: %+v", listed)
			}

			// users
			if out := mustRun(t, "correct horse battery\n", remote("users", "create", "--name", "ann", "--role", "admin")...); !strings.Contains(out, `Created user "ann"`) ||
				strings.Contains(out, "correct horse") {
				t.Errorf("users create: %s", out)
			}
			var bo userJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", remote("users", "create", "--name", "bo", "--role", "auditor", "--link", "--json")...)), &bo); err != nil ||
				!strings.HasPrefix(bo.SignInLink, s.url+"/console/link?t=memstore-link-") || bo.SignInLinkExpiry == nil || bo.Role != "auditor" {
				t.Errorf("users create --link: %+v, %v", bo, err)
			}
			if names := userNames(t, mustRun(t, "", remote("users", "ls", "--json")...)); names != "ann bo" {
				t.Errorf("users ls: %q, want ann and bo alone", names)
			}
			mustRefuse(t, 1, "already exists", remote("users", "create", "--name", "ann")...)
			if out := mustRun(t, "another long password\n", remote("users", "passwd", "bo")...); !strings.Contains(out, "signed them out") {
				t.Errorf("users passwd: %s", out)
			}
			mustRefuse(t, 1, `no user "cy"`, remote("users", "rm", "--yes", "cy")...)
			mustRefuse(t, 1, `no user "cy"`, remote("users", "passwd", "cy")...)
			if out := mustRun(t, "", remote("users", "rm", "--yes", "bo")...); !strings.Contains(out, `Removed user "bo"`) {
				t.Errorf("users rm: %s", out)
			}
			// What the server made is on the database.
			if names := userNames(t, mustRun(t, "", local("users", "ls", "--json")...)); names != "ann" {
				t.Errorf("users ls on the database: %q, want ann alone", names)
			}

			// webhooks
			var hook httpapi.WebhookEndpointJSON
			if err := json.Unmarshal([]byte(mustRun(t, "", remote("webhooks", "create", "--endpoint-url", "http://127.0.0.1:9/in",
				"--event", "memory_store.created", "--name", "ops", "--json")...)), &hook); err != nil || !strings.HasPrefix(hook.SigningSecret, "whsec_") {
				t.Fatalf("webhooks create: %+v, %v", hook, err)
			}
			var got httpapi.WebhookEndpointJSON
			json.Unmarshal([]byte(mustRun(t, "", remote("webhooks", "update", hook.ID, "--name", "ops2", "--event", "memstore.memory.created", "--json")...)), &got)
			if got.Name != "ops2" || strings.Join(got.EnabledEvents, ",") != "memstore.memory.created" || got.URL != hook.URL || got.SigningSecret != "" {
				t.Errorf("webhooks update: %+v", got)
			}
			json.Unmarshal([]byte(mustRun(t, "", remote("webhooks", "disable", hook.ID, "--json")...)), &got)
			if got.State != "disabled" {
				t.Errorf("webhooks disable: %+v", got)
			}
			if out := mustRun(t, "", remote("webhooks", "enable", hook.ID)...); !strings.Contains(out, "Enabled webhook endpoint "+hook.ID) {
				t.Errorf("webhooks enable: %s", out)
			}
			if out := mustRun(t, "", remote("webhooks", "ls")...); !strings.Contains(out, hook.ID) || !strings.Contains(out, "enabled") || strings.Contains(out, otherHook.ID) {
				t.Errorf("webhooks ls:\n%s", out)
			}
			mustRun(t, "", remote("webhooks", "deliveries", hook.ID)...)
			for _, cmd := range [][]string{{"disable"}, {"enable"}, {"rm"}, {"deliveries"}} {
				mustRefuse(t, 1, otherHook.ID, remote(append(append([]string{"webhooks"}, cmd...), otherHook.ID)...)...)
			}
			mustRefuse(t, 1, otherHook.ID, remote("webhooks", "update", otherHook.ID, "--name", "x")...)
			mustRefuse(t, 2, "--webhook-allow-private goes with --db", remote("webhooks", "ls", "--webhook-allow-private")...)
			mustRefuse(t, 2, "--endpoint-url", "webhooks", "create", "--url", "https://example.com/hooks", "--event", "memory_store.created")
			mustRefuse(t, 2, "say what to change", remote("webhooks", "update", hook.ID)...)
			if out := mustRun(t, "", remote("webhooks", "rm", "--yes", hook.ID)...); !strings.Contains(out, "Removed webhook endpoint "+hook.ID) {
				t.Errorf("webhooks rm: %s", out)
			}

			// A session token manages nothing.
			a := s.api(t)
			store := a.createStore(t, "notes")
			var ses struct {
				Token string `json:"token"`
			}
			a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": store}}}, &ses)
			for _, cmd := range [][]string{{"keys", "ls"}, {"keys", "create"}, {"users", "ls"}, {"webhooks", "ls"}} {
				mustRefuse(t, 1, "session token cannot", append(cmd, "--url", s.url, "--api-key", ses.Token)...)
			}
			if strings.Contains(s.stderr.String(), ci.Secret) || strings.Contains(s.stderr.String(), hook.SigningSecret) {
				t.Errorf("the server's log holds a secret")
			}
		})
	}
}

// TestWebhooksUpdateLocal runs webhooks update, enable and disable on the
// database file.
func TestWebhooksUpdateLocal(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	mustRun(t, "", "keys", "create", "--db", db)
	var hook, got httpapi.WebhookEndpointJSON
	json.Unmarshal([]byte(mustRun(t, "", "webhooks", "create", "--db", db, "--endpoint-url", "https://example.com/a", "--event", "memory_store.created", "--json")), &hook)
	json.Unmarshal([]byte(mustRun(t, "", "webhooks", "update", "--db", db, hook.ID, "--endpoint-url", "https://example.com/b", "--description", "", "--json")), &got)
	if got.URL != "https://example.com/b" || got.Name != hook.Name || strings.Join(got.EnabledEvents, ",") != "memory_store.created" {
		t.Errorf("webhooks update: %+v", got)
	}
	mustRefuse(t, 1, "may not reach", "webhooks", "update", "--db", db, hook.ID, "--endpoint-url", "https://10.0.0.1/x")
	mustRefuse(t, 1, "not an event type", "webhooks", "update", "--db", db, hook.ID, "--event", "nope")
	mustRun(t, "", "webhooks", "disable", "--db", db, hook.ID)
	json.Unmarshal([]byte(mustRun(t, "", "webhooks", "enable", "--db", db, hook.ID, "--json")), &got)
	if got.State != "enabled" || got.URL != "https://example.com/b" {
		t.Errorf("webhooks enable: %+v", got)
	}
	mustRefuse(t, 2, "give the ID of one endpoint", "webhooks", "enable", "--db", db)
}

// userNames are the names of the users of 'users ls --json', in order.
func userNames(t *testing.T, out string) string {
	t.Helper()
	var us []userJSON
	if err := json.Unmarshal([]byte(out), &us); err != nil {
		t.Fatalf("users ls --json: %v\n%s", err, out)
	}
	var names []string
	for _, u := range us {
		names = append(names, u.Name)
	}
	return strings.Join(names, " ")
}

// TestWebhooksEnableRemote: an endpoint that memstore disabled after a
// delivery failed every attempt is enabled again with 'memstore webhooks
// enable --url', without its reason, and is sent the next events.
func TestWebhooksEnableRemote(t *testing.T) {
	clearEnv(t)
	rcv := newHookReceiver(t, func(n int) int {
		if n == 1 {
			return 500
		}
		return 204
	})
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db, "--webhook-allow-private", "--webhook-retry-min", "50ms", "--webhook-retry-max", "50ms", "--webhook-attempts", "1")
	remote := func(args ...string) []string { return append(args, "--url", s.url, "--api-key", s.key) }
	var hook httpapi.WebhookEndpointJSON
	if err := json.Unmarshal([]byte(mustRun(t, "", remote("webhooks", "create", "--endpoint-url", rcv.URL, "--event", "memory_store.created", "--json")...)), &hook); err != nil {
		t.Fatal(err)
	}
	a := s.api(t)
	a.createStore(t, "first")
	state := func() httpapi.WebhookEndpointJSON {
		var hooks []httpapi.WebhookEndpointJSON
		if err := json.Unmarshal([]byte(mustRun(t, "", remote("webhooks", "ls", "--json")...)), &hooks); err != nil || len(hooks) != 1 {
			t.Fatalf("webhooks ls: %+v, %v", hooks, err)
		}
		return hooks[0]
	}
	waitUntil(t, "the endpoint disabled after its failed delivery", func() bool { return state().State == "disabled" })
	if h := state(); !strings.Contains(h.DisabledReason, "HTTP 500") {
		t.Errorf("disabled for %q", h.DisabledReason)
	}
	mustRun(t, "", remote("webhooks", "enable", hook.ID)...)
	if h := state(); h.State != "enabled" || h.DisabledReason != "" {
		t.Errorf("after enable: %+v", h)
	}
	second := a.createStore(t, "second")
	waitUntil(t, "the next event delivered", func() bool {
		for _, q := range rcv.requests() {
			if strings.Contains(string(q.body), second) {
				return true
			}
		}
		return false
	})
}
