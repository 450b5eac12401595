package dirsync_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore/dirsync"
)

// waitFor waits up to ten seconds for cond.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	tb.Fatalf("timed out waiting for %s", what)
}

// TestWatch: a watch pushes local changes once they settle, pulls the
// store's on its poll, and syncs one last time when stopped.
func TestWatch(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/a.md", "a\n")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var passes []*dirsync.Report
	done := make(chan error, 1)
	go func() {
		done <- dirsync.Watch(ctx, s.options(dir), dirsync.WatchOptions{
			LocalPoll: 20 * time.Millisecond, RemotePoll: 300 * time.Millisecond,
			OnPass: func(r *dirsync.Report, err error) {
				if err != nil {
					t.Errorf("a pass failed: %v", err)
				}
				mu.Lock()
				passes = append(passes, r)
				mu.Unlock()
			},
		})
	}()
	local := func(rel string) string {
		data, _ := os.ReadFile(filepath.Join(dir, rel))
		return string(data)
	}
	waitFor(t, "the first pull", func() bool { return local("a.md") == "a\n" })

	write(t, dir, map[string]string{"b.md": "b\n"})
	waitFor(t, "b.md in the store", func() bool { return s.files(t)["/b.md"] == "b\n" })

	s.put(t, "/a.md", "a2\n")
	waitFor(t, "a.md pulled", func() bool { return local("a.md") == "a2\n" })

	// Idle, the watch does not sync at every local poll: at most its own
	// writes' follow-up and one poll of the store in ten local polls.
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(passes) }
	before := count()
	time.Sleep(200 * time.Millisecond)
	if n := count() - before; n > 2 {
		t.Errorf("%d passes in ten idle local polls", n)
	}

	write(t, dir, map[string]string{"c.md": "c\n"})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the last pass: %v", err)
	}
	if got := s.files(t)["/c.md"]; got != "c\n" {
		t.Errorf("c.md, written just before the stop, is %q in the store", got)
	}
}

// TestWatchRemoteChanged: a signal that the store changed pulls at once,
// long before the store's poll.
func TestWatchRemoteChanged(t *testing.T) {
	s := newServer(t, serverOptions{})
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- dirsync.Watch(ctx, s.options(dir), dirsync.WatchOptions{
			LocalPoll: 20 * time.Millisecond, RemotePoll: time.Hour, RemoteChanged: changed,
		})
	}()
	time.Sleep(200 * time.Millisecond) // the first pass is done
	s.put(t, "/a.md", "a\n")
	changed <- struct{}{}
	start := time.Now()
	waitFor(t, "a.md pulled", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "a.md"))
		return string(data) == "a\n"
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("pulled %v after the signal", d)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
