package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// TestServeQuotaDefaults: without flags, serve holds workspaces,
// sessions and credentials to the documented default limits.
func TestServeQuotaDefaults(t *testing.T) {
	c, err := parseServeConfig(env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.limits(); got != memstore.DefaultLimits() {
		t.Errorf("default limits %+v, want %+v", got, memstore.DefaultLimits())
	}
}

// TestServeQuotas: the quota flags, and their variables, reach a real
// server, whose refusals name the flag to raise.
func TestServeQuotas(t *testing.T) {
	t.Setenv("MEMSTORE_SEARCH_RATE", "1")
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"),
		"--max-stores-per-workspace", "1", "--max-sessions-per-workspace", "1", "--max-tokens-per-session", "1")
	a := s.api(t)
	store := a.createStore(t, "only")
	refused := func(status int, data []byte, wantStatus int, flag, what string) {
		t.Helper()
		var env httpapi.ErrorJSON
		if err := json.Unmarshal(data, &env); err != nil || status != wantStatus || !strings.Contains(env.Error.Message, "memstore serve "+flag) {
			t.Errorf("%s: %d %s; want %d naming %s", what, status, data, wantStatus, flag)
		}
	}
	name := "second"
	status, data, err := a.call("POST", "/v1/memory_stores", httpapi.StoreCreateRequest{Name: &name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused(status, data, http.StatusBadRequest, "--max-stores-per-workspace", "a second store")

	body := map[string]any{"resources": []map[string]any{{"type": "memory_store", "memory_store_id": store}}}
	var sess struct{ ID string }
	a.must(t, "POST", "/v1/sessions", body, &sess)
	status, data, err = a.call("POST", "/v1/sessions", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused(status, data, http.StatusBadRequest, "--max-sessions-per-workspace", "a second session")
	// The session's first token is its one.
	status, data, err = a.call("POST", "/v1/sessions/"+sess.ID+"/tokens", map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused(status, data, http.StatusBadRequest, "--max-tokens-per-session", "a second token")

	// MEMSTORE_SEARCH_RATE=1: searches in quick succession are refused,
	// however slow the machine, within a few.
	for i := 0; ; i++ {
		status, h, data, err := a.send("GET", "/v1/memory_stores/"+store+"/memories/search?q=x", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK && i < 20 {
			continue
		}
		refused(status, data, http.StatusTooManyRequests, "--search-rate", "a search beyond the rate")
		if h.Get("Retry-After") != "1" {
			t.Errorf("a search beyond the rate: Retry-After %q, want 1", h.Get("Retry-After"))
		}
		break
	}
}

// TestServeQuotaFlagErrors: a bad quota, from a flag or its variable, is
// a usage error naming where it came from, before anything is created.
func TestServeQuotaFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--max-stores-per-workspace", "-1"}, nil, `invalid value "-1" for flag -max-stores-per-workspace: must be a whole number, 0 or more`},
		{[]string{"--max-sessions-per-workspace", "many"}, nil, `invalid value "many" for flag -max-sessions-per-workspace: must be a whole number, 0 or more`},
		{[]string{"--max-tokens-per-session", "1.5"}, nil, `invalid value "1.5" for flag -max-tokens-per-session: must be a whole number, 0 or more`},
		{[]string{"--search-rate", "-3"}, nil, `invalid value "-3" for flag -search-rate: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_SEARCH_RATE_PER_WORKSPACE": "fast"}, `memstore serve: MEMSTORE_SEARCH_RATE_PER_WORKSPACE="fast": must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_MAX_STORES_PER_WORKSPACE": "-1"}, `memstore serve: MEMSTORE_MAX_STORES_PER_WORKSPACE="-1": must be a whole number, 0 or more`},
	} {
		db := filepath.Join(t.TempDir(), "m.db")
		t.Setenv("MEMSTORE_DB", db)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), append([]string{"serve"}, tt.args...), strings.NewReader(""), &stdout, &stderr); code != 2 {
			t.Errorf("%v %v: exit status %d; want 2", tt.args, tt.env, code)
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v %v: stderr:\n%s\nwant it to contain %q", tt.args, tt.env, stderr.String(), tt.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("%v %v: the database was created (%v)", tt.args, tt.env, err)
		}
		for k := range tt.env {
			os.Unsetenv(k)
		}
	}
}
