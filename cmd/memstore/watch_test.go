package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
)

// watchLines runs 'memstore watch' with args until cancelled, and
// returns a function that waits for its output to hold n lines.
func watchLines(t *testing.T, args ...string) (lines func(n int) []string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() { done <- Main(ctx, append([]string{"watch"}, args...), strings.NewReader(""), out, errOut) }()
	t.Cleanup(cancel)
	lines = func(n int) []string {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if got := strings.Split(strings.TrimSpace(out.String()), "\n"); len(got) >= n && got[0] != "" {
				return got
			}
			select {
			case code := <-done:
				t.Fatalf("memstore watch exited with %d: %s", code, errOut)
			default:
			}
		}
		t.Fatalf("memstore watch printed %q, want %d lines; stderr: %s", out, n, errOut)
		return nil
	}
	return lines, func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("memstore watch did not stop")
			return -1
		}
	}
}

// TestWatchJSONOnServer: 'memstore watch --json' against a server prints
// each change as it happens as one memory_store_event object per line,
// from now on, and ends cleanly when interrupted.
func TestWatchJSONOnServer(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	remote := []string{"--url", s.url, "--api-key", s.key}
	if code, _, stderr := run(t, "", append([]string{"stores", "create", "notes"}, remote...)...); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := run(t, "old", append([]string{"put", "/old.md"}, remote...)...); code != 0 {
		t.Fatal(stderr)
	}
	lines, stop := watchLines(t, append([]string{"--json"}, remote...)...)
	time.Sleep(300 * time.Millisecond) // the stream is open before the changes
	for _, step := range [][]string{{"put", "/a.md"}, {"mv", "/a.md", "/b.md"}, {"rm", "/b.md"}} {
		if code, _, stderr := run(t, "text", append(step, remote...)...); code != 0 {
			t.Fatalf("%v: %s", step, stderr)
		}
	}
	got := lines(3)
	want := []struct{ event, path string }{{"memory.created", "/a.md"}, {"memory.renamed", "/b.md"}, {"memory.deleted", "/b.md"}}
	for i, l := range got {
		var e httpapi.EventJSON
		if err := json.Unmarshal([]byte(l), &e); err != nil || i >= len(want) || e.Event != want[i].event || e.Path == nil || *e.Path != want[i].path ||
			e.Sequence != int64(i+2) || e.ID == "" || e.Type != "memory_store_event" {
			t.Errorf("line %d: %s (%v), want %+v as event %d", i, l, err, want[min(i, len(want)-1)], i+2)
		}
		if strings.Contains(l, "text") {
			t.Errorf("line %d holds content: %s", i, l)
		}
	}
	if code := stop(); code != 0 {
		t.Errorf("watch exited with %d when interrupted", code)
	}
}

// TestWatchDatabase: 'memstore watch --db' sees changes that another
// process makes to the database file, in text, and --from-start replays
// the feed.
func TestWatchDatabase(t *testing.T) {
	clearEnv(t)
	db := notesDatabase(t)
	if code, _, stderr := run(t, "one", "put", "--db", db, "/one.md"); code != 0 {
		t.Fatal(stderr)
	}
	lines, stop := watchLines(t, "--db", db, "--from-start")
	if got := lines(1); !strings.Contains(got[0], "  1  memory.created    /one.md  operator  ") {
		t.Errorf("the replay: %q", got)
	}
	if code, _, stderr := run(t, "two", "put", "--db", db, "/two.md"); code != 0 {
		t.Fatal(stderr)
	}
	if got := lines(2); !strings.Contains(got[1], "  2  memory.created    /two.md  operator  ") {
		t.Errorf("a change by another process: %q", got)
	}
	stop()
	if code, _, stderr := run(t, "", "watch", "--db", db, "--from-start", "--after", "x"); code != 2 || !strings.Contains(stderr, "not both") {
		t.Errorf("--from-start with --after: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "watch", "--db", db, "--after", "page_bogus"); code != 1 || !strings.Contains(stderr, "is not a cursor of the events of memory store") {
		t.Errorf("a bad cursor: %d %s", code, stderr)
	}
}

// TestServeShutdownEndsStreams: a server stops at once with an event
// stream open, instead of waiting its shutdown timeout for the stream,
// and the watch says it lost the stream and keeps trying.
func TestServeShutdownEndsStreams(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	remote := []string{"--url", s.url, "--api-key", s.key}
	if code, _, stderr := run(t, "", append([]string{"stores", "create", "notes"}, remote...)...); code != 0 {
		t.Fatal(stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errOut := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"watch"}, remote...), strings.NewReader(""), &syncbuf.Buffer{}, errOut)
	}()
	time.Sleep(500 * time.Millisecond) // the stream is open
	start := time.Now()
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exited with %d: %s", code, s.stderr)
	}
	if d := time.Since(start); d > shutdownTimeout/2 {
		t.Errorf("the server took %v to stop with a stream open", d)
	}
	waitUntil(t, "the watch to notice", func() bool { return strings.Contains(errOut.String(), "the event stream broke") })
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch exited with %d: %s", code, errOut)
	}
}

// TestWatchSessionToken: a session token watches its own store, and no
// other.
func TestWatchSessionToken(t *testing.T) {
	clearEnv(t)
	t.Setenv("MEMSTORE_TOKEN", "")
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	admin := httpapi.NewClient(s.url, s.key)
	ctx := t.Context()
	mine, err := admin.CreateStore(ctx, nil, memstore.StoreCreate{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := admin.CreateStore(ctx, nil, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, token, err := admin.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: mine.ID, Access: memstore.AccessReadOnly}}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "watch", "--url", s.url, "--token", token); code != 2 || !strings.Contains(stderr, "name one of the session's stores with --store") {
		t.Errorf("a token without --store: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "watch", "--url", s.url, "--token", token, "--store", other.ID); code != 1 || !strings.Contains(stderr, "is not attached to session") {
		t.Errorf("a token watching another store: %d %s", code, stderr)
	}
	lines, stop := watchLines(t, "--url", s.url, "--token", token, "--store", mine.ID, "--json")
	time.Sleep(300 * time.Millisecond)
	if _, err := admin.CreateMemory(ctx, nil, mine.ID, memstore.MemoryCreate{Path: "/seen.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := lines(1); !strings.Contains(got[0], `"path":"/seen.md"`) {
		t.Errorf("the session's store: %q", got)
	}
	stop()
}
