package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/storetest"
)

func (b clients) ExportMemories(ctx context.Context, c *memstore.Caller, storeID string, content bool, sink memstore.ExportSink) error {
	return b.client(c).ExportMemories(ctx, c, storeID, content, sink)
}

// exportGet sends GET .../memories/export with query, as the hosted
// API's clients do: Claude Code authenticates with a bearer token and
// sends neither anthropic-version nor anthropic-beta.
func exportGet(t *testing.T, h *apiHarness, bearer, storeID, query string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.URL+"/v1/memory_stores/"+storeID+"/memories/export"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// exportLines splits an export's body into its lines, each a JSON
// object, failing on anything else.
func exportLines(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n")) {
		t.Errorf("the export does not end with a newline")
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d of the export is not a JSON object: %v", len(lines)+1, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func keysOf(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestExportLines: the lines of both views are exactly those Claude
// Code parses: a store line first (view basic or full), one memory line
// per live memory with exactly its view's fields, in path order, and a
// complete line last that counts them; the route is counted in the
// metrics; what is refused is refused before the first line, as the
// API's JSON error.
func TestExportLines(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		reg := prometheus.NewRegistry()
		h := newAPIHarness(t, harnessOptions{backend: backend, configure: func(c *httpapi.Config) { c.Registry = reg }})
		ctx := t.Context()
		_, _, secret := h.newKey(t, "export")
		cl := h.client(secret)
		st, err := cl.CreateStore(ctx, nil, memstore.StoreCreate{Name: "team"})
		if err != nil {
			t.Fatal(err)
		}
		contents := map[string]string{"/b/two.md": "two \"quoted\"\nline", "/a.md": "", "/c.md": strings.Repeat("é", 1000)}
		ids := map[string]string{}
		for _, p := range []string{"/c.md", "/a.md", "/b/two.md", "/deleted.md"} {
			m, err := cl.CreateMemory(ctx, nil, st.ID, memstore.MemoryCreate{Path: p, Content: contents[p]})
			if err != nil {
				t.Fatal(err)
			}
			ids[p] = m.ID
		}
		if err := cl.DeleteMemory(ctx, nil, st.ID, ids["/deleted.md"], ""); err != nil {
			t.Fatal(err)
		}
		paths := []string{"/a.md", "/b/two.md", "/c.md"}

		for _, view := range []string{"full", "basic"} {
			query := "?view=" + view
			if view == "full" {
				query = "" // the default
			}
			res, body := exportGet(t, h, secret, st.ID, query)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("%s view: %d %q: %s", view, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			lines := exportLines(t, body)
			if len(lines) != len(paths)+2 {
				t.Fatalf("%s view: %d lines, want the store, %d memories and the end", view, len(lines), len(paths))
			}
			if s := lines[0]; s["type"] != "store" || s["view"] != view || s["id"] != st.ID || s["name"] != "team" {
				t.Errorf("%s view: first line %v, want the store line", view, s)
			}
			want := []string{"content", "content_sha256", "id", "path", "type", "updated_at"}
			if view == "basic" {
				want = []string{"content_sha256", "content_size_bytes", "id", "path", "type"}
			}
			for i, p := range paths {
				l := lines[i+1]
				if got := keysOf(l); !slices.Equal(got, want) {
					t.Errorf("%s view: memory line %v has fields %v, want exactly %v", view, l, got, want)
				}
				sum := memstore.ContentSHA256(contents[p])
				if l["type"] != "memory" || l["id"] != ids[p] || l["path"] != p || l["content_sha256"] != sum {
					t.Errorf("%s view: line %d is %v, want memory %s at %s", view, i+1, l, ids[p], p)
				}
				if view == "full" && l["content"] != contents[p] {
					t.Errorf("full view: %s has content %q, want %q", p, l["content"], contents[p])
				}
				if view == "basic" && l["content_size_bytes"] != float64(len(contents[p])) {
					t.Errorf("basic view: %s has content_size_bytes %v, want %d", p, l["content_size_bytes"], len(contents[p]))
				}
			}
			end := lines[len(lines)-1]
			if got := keysOf(end); end["type"] != "complete" || end["memory_count"] != float64(len(paths)) || end["error_count"] != float64(0) ||
				!slices.Equal(got, []string{"error_count", "memory_count", "type"}) {
				t.Errorf("%s view: last line %v, want {type: complete, memory_count: %d, error_count: 0}", view, end, len(paths))
			}
		}

		// Refusals come before the stream, as JSON errors.
		_, _, other := h.newKey(t, "other")
		for _, tc := range []struct {
			name, secret, store, query string
			status                     int
			errType                    string
		}{
			{"unknown view", secret, st.ID, "?view=everything", 400, memstore.EInvalid},
			{"unknown store", secret, "memstore_nosuchstore", "", 404, memstore.ENotFound},
			{"another workspace's store", other, st.ID, "", 404, memstore.ENotFound},
			{"no credential", "", st.ID, "", 401, memstore.EUnauthenticated},
		} {
			res, body := exportGet(t, h, tc.secret, tc.store, tc.query)
			var env httpapi.ErrorJSON
			if res.StatusCode != tc.status || res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &env) != nil || env.Error.Type != tc.errType {
				t.Errorf("%s: %d %q %s, want %d %s", tc.name, res.StatusCode, res.Header.Get("Content-Type"), body, tc.status, tc.errType)
			}
		}

		mres, err := h.srv.Client().Get(h.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(mres.Body)
		mres.Body.Close()
		for _, want := range []string{
			`memstore_http_requests_total{method="GET",route="GET /v1/memory_stores/{memory_store_id}/memories/export",status="200"} 2`,
			`memstore_http_requests_total{method="GET",route="GET /v1/memory_stores/{memory_store_id}/memories/export",status="404"} 2`,
		} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("the metrics lack %s", want)
			}
		}
	})
}

// TestExportSessionTokens: a session token exports the stores attached
// to its session, read-only ones included, with a bearer token and no
// version header, as Claude Code does; a store not attached is refused.
func TestExportSessionTokens(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		h := newAPIHarness(t, harnessOptions{backend: backend})
		ctx := t.Context()
		_, _, secret := h.newKey(t, "sessions")
		cl := h.client(secret)
		var stores []string
		for _, name := range []string{"rw", "ro", "unattached"} {
			st, err := cl.CreateStore(ctx, nil, memstore.StoreCreate{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.CreateMemory(ctx, nil, st.ID, memstore.MemoryCreate{Path: "/note.md", Content: name}); err != nil {
				t.Fatal(err)
			}
			stores = append(stores, st.ID)
		}
		_, _, token, err := cl.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
			{StoreID: stores[0]}, {StoreID: stores[1], Access: memstore.AccessReadOnly},
		}})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{200, 200, 403} {
			res, body := exportGet(t, h, token, stores[i], "?view=basic")
			if res.StatusCode != want {
				t.Errorf("store %d: %d %s, want %d", i, res.StatusCode, body, want)
				continue
			}
			if want == 200 {
				if lines := exportLines(t, body); len(lines) != 3 || lines[2]["memory_count"] != float64(1) {
					t.Errorf("store %d: %v, want the store, its memory and the end", i, lines)
				}
			}
		}
	})
}

// TestExportHeapOverHTTP: a store of 20,000 memories streams from the
// server to the client holding a little at a time on both sides (they
// share this process's heap).
func TestExportHeapOverHTTP(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		h := newAPIHarness(t, harnessOptions{backend: backend})
		ws, storeID := storetest.FillLargeStore(t, h.DB)
		_, secret := h.newAPIKey(t, ws, "export")
		storetest.ExportHeapGrowth(t, h.client(secret), nil, storeID)
	})
}

// TestExportClientReadsStrictly: the client takes an export only whole:
// it fails one without its complete line, with a line after it, with
// counts that do not match, or with a memory line missing a field of its
// view; it reads a memory the server could not serve (memory_error) on
// its own, and skips lines of types it does not know.
func TestExportClientReadsStrictly(t *testing.T) {
	const store = "memstore_strict"
	mem := `{"type":"memory","id":"mem_a","path":"/a.md","content":"a","content_sha256":"ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb","updated_at":"2026-01-02T03:04:05Z"}`
	head := `{"type":"store","view":"full","id":"` + store + `","name":"s"}`
	for _, tc := range []struct {
		name, body, wantErr string
		memories            int
	}{
		{"whole", head + "\n" + mem + "\n" + `{"type":"complete","memory_count":1,"error_count":0}` + "\n", "", 1},
		{"unknown line types skipped", head + "\n" + `{"type":"progress","n":1}` + "\n" + mem + "\n" + `{"type":"complete","memory_count":1,"error_count":0}` + "\n", "", 1},
		{"no store line in the full view", mem + "\n" + `{"type":"complete","memory_count":1,"error_count":0}` + "\n", "", 1},
		{"memory_error read on its own", head + "\n" + `{"type":"memory_error","id":"mem_b","path":"/b.md"}` + "\n" + `{"type":"complete","memory_count":0,"error_count":1}` + "\n", "", 1},
		{"no complete line", head + "\n" + mem + "\n", "before its complete line", 1},
		{"a line after complete", head + "\n" + `{"type":"complete","memory_count":0,"error_count":0}` + "\n" + mem + "\n", "after its complete line", 0},
		{"a wrong count", head + "\n" + mem + "\n" + `{"type":"complete","memory_count":2,"error_count":0}` + "\n", "does not count", 1},
		{"a memory line without content", head + "\n" + `{"type":"memory","id":"mem_a","path":"/a.md","content_sha256":"x","updated_at":"2026-01-02T03:04:05Z"}` + "\n", "without its content", 0},
		{"not JSON", head + "\n" + "{oops\n", "not JSON", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/memories/mem_b") {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"type":"memory","id":"mem_b","memory_store_id":"`+store+`","path":"/b.md","content":"b","content_sha256":"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d","content_size_bytes":1,"memory_version_id":"memver_b","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}`)
					return
				}
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, tc.body)
			})
			cl := httpapi.NewClient(srv, "sk-test")
			var got []*memstore.Memory
			err := cl.ExportMemories(t.Context(), nil, store, true, memstore.ExportFunc(func(m *memstore.Memory) error {
				got = append(got, m)
				return nil
			}))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("%v, want success", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("%v, want an error saying %q", err, tc.wantErr)
			}
			if len(got) != tc.memories {
				t.Errorf("%d memories taken, want %d", len(got), tc.memories)
			}
			if tc.name == "memory_error read on its own" && len(got) == 1 && got[0].Content != "b" {
				t.Errorf("the memory read on its own: %+v", got[0])
			}
		})
	}
}

// httptestServer serves h for the test and returns its URL.
func httptestServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestExportLetsGo: an export in progress over a store of 20 MB (more
// than the socket buffers of both ends hold) lets go of its snapshot and
// its place when its session token is revoked (the stream ends without
// its complete line), and when its client stops reading (once a write
// cannot complete in time): the workspace's next export, which waits for
// that place, succeeds well before the export's two minutes are up.
func TestExportLetsGo(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	ctx := t.Context()
	_, _, secret := h.newKey(t, "let-go")
	cl := h.client(secret)
	st, err := cl.CreateStore(ctx, nil, memstore.StoreCreate{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("x", memstore.MaxContentBytes)
	for i := range 200 {
		if _, err := cl.CreateMemory(ctx, nil, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/big/%03d.md", i), Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	// nextExport waits until the workspace's next export succeeds.
	nextExport := func(t *testing.T, start time.Time) {
		t.Helper()
		for {
			err := cl.ExportMemories(ctx, nil, st.ID, false, memstore.ExportFunc(func(*memstore.Memory) error { return nil }))
			if err == nil {
				return
			}
			if memstore.ErrorCode(err) != memstore.ERateLimited {
				t.Fatalf("the next export: %v", err)
			}
			if time.Since(start) > 100*time.Second {
				t.Fatalf("the first export still holds its place after %v", time.Since(start))
			}
		}
	}

	t.Run("revoked token", func(t *testing.T) {
		_, tok, token, err := cl.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+"/v1/memory_stores/"+st.ID+"/memories/export", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		br := bufio.NewReaderSize(res.Body, 1<<20)
		if first, err := br.ReadString('\n'); err != nil || !strings.Contains(first, `"type":"store"`) {
			t.Fatalf("first line %q, %v", first, err)
		}
		if _, err := cl.RevokeSessionToken(ctx, nil, tok.ID); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Fatalf("the rest of the stream: %v", err)
		}
		if n := bytes.Count(rest, []byte("\n")); bytes.Contains(rest, []byte(`"type":"complete"`)) || n >= 200 {
			t.Fatalf("the export went on to the end (%d more lines) after its token was revoked", n)
		}
		nextExport(t, start)
	})

	t.Run("stalled reader", func(t *testing.T) {
		u, _ := url.Parse(h.URL)
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /v1/memory_stores/%s/memories/export HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\n\r\n", st.ID, u.Host, secret)
		start := time.Now()
		time.Sleep(time.Second) // the stalled export has its place
		nextExport(t, start)
		t.Logf("the stalled export was let go within %v", time.Since(start).Round(time.Second))
	})
}

// TestExportWithoutTheStream: against a server without the export route
// (here memstore behind a proxy that answers 404 for it), the client
// lists the store page by page instead, content included when asked;
// a store the server does not have is still its not_found_error.
func TestExportWithoutTheStream(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	ctx := t.Context()
	_, _, secret := h.newKey(t, "no-stream")
	st, err := h.client(secret).CreateStore(ctx, nil, memstore.StoreCreate{Name: "listed"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 45 { // more than two pages of the full view
		p, c := fmt.Sprintf("/n/%02d.md", i), fmt.Sprintf("note %d\n", i)
		if _, err := h.client(secret).CreateMemory(ctx, nil, st.ID, memstore.MemoryCreate{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
		want[p] = c
	}
	target, _ := url.Parse(h.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	exports := 0
	cl := httpapi.NewClient(httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/memories/export") {
			exports++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"no such endpoint"}}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}), secret)
	for _, content := range []bool{true, false} {
		var store *memstore.Store
		got := map[string]string{}
		err := cl.ExportMemories(ctx, nil, st.ID, content, exportSink{
			store:  func(s *memstore.Store) error { store = s; return nil },
			memory: func(m *memstore.Memory) error { got[m.Path] = m.Content; return nil },
		})
		if err != nil {
			t.Fatalf("export (content %v): %v", content, err)
		}
		if store == nil || store.Name != "listed" {
			t.Errorf("content %v: the store handed over: %+v", content, store)
		}
		if len(got) != len(want) {
			t.Errorf("content %v: %d memories, want %d", content, len(got), len(want))
		}
		for p, c := range want {
			if g, ok := got[p]; !ok || content && g != c || !content && g != "" {
				t.Errorf("content %v: %s is %q (listed %v)", content, p, g, ok)
			}
		}
	}
	err = cl.ExportMemories(ctx, nil, "memstore_01nosuchstore0000000000000", true, memstore.ExportFunc(func(*memstore.Memory) error { return nil }))
	if memstore.ErrorCode(err) != memstore.ENotFound || !strings.Contains(err.Error(), "memory store") {
		t.Errorf("export of a missing store: %v; want the store's not_found_error", err)
	}
	if exports != 3 {
		t.Errorf("%d export requests, want 3 (one an export)", exports)
	}
}

// exportSink hands the store and the memories to functions.
type exportSink struct {
	store  func(*memstore.Store) error
	memory func(*memstore.Memory) error
}

func (s exportSink) Store(st *memstore.Store) error  { return s.store(st) }
func (s exportSink) Memory(m *memstore.Memory) error { return s.memory(m) }
