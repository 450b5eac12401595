package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// adminEnv is a server with the administration routes, as memstore
// serve wires them.
func adminEnv(t *testing.T) *serverEnv {
	db := sqlitetest.Open(t, sqlite.Options{})
	return newServerEnvOn(t, db, func(c *httpapi.Config) {
		c.APIKeys, c.Users = memstore.NewKeys(memstore.NewCore(db)), memstore.NewUsers(db)
	})
}

// TestAdminRoutes checks the wire of the API key and user routes: their
// objects, a secret shown once and never logged, the refusals of a
// session token (403) and of another workspace's objects (404), and bad
// input (400), which changes nothing.
func TestAdminRoutes(t *testing.T) {
	e := adminEnv(t)
	k := e.ok(t, "POST", "/v1/memstore/api_keys", `{"name": "ci"}`)
	wantKeys(t, k, "type", "id", "workspace_id", "name", "hint", "created_at", "last_used_at", "revoked_at", "secret")
	secret, _ := k["secret"].(string)
	if k["type"] != "api_key" || k["workspace_id"] != e.workspace || !strings.HasPrefix(secret, memstore.APIKeyPrefix) || k["hint"] != memstore.SecretHint(secret) {
		t.Errorf("created %v", k)
	}
	id := k["id"].(string)
	got := e.ok(t, "GET", "/v1/memstore/api_keys/"+id, "")
	if _, shown := got["secret"]; shown || got["id"] != id {
		t.Errorf("GET a key: %v", got)
	}
	list := e.ok(t, "GET", "/v1/memstore/api_keys?limit=1", "")
	if data, _ := list["data"].([]any); len(data) != 1 || list["next_page"] == nil {
		t.Errorf("the first page of keys: %v", list)
	}
	e.call(t, "GET", "/v1/memstore/api_keys?limit=0", "").apiError(t, http.StatusBadRequest, "invalid_request_error")
	e.call(t, "GET", "/v1/memstore/api_keys?page=nope%00", "").apiError(t, http.StatusBadRequest, "invalid_request_error")
	e.call(t, "POST", "/v1/memstore/api_keys", `{"name": 3}`).apiError(t, http.StatusBadRequest, "invalid_request_error")

	u := e.ok(t, "POST", "/v1/memstore/users", `{"name": "ann", "role": "admin", "password": "correct horse battery"}`)
	wantKeys(t, u, "type", "id", "workspace_id", "name", "role", "has_password", "created_at", "updated_at")
	if u["type"] != "user" || u["has_password"] != true || u["role"] != "admin" {
		t.Errorf("created %v", u)
	}
	e.call(t, "POST", "/v1/memstore/users", `{"name": "bo", "role": "owner"}`).apiError(t, http.StatusBadRequest, "invalid_request_error")
	e.call(t, "POST", "/v1/memstore/users/ann/password", `{}`).apiError(t, http.StatusBadRequest, "invalid_request_error")
	e.call(t, "POST", "/v1/memstore/users/ann/password", `{"password": "short"}`).apiError(t, http.StatusBadRequest, "invalid_request_error")
	link := e.ok(t, "POST", "/v1/memstore/users/ann/sign_in_link", "")
	wantKeys(t, link, "type", "user_id", "secret", "expires_at")
	if link["type"] != "sign_in_link" || link["user_id"] != u["id"] || !strings.HasPrefix(link["secret"].(string), memstore.SignInLinkPrefix) {
		t.Errorf("sign-in link %v", link)
	}

	// Another workspace's key and user are not found.
	other := e.otherKey(t, "two")
	otherKey := e.ok(t, "POST", "/v1/memstore/api_keys", `{}`, withHeader("X-Api-Key", other))["id"].(string)
	e.ok(t, "POST", "/v1/memstore/users", `{"name": "cy", "role": "member"}`, withHeader("X-Api-Key", other))
	for _, r := range [][2]string{
		{"GET", "/v1/memstore/api_keys/" + otherKey}, {"POST", "/v1/memstore/api_keys/" + otherKey + "/revoke"},
		{"GET", "/v1/memstore/users/cy"}, {"DELETE", "/v1/memstore/users/cy"}, {"POST", "/v1/memstore/users/cy/sign_in_link"},
	} {
		e.call(t, r[0], r[1], "").apiError(t, http.StatusNotFound, "not_found_error")
	}
	if k := e.ok(t, "GET", "/v1/memstore/api_keys/"+otherKey, "", withHeader("X-Api-Key", other)); k["revoked_at"] != nil {
		t.Errorf("another workspace's key was revoked: %v", k)
	}

	// A session token is refused every route.
	store := e.createStore(t, "notes")
	token := e.ok(t, "POST", "/v1/sessions", jsonOf(t, map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": store}}}))["token"].(string)
	for _, r := range [][3]string{
		{"POST", "/v1/memstore/api_keys", `{}`}, {"GET", "/v1/memstore/api_keys", ""}, {"GET", "/v1/memstore/api_keys/" + id, ""},
		{"POST", "/v1/memstore/api_keys/" + id + "/revoke", ""}, {"POST", "/v1/memstore/users", `{"name": "dee", "role": "admin"}`},
		{"GET", "/v1/memstore/users", ""}, {"GET", "/v1/memstore/users/ann", ""}, {"DELETE", "/v1/memstore/users/ann", ""},
		{"POST", "/v1/memstore/users/ann/password", `{"password": "another long password"}`}, {"POST", "/v1/memstore/users/ann/sign_in_link", ""},
	} {
		e.call(t, r[0], r[1], r[2], withHeader("X-Api-Key", token)).apiError(t, http.StatusForbidden, "permission_error")
	}
	if k := e.ok(t, "GET", "/v1/memstore/api_keys/"+id, ""); k["revoked_at"] != nil {
		t.Errorf("a session token revoked a key: %v", k)
	}

	// The hosted API's organization routes are not memstore's.
	e.call(t, "GET", "/v1/organizations/api_keys", "").apiError(t, http.StatusNotFound, "not_found_error")
	e.call(t, "GET", "/v1/organizations/users", "").apiError(t, http.StatusNotFound, "not_found_error")

	revoked := e.ok(t, "POST", "/v1/memstore/api_keys/"+id+"/revoke", "")
	if revoked["revoked_at"] == nil {
		t.Errorf("revoked %v", revoked)
	}
	e.call(t, "GET", "/v1/memstore/api_keys", "", withHeader("X-Api-Key", secret)).apiError(t, http.StatusUnauthorized, "authentication_error")
	if d := e.ok(t, "DELETE", "/v1/memstore/users/ann", ""); d["type"] != "user_deleted" || d["id"] != u["id"] {
		t.Errorf("deleted %v", d)
	}
	for _, s := range []string{secret, link["secret"].(string), "correct horse battery"} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the log holds the secret %q", s)
		}
	}
}
