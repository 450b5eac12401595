package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/syncbuf"
)

// TestMemdirSyncWatchFollowsTheStore: two directories kept in sync with
// one store by 'memdir sync --watch': a file written in one reaches the
// other as soon as the store has it, by the change feed, not by the poll
// (an hour here).
func TestMemdirSyncWatchFollowsTheStore(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	remote := []string{"--url", s.url, "--api-key", s.key}
	code, out, stderr := run(t, "", append([]string{"stores", "create", "notes", "--json"}, remote...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	store := out[strings.Index(out, "memstore_"):]
	store = store[:strings.IndexByte(store, '"')]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dirs := []string{filepath.Join(t.TempDir(), "laptop"), filepath.Join(t.TempDir(), "desktop")}
	done := make(chan int, len(dirs))
	var logs []*syncbuf.Buffer
	for _, dir := range dirs {
		errOut := &syncbuf.Buffer{}
		logs = append(logs, errOut)
		args := append([]string{"memdir", "sync", "--watch", "--poll", "1h", "--store", store, "--dir", dir}, remote...)
		go func() { done <- Main(ctx, args, strings.NewReader(""), &syncbuf.Buffer{}, errOut) }()
	}
	for i := range dirs {
		waitUntil(t, "the first sync of "+dirs[i], func() bool { return strings.Contains(logs[i].String(), "synced ") })
	}
	if err := os.WriteFile(filepath.Join(dirs[0], "todo.md"), []byte("- call Bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "todo.md in the store", func() bool {
		code, out, _ := run(t, "", append([]string{"cat", "--store", store, "/todo.md"}, remote...)...)
		return code == 0 && out == "- call Bob\n"
	})
	inStore := time.Now()
	waitUntil(t, "todo.md on the other device", func() bool {
		b, _ := os.ReadFile(filepath.Join(dirs[1], "todo.md"))
		return string(b) == "- call Bob\n"
	})
	if d := time.Since(inStore); d > 1500*time.Millisecond {
		t.Errorf("the other device had the change %v after the store", d)
	}
	cancel()
	for range dirs {
		if code := <-done; code != 0 {
			t.Errorf("memdir sync --watch exited with %d: %s %s", code, logs[0], logs[1])
		}
	}
	for _, l := range logs {
		if strings.Contains(l.String(), "not following") {
			t.Errorf("a watch did not follow the feed: %s", l)
		}
	}
}

// waitUntil waits up to ten seconds for cond.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
