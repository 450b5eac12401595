package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", to check the file itself

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
)

// child is memstore serve running as a child process, the real binary as
// people run it.
type child struct {
	cmd            *exec.Cmd
	url, key       string
	stdout, stderr *syncbuf.Buffer
	exited         chan struct{} // closed when the process has ended
	err            error         // cmd.Wait's, once exited is closed
}

// noSearchRate are the flags of a server whose test searches faster than
// a credential's or a workspace's default share of searches.
var noSearchRate = []string{"--search-rate-per-credential", "0", "--search-rate-per-workspace", "0"}

// startChild starts memstore serve on db at a free port, with any extra
// flags, and waits until it serves. The process is killed at the end of
// the test if still running.
func startChild(tb testing.TB, db string, extra ...string) *child {
	tb.Helper()
	// testscript.Main (see TestMain) puts the test binary on PATH under the
	// name memstore, running main.
	bin, err := exec.LookPath("memstore")
	if err != nil {
		tb.Fatalf("memstore is not on PATH: %v", err)
	}
	c := &child{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	c.cmd = exec.Command(bin, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--log-level", "warn"}, extra...)...)
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	if err := c.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.exited) }()
	tb.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.exited
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := servingLine.FindStringSubmatch(c.stderr.String()); m != nil {
			c.url, c.key = m[1], lastKey(c.stdout.String())
			return c
		}
		select {
		case <-c.exited:
			tb.Fatalf("memstore serve exited before serving (%v):\n%s", c.err, c.stderr)
		default:
		}
	}
	tb.Fatalf("memstore serve did not serve within 10s:\n%s", c.stderr)
	return nil
}

// stop sends sig and waits for the process to end.
func (c *child) stop(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		tb.Fatalf("memstore serve did not end within 15s of %v", sig)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// memoryLog is what one writer knows of one memory: the content hashes of
// its writes that were answered 200, in order, and of the write whose
// answer never came (it may or may not have been committed).
type memoryLog struct {
	id      string
	acked   []string
	pending string
}

// writeLoad is writers that each write memories of their own in turn,
// creating each then updating it, until stopped, and remember which
// writes were acknowledged. A writer stops at its first transport error
// (its server is gone); a retryable answer (see retryable) is retried
// with the same content (and counted); any other answer but 200, or a 200 with
// another content hash than the one written, is a failure.
type writeLoad struct {
	memories string // the store's memories URL path
	mu       sync.Mutex
	logs     map[string]*memoryLog // by path
	acks     int
	retries  int
	gone     map[int]error // the writers stopped by a transport error
	failures []string
	stop     chan struct{}
	wg       sync.WaitGroup
}

// startWriteLoad starts writers on a store, writer w writing through
// apis[w%len(apis)], each to memoriesPerWriter memories of its own.
func startWriteLoad(store string, apis []*api, writers, memoriesPerWriter int) *writeLoad {
	l := &writeLoad{memories: "/v1/memory_stores/" + store + "/memories", logs: map[string]*memoryLog{}, gone: map[int]error{}, stop: make(chan struct{})}
	for w := range writers {
		a := apis[w%len(apis)]
		l.wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-l.stop:
					return
				default:
				}
				path := fmt.Sprintf("/w%d/m%d.md", w, k%memoriesPerWriter)
				content := fmt.Sprintf("writer %d, write %d, to %s\n%s", w, k, path, strings.Repeat("x", k%500))
				if !l.write(a, w, path, content) {
					return
				}
			}
		})
	}
	return l
}

// write writes content to path, retrying while the answer invites it, and
// reports whether the writer goes on.
func (l *writeLoad) write(a *api, w int, path, content string) bool {
	l.mu.Lock()
	ml := l.logs[path]
	if ml == nil {
		ml = &memoryLog{}
		l.logs[path] = ml
	}
	ml.pending = sha(content)
	l.mu.Unlock()
	for {
		l.mu.Lock()
		id := ml.id
		l.mu.Unlock()
		var m httpapi.MemoryJSON
		var status int
		var header http.Header
		var data []byte
		var err error
		if id == "" {
			status, header, data, err = a.send("POST", l.memories, httpapi.MemoryCreateRequest{Path: &path, Content: &content}, &m)
		} else {
			status, header, data, err = a.send("POST", l.memories+"/"+id, httpapi.MemoryUpdateRequest{Content: &content}, &m)
		}
		l.mu.Lock()
		switch {
		case err != nil:
			l.gone[w] = err
			l.mu.Unlock()
			return false
		case retryable(status, header):
			l.retries++
			l.mu.Unlock()
			time.Sleep(loadRetryPause)
			continue
		case status != http.StatusOK:
			l.failures = append(l.failures, fmt.Sprintf("writer %d: %s: %d %s", w, path, status, data))
			l.mu.Unlock()
			return false
		}
		if m.ContentSHA256 != ml.pending {
			l.failures = append(l.failures, fmt.Sprintf("writer %d: %s: answered hash %s; want %s", w, path, m.ContentSHA256, ml.pending))
		}
		ml.id, ml.acked, ml.pending = m.ID, append(ml.acked, ml.pending), ""
		l.acks++
		l.mu.Unlock()
		return true
	}
}

// retryable reports whether an answer other than 200 invites the client to
// try again: a conflict, or a server error, that says x-should-retry: true.
func retryable(status int, header http.Header) bool {
	return (status == http.StatusConflict || status >= 500) && header.Get("x-should-retry") == "true"
}

// loadRetryPause is how long a writer waits before retrying a write that
// the server asked it to retry.
const loadRetryPause = 20 * time.Millisecond

// acked returns the number of writes acknowledged so far.
func (l *writeLoad) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acks
}

// waitAcked waits up to timeout for n writes to be acknowledged in all.
func (l *writeLoad) waitAcked(n int, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline) && l.acked() < n; time.Sleep(10 * time.Millisecond) {
	}
}

// waitMade waits up to 10 seconds until the writers have made all n of
// their memories, and fails tb (ending the load) if they have not. A test
// that takes the database away waits for this first: a create retried
// after its answer was lost would find its own memory in the way.
func (l *writeLoad) waitMade(tb testing.TB, n int) {
	tb.Helper()
	made := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		made := 0
		for _, ml := range l.logs {
			if ml.id != "" {
				made++
			}
		}
		return made
	}
	for deadline := time.Now().Add(10 * time.Second); made() < n && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	if got := made(); got != n {
		l.end()
		tb.Fatalf("only %d memories of %d made in 10s; failures: %v", got, n, l.failures)
	}
}

// end stops the writers and waits for them.
func (l *writeLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// check verifies through a that every acknowledged write is there: each
// memory holds its last acknowledged content (or that of the write in
// flight when its writer's server died), every acknowledged write is one
// of its versions, no other memory exists, and search finds each memory
// by what it holds now. It returns the number of writes checked.
func (l *writeLoad) check(t *testing.T, a *api) int {
	t.Helper()
	var page httpapi.PageJSON[httpapi.ListItemJSON]
	a.must(t, "GET", l.memories+"?limit=100", nil, &page)
	found := map[string]*httpapi.MemoryJSON{}
	for _, it := range page.Data {
		if it.Memory == nil {
			t.Fatalf("unexpected prefix %+v in a list without depth", it.Prefix)
		}
		found[it.Memory.Path] = it.Memory
	}
	for path := range found {
		if l.logs[path] == nil {
			t.Errorf("memory %s exists, but no writer wrote it", path)
		}
	}
	store := strings.TrimSuffix(l.memories, "/memories")
	checked := 0
	for path, ml := range l.logs {
		m := found[path]
		if len(ml.acked) == 0 {
			// Only a create in flight: it may have been committed.
			if m != nil && m.ContentSHA256 != ml.pending {
				t.Errorf("%s holds %s, which no writer wrote", path, m.ContentSHA256)
			}
			continue
		}
		last := ml.acked[len(ml.acked)-1]
		switch {
		case m == nil:
			t.Errorf("%s, written %d times with answer 200, is gone", path, len(ml.acked))
			continue
		case m.ContentSHA256 != last && (ml.pending == "" || m.ContentSHA256 != ml.pending):
			t.Errorf("%s holds %s; want the last acknowledged write %s or the one in flight %q", path, m.ContentSHA256, last, ml.pending)
		}
		// Every acknowledged write is a version of the memory.
		versions := map[string]bool{}
		for next := ""; ; {
			var vp httpapi.PageJSON[httpapi.VersionJSON]
			q := "?limit=100&memory_id=" + ml.id
			if next != "" {
				q += "&page=" + next
			}
			a.must(t, "GET", store+"/memory_versions"+q, nil, &vp)
			for _, v := range vp.Data {
				if v.ContentSHA256 != nil {
					versions[*v.ContentSHA256] = true
				}
			}
			if vp.NextPage == nil {
				break
			}
			next = *vp.NextPage
		}
		for i, h := range ml.acked {
			if !versions[h] {
				t.Errorf("%s: acknowledged write %d (%s) has no version", path, i+1, h)
			}
		}
		checked += len(ml.acked)

		// Search finds the memory by what it holds now: the writes that
		// a crash kept from the search index are indexed after it.
		var full httpapi.MemoryJSON
		a.must(t, "GET", l.memories+"/"+m.ID, nil, &full)
		words := strings.SplitN(*full.Content, ",", 3) // "writer W", " write K", ...
		var hits httpapi.PageJSON[httpapi.SearchResultJSON]
		a.must(t, "GET", l.memories+"/search?q="+url.QueryEscape(words[1])+"&path_prefix="+url.QueryEscape(path), nil, &hits)
		if len(hits.Data) != 1 || hits.Data[0].Memory.ID != m.ID {
			t.Errorf("search %q under %s: %+v; want %s", words[1], path, hits.Data, m.ID)
		}
	}
	return checked
}

// TestCrashKeepsAcknowledgedWrites kills the server (SIGKILL) in the middle
// of a write load and restarts it on the same database: every write that
// was answered 200 must be there, each memory must hold its last
// acknowledged content (or that of the write in flight when the server
// died), and the file must pass SQLite's integrity check.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	const writers, memoriesPerWriter = 4, 5
	db := filepath.Join(t.TempDir(), "m.db")
	srv := startChild(t, db)
	if srv.key == "" {
		t.Fatalf("a first run printed no key:\n%s", srv.stdout)
	}
	a := newAPI(srv.url, srv.key)
	store := a.createStore(t, "crash")
	load := startWriteLoad(store, []*api{a}, writers, memoriesPerWriter)

	// Kill the server once the load is well under way.
	load.waitAcked(400, 5*time.Second)
	srv.stop(t, syscall.SIGKILL)
	load.end()
	if len(load.failures) > 0 || load.retries > 0 {
		t.Fatalf("%d writes failed and %d were retried before the crash; the first failure: %v", len(load.failures), load.retries, load.failures)
	}
	if load.acks < 50 {
		t.Fatalf("the server answered only %d writes in 5s before the crash: stuck or far too slow", load.acks)
	}

	// Restart on the same database: no new key, the old one works. Its
	// check searches after every read, faster than a key's share.
	srv = startChild(t, db, noSearchRate...)
	if srv.key != "" {
		t.Errorf("the restarted server made a new key")
	}
	checked := load.check(t, newAPI(srv.url, a.key))
	t.Logf("%d acknowledged writes to %d memories checked after the crash", checked, len(load.logs))

	// A clean stop on SIGTERM, then the file itself.
	srv.stop(t, syscall.SIGTERM)
	if srv.err != nil || !strings.Contains(srv.stderr.String(), "memstore: stopped") {
		t.Errorf("after SIGTERM: %v\n%s", srv.err, srv.stderr)
	}
	sdb, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var result string
	if err := sdb.QueryRow("PRAGMA integrity_check").Scan(&result); err != nil || result != "ok" {
		t.Errorf("integrity_check: %q %v; want ok", result, err)
	}
}
