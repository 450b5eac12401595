package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// TestConcurrentUpdates runs many clients that each append lines to one
// memory through the real server, read-modify-write with a content_sha256
// precondition, retrying when another client got there first. Optimistic
// concurrency must neither lose nor repeat an update, and contention must
// never surface as a server error.
func TestConcurrentUpdates(t *testing.T) {
	clients, updates := 16, 200
	if testing.Short() {
		updates = 20
	}
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	contendedUpdates(t, []*api{s.api(t)}, clients, updates)
}

// contendedUpdates has clients each make updates successful
// read-modify-write updates of one memory, each request going to the next
// of apis (round robin, each client starting at its own), and checks that
// every successful update is in the memory once, in its client's order,
// with one version each, and that every other answer was a precondition
// failure.
func contendedUpdates(t *testing.T, apis []*api, clients, updates int) {
	t.Helper()
	a := apis[0]
	store := a.createStore(t, "contended")
	path, empty := "/shared.md", ""
	var created httpapi.MemoryJSON
	a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", httpapi.MemoryCreateRequest{Path: &path, Content: &empty}, &created)
	memory := "/v1/memory_stores/" + store + "/memories/" + created.ID

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		conflicts int
		failures  []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for c := range clients {
		wg.Go(func() {
			turn := c
			next := func() *api { turn++; return apis[turn%len(apis)] }
			for i := 0; i < updates; {
				var m httpapi.MemoryJSON
				status, data, err := next().call("GET", memory+"?view=full", nil, &m)
				if err != nil || status != http.StatusOK {
					fail("client %d: read: %d %s %v", c, status, data, err)
					return
				}
				content := *m.Content + fmt.Sprintf("c%02d %03d\n", c, i)
				status, data, err = next().call("POST", memory, httpapi.MemoryUpdateRequest{
					Content:      &content,
					Precondition: &httpapi.Precondition{Type: httpapi.PreconditionSHA256, ContentSHA256: &m.ContentSHA256},
				}, nil)
				switch {
				case err != nil:
					fail("client %d: update: %v", c, err)
					return
				case status == http.StatusOK:
					i++
				case status == http.StatusConflict && strings.Contains(string(data), "memory_precondition_failed_error"):
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					fail("client %d: update: %d %s", c, status, data)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d clients failed; the first: %s", len(failures), failures[0])
	}

	var final httpapi.MemoryJSON
	a.must(t, "GET", memory+"?view=full", nil, &final)
	lines := strings.Split(strings.TrimSuffix(*final.Content, "\n"), "\n")
	if len(lines) != clients*updates {
		t.Errorf("the memory has %d lines; want %d, one per successful update", len(lines), clients*updates)
	}
	// Each client's lines are all there, once, in the order it wrote them.
	next := make([]int, clients)
	for n, line := range lines {
		var c, i int
		if _, err := fmt.Sscanf(line, "c%02d %03d", &c, &i); err != nil || c < 0 || c >= clients {
			t.Fatalf("line %d is %q, written by no client", n+1, line)
		}
		if i != next[c] {
			t.Fatalf("line %d is %q; want update %d of client %d next (an update lost or repeated)", n+1, line, next[c], c)
		}
		next[c]++
	}
	if want := slices.Repeat([]int{updates}, clients); !slices.Equal(next, want) {
		t.Errorf("updates per client: %v; want %v", next, want)
	}

	// One version per successful update, after the first.
	modified := 0
	for page := ""; ; {
		var p httpapi.PageJSON[httpapi.VersionJSON]
		q := "?memory_id=" + created.ID + "&limit=100"
		if page != "" {
			q += "&page=" + page
		}
		a.must(t, "GET", "/v1/memory_stores/"+store+"/memory_versions"+q, nil, &p)
		for _, v := range p.Data {
			if v.Operation == "modified" {
				modified++
			}
		}
		if p.NextPage == nil {
			break
		}
		page = *p.NextPage
	}
	if modified != clients*updates {
		t.Errorf("%d modified versions; want %d", modified, clients*updates)
	}
	t.Logf("%d updates by %d clients, %d precondition conflicts retried", clients*updates, clients, conflicts)
}
