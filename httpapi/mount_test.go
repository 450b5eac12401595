package httpapi_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestMount serves a handler of another package at /extra: its requests
// are logged and counted like the API's, its bodies are capped at the
// server's limit, and it may stream.
func TestMount(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	logs := new(syncbuf.Buffer)
	core := memstore.NewCore(db)
	s := httpapi.New(httpapi.Config{
		Stores: core, Memories: core, Versions: core, Keys: core, MaxBodyBytes: 10,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	s.Mount("/extra", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusAccepted)
		w.Write(b)
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
	}))
	srv := httptest.NewServer(s)
	defer srv.Close()

	post := func(body string) (int, string) {
		t.Helper()
		res, err := http.Post(srv.URL+"/extra", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := post("hello"); status != http.StatusAccepted || body != "hello" {
		t.Errorf("a small body: %d %q", status, body)
	}
	if status, body := post(strings.Repeat("x", 11)); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the cap of 10 bytes: %d %q; want 413", status, body)
	}

	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`memstore_http_requests_total{method="POST",route="/extra",status="202"} 1`,
		`memstore_http_requests_total{method="POST",route="/extra",status="413"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if want := `"route":"/extra","status":202`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %s:\n%s", want, logs)
	}
}
