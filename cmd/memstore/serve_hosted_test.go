package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// TestServeContentRules: serve refuses, by default, content that holds a
// credential and a /MEMORY.md beyond the prompt-index cap, in the hosted
// API's words; --refuse-credentials=false and
// MEMSTORE_REFUSE_OVERSIZED_INDEX=false let each through.
func TestServeContentRules(t *testing.T) {
	key := "token: ghp_" + strings.Repeat("A1b2C3", 6) // assembled, so that this file leaks none
	index := strings.Repeat("- [Topic](topic.md) — when it matters\n", 201)
	write := func(a *api, store, path, content string) (int, httpapi.ErrorJSON) {
		t.Helper()
		status, data, err := a.call("POST", "/v1/memory_stores/"+store+"/memories", map[string]string{"path": path, "content": content}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var env httpapi.ErrorJSON
		if status != http.StatusOK {
			if err := json.Unmarshal(data, &env); err != nil {
				t.Fatalf("%d %s", status, data)
			}
		}
		return status, env
	}

	a := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db")).api(t)
	store := a.createStore(t, "team")
	for _, tc := range []struct{ path, content, message string }{
		{"/k.md", key, "memory content appears to contain a credential or API key; remove it before writing. If the credential is real, rotate it."},
		{"/MEMORY.md", index, "MEMORY.md content exceeds the prompt-index cap"},
	} {
		status, env := write(a, store, tc.path, tc.content)
		if status != http.StatusBadRequest || env.Error.Message != tc.message {
			t.Errorf("%s by default: %d %+v; want 400 %q", tc.path, status, env.Error, tc.message)
		}
	}

	t.Setenv("MEMSTORE_REFUSE_OVERSIZED_INDEX", "false")
	a = startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"), "--refuse-credentials=false").api(t)
	store = a.createStore(t, "team")
	for _, tc := range []struct{ path, content string }{{"/k.md", key}, {"/MEMORY.md", index}} {
		if status, env := write(a, store, tc.path, tc.content); status != http.StatusOK {
			t.Errorf("%s with the rules off: %d %+v", tc.path, status, env.Error)
		}
	}
}
