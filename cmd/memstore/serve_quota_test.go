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
	"time"

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
	t.Setenv("MEMSTORE_SEARCH_RATE_PER_CREDENTIAL", "1")
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

	// MEMSTORE_SEARCH_RATE_PER_CREDENTIAL=1: searches in quick succession are refused,
	// however slow the machine, within a few.
	for i := 0; ; i++ {
		status, h, data, err := a.send("GET", "/v1/memory_stores/"+store+"/memories/search?q=x", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK && i < 20 {
			continue
		}
		refused(status, data, http.StatusTooManyRequests, "--search-rate-per-credential", "a search beyond the rate")
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
		{[]string{"--search-rate-per-credential", "-3"}, nil, `invalid value "-3" for flag -search-rate-per-credential: must be a whole number, 0 or more`},
		{[]string{"--search-rate", "5"}, nil, `flag provided but not defined: -search-rate`},
		{nil, map[string]string{"MEMSTORE_SEARCH_RATE_PER_CREDENTIAL": "10/s"}, `memstore serve: MEMSTORE_SEARCH_RATE_PER_CREDENTIAL="10/s": must be a whole number, 0 or more`},
		// The shares of the server's pools, and the pools.
		{[]string{"--mcp-max-sessions-per-workspace", "-2"}, nil, `invalid value "-2" for flag -mcp-max-sessions-per-workspace: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE": "half"}, `memstore serve: MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE="half": must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_MCP_MAX_PER_SESSION": "-1"}, `memstore serve: MEMSTORE_MCP_MAX_PER_SESSION="-1": must be a whole number, 0 or more`},
		{[]string{"--feed-max-streams", "lots"}, nil, `invalid value "lots" for flag -feed-max-streams: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_FEED_MAX_STREAMS": "-1"}, `memstore serve: MEMSTORE_FEED_MAX_STREAMS="-1": must be a whole number, 0 or more`},
		{[]string{"--feed-max-streams-per-workspace", "1e3"}, nil, `invalid value "1e3" for flag -feed-max-streams-per-workspace: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_FEED_MAX_STREAMS_PER_CREDENTIAL": "x"}, `memstore serve: MEMSTORE_FEED_MAX_STREAMS_PER_CREDENTIAL="x": must be a whole number, 0 or more`},
		{[]string{"--webhook-max-deliveries", "-256"}, nil, `invalid value "-256" for flag -webhook-max-deliveries: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_WEBHOOK_MAX_DELIVERIES": "many"}, `memstore serve: MEMSTORE_WEBHOOK_MAX_DELIVERIES="many": must be a whole number, 0 or more`},
		{[]string{"--webhook-max-deliveries-per-workspace", "1.5"}, nil, `invalid value "1.5" for flag -webhook-max-deliveries-per-workspace: must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE": "-32"}, `memstore serve: MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE="-32": must be a whole number, 0 or more`},
		// The old names of shares are gone.
		{[]string{"--mcp-max-per-workspace", "8"}, nil, `flag provided but not defined: -mcp-max-per-workspace`},
		{[]string{"--feed-max-per-workspace", "8"}, nil, `flag provided but not defined: -feed-max-per-workspace`},
		{[]string{"--feed-max-per-credential", "8"}, nil, `flag provided but not defined: -feed-max-per-credential`},
		{nil, map[string]string{"MEMSTORE_SEARCH_RATE_PER_WORKSPACE": "fast"}, `memstore serve: MEMSTORE_SEARCH_RATE_PER_WORKSPACE="fast": must be a whole number, 0 or more`},
		{nil, map[string]string{"MEMSTORE_MAX_STORES_PER_WORKSPACE": "-1"}, `memstore serve: MEMSTORE_MAX_STORES_PER_WORKSPACE="-1": must be a whole number, 0 or more`},
	} {
		db := filepath.Join(t.TempDir(), "m.db")
		t.Setenv("MEMSTORE_DB", db)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		var stdout, stderr bytes.Buffer
		// A value taken for good starts a server: stop it rather than wait.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		code := Main(ctx, append([]string{"serve"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
		cancel()
		if code != 2 {
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

// TestServeHelpZero: serve --help says what 0 means for every cap: no
// limit for a share or a quota, the default for a pool.
func TestServeHelpZero(t *testing.T) {
	code, out, errOut := run(t, "", "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: %d %s", code, errOut)
	}
	usage := map[string]string{} // flag → its usage text
	var name string
	for _, line := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(line, "  --"); ok {
			name, _, _ = strings.Cut(f, " ")
		} else if name != "" {
			usage[name] += " " + strings.TrimSpace(line)
		}
	}
	for _, flag := range []string{
		"max-memories-per-store", "max-stores-per-workspace", "max-sessions-per-workspace", "max-tokens-per-session",
		"search-rate-per-credential", "search-rate-per-workspace",
		"mcp-max-per-session", "mcp-max-sessions-per-workspace",
		"feed-max-streams-per-workspace", "feed-max-streams-per-credential",
		"webhook-max-deliveries-per-workspace",
	} {
		if !strings.Contains(usage[flag], "0 for no limit") {
			t.Errorf("--%s: %q; want it to say 0 for no limit", flag, usage[flag])
		}
	}
	for _, flag := range []string{"mcp-max-sessions", "feed-max-streams", "webhook-max-deliveries"} {
		if !strings.Contains(usage[flag], "0 for the default") {
			t.Errorf("--%s: %q; want it to say 0 for the default", flag, usage[flag])
		}
	}
}
