package yardstick

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/loadgen"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// engines are every engine.
var engines = []string{EngineSQLite, EnginePostgres, EngineMap}

// start serves a yardstick of engine over a fresh database, and returns
// its URL and the database's path or URL.
func start(t *testing.T, engine string) (string, string, *Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "yardstick.db")
	if engine == EnginePostgres {
		path = pgtest.DB(t, func(context.Context, string) error { return nil })
	}
	s, err := New(t.Context(), engine, path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return srv.URL, path, s
}

// TestEveryMix runs every mix of memstore bench but search against every
// engine: no request fails, and the throwaway store is gone at the end.
func TestEveryMix(t *testing.T) {
	for _, engine := range engines {
		url, path, s := start(t, engine)
		for _, mix := range loadgen.Mixes {
			if mix == loadgen.MixSearch {
				continue
			}
			t.Run(engine+"/"+mix, func(t *testing.T) {
				r, err := loadgen.Run(t.Context(), loadgen.Config{
					URL: url, APIKey: "any key", Concurrency: 3, Duration: 300 * time.Millisecond,
					Mix: mix, Memories: 150, ContentBytes: 100,
				})
				if err != nil {
					t.Fatal(err)
				}
				if r.Total.Requests == 0 || len(r.Total.Errors) > 0 {
					t.Fatalf("%d requests, errors %v", r.Total.Requests, r.Total.Errors)
				}
				if mix == loadgen.MixList && r.Total.Requests < 3 {
					t.Errorf("%d list requests: the walk of 150 memories by pages of 100 did not go on", r.Total.Requests)
				}
				if n := left(t, engine, path, s); n != 0 {
					t.Errorf("%d rows left behind", n)
				}
			})
		}
	}
}

// left counts the stores and memories left in the yardstick.
func left(t *testing.T, engine, path string, s *Server) int {
	if engine == EngineMap {
		e := s.e.(*mapEngine)
		e.mu.RLock()
		defer e.mu.RUnlock()
		return len(e.stores)
	}
	const count = `SELECT (SELECT count(*) FROM stores) + (SELECT count(*) FROM memories) + (SELECT count(*) FROM versions)`
	var n int
	if engine == EnginePostgres {
		if err := s.e.(*pgEngine).pool.QueryRow(t.Context(), count).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(count).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchRefused: the search mix fails at once, saying why.
func TestSearchRefused(t *testing.T) {
	url, _, _ := start(t, EngineMap)
	_, err := loadgen.Run(t.Context(), loadgen.Config{URL: url, APIKey: "k", Concurrency: 1, Duration: time.Second, Mix: loadgen.MixSearch, Memories: 1})
	if err == nil || !strings.Contains(err.Error(), "HTTP 501") || !strings.Contains(err.Error(), "does not search") {
		t.Fatalf("search mix: %v", err)
	}
}

// TestSameShapes sends the requests of the mixes to memstore and to every
// engine and compares the answers' statuses, fields and types.
func TestSameShapes(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	w := sqlitetest.Workspace(t, db, memstore.DefaultWorkspace)
	_, key := sqlitetest.APIKey(t, db, w.ID, "bench")
	core := memstore.NewCore(db)
	ms := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Search: core}))
	t.Cleanup(ms.Close)
	want := session(t, ms.URL, key)
	for _, engine := range engines {
		url, _, _ := start(t, engine)
		got := session(t, url, "any")
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: answer %d is\n%s\nmemstore's is\n%s", engine, i, got[i], want[i])
			}
		}
	}
}

// session makes the requests of the mixes, and some refused ones, and
// returns each answer's status and shape.
func session(t *testing.T, base, key string) []string {
	var out []string
	do := func(method, path string, body any) map[string]any {
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		httpapi.SetHeaders(req.Header, key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
		out = append(out, method+" "+res.Status+" "+shape(v))
		return v
	}
	st := do("POST", "/v1/memory_stores", map[string]any{"name": "shapes"})
	base2 := "/v1/memory_stores/" + st["id"].(string) + "/memories"
	m := do("POST", base2, map[string]any{"path": "/a/b.md", "content": "one"})
	do("POST", base2, map[string]any{"path": "/a/c.md", "content": "two"})
	do("POST", base2, map[string]any{"path": "/a/b.md", "content": "taken"})
	id := m["id"].(string)
	do("POST", base2+"/"+id, map[string]any{"content": "three"})
	do("GET", base2+"/"+id, nil)
	page := do("GET", base2+"?limit=1", nil)
	do("GET", base2+"?limit=1&page="+page["next_page"].(string), nil)
	do("DELETE", base2+"/"+id, nil)
	do("GET", base2+"/"+id, nil)
	do("DELETE", "/v1/memory_stores/"+st["id"].(string), nil)
	return out
}

// shape is v's keys and the types of their values, with the values of
// the "type" fields, the one field whose value is part of the shape.
func shape(v any) string {
	switch v := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s, ok := v[k].(string); ok && k == "type" {
				parts = append(parts, "type="+s)
				continue
			}
			if k == "message" || k == "request_id" {
				continue // the words differ
			}
			parts = append(parts, k+":"+shape(v[k]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shape(v[0]) + "]"
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "?"
}
