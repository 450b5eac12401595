package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/pgtest"
)

// The replicas of one memstore: several servers on one PostgreSQL
// database, each request of a client free to go to any of them. Skipped
// where pgtest finds no PostgreSQL.

// startReplicas starts n servers (in this process) on a fresh PostgreSQL
// database, one after another, and returns the database's URL and a
// client of each with the key the first one made. The tests search after
// every write, so the servers have no search shares.
func startReplicas(t *testing.T, n int) (string, []*api) {
	t.Helper()
	clearEnv(t)
	t.Chdir(t.TempDir())
	db := postgresDB(t, "replicas")
	apis := make([]*api, n)
	var key string
	for i := range apis {
		s := startServer(t, append([]string{"--db", db}, noSearchRate...)...)
		if i == 0 {
			key = s.api(t).key
		}
		apis[i] = newAPI(s.url, key)
	}
	return db, apis
}

// TestReplicasContendedUpdates is TestConcurrentUpdates on three replica
// processes: 16 clients each make 200 read-modify-write updates of one
// memory with a content_sha256 precondition, each request going to the
// next replica, so that a client reads on one replica what another wrote
// and updates it on a third. The lock on the store's row must keep every
// precondition exact across the processes: no update lost or repeated,
// one version each, and nothing but 200 or a precondition failure. It
// takes 25 to 32 seconds under -race on a two-core machine shared with
// other work (load 12).
func TestReplicasContendedUpdates(t *testing.T) {
	clients, updates := 16, 200
	if testing.Short() {
		updates = 10
	}
	clearEnv(t)
	_, apis := startChildReplicas(t, postgresDB(t, "contended"), 3)
	contendedUpdates(t, apis, clients, updates)
}

// startChildReplicas starts n replica processes (startChild) on db, one
// after another, without search shares (their checks search after every
// write), and returns them and a client of each with the key the first
// one made.
func startChildReplicas(t *testing.T, db string, n int) (children []*child, apis []*api) {
	t.Helper()
	var key string
	for i := range n {
		c := startChild(t, db, noSearchRate...)
		if i == 0 {
			if key = c.key; key == "" {
				t.Fatalf("a first run printed no key:\n%s", c.stdout)
			}
		}
		children = append(children, c)
		apis = append(apis, newAPI(c.url, key))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, c := range children {
				t.Logf("replica %d (%s) said:\n%s", i, c.url, c.stderr)
			}
		}
	})
	return children, apis
}

// TestReplicasReadTheirWrites: a write answered by one replica is read
// at once on another, and found at once by search on a third, which no
// longer finds the words it replaced.
func TestReplicasReadTheirWrites(t *testing.T) {
	_, apis := startReplicas(t, 3)
	store := apis[0].createStore(t, "shared")
	memories := "/v1/memory_stores/" + store + "/memories"
	// word is a word of its own for each write, so that a search for it
	// can only find that write: they differ at the start, since search
	// takes a word's inflections ("quokkaas" finds "quokkaae").
	word := func(i int) string { return fmt.Sprintf("%c%cquokka", 'a'+i/26, 'a'+i%26) }
	search := func(a *api, q string) []httpapi.SearchResultJSON {
		t.Helper()
		var hits httpapi.PageJSON[httpapi.SearchResultJSON]
		a.must(t, "GET", memories+"/search?q="+url.QueryEscape(q), nil, &hits)
		return hits.Data
	}

	// The even writes create memories; the odd ones update the first.
	var shared, sharedWord string
	for i := range 30 {
		writer, reader, searcher := apis[i%3], apis[(i+1)%3], apis[(i+2)%3]
		content := "a note about " + word(i)
		var m httpapi.MemoryJSON
		if i%2 == 0 {
			path := fmt.Sprintf("/notes/%02d.md", i)
			writer.must(t, "POST", memories, httpapi.MemoryCreateRequest{Path: &path, Content: &content}, &m)
		} else {
			writer.must(t, "POST", memories+"/"+shared, httpapi.MemoryUpdateRequest{Content: &content}, &m)
		}
		var got httpapi.MemoryJSON
		reader.must(t, "GET", memories+"/"+m.ID, nil, &got)
		if got.ContentSHA256 != m.ContentSHA256 || got.Content == nil || *got.Content != content {
			t.Fatalf("write %d: another replica reads %s %v; want %s %q", i, got.ContentSHA256, got.Content, m.ContentSHA256, content)
		}
		if hits := search(searcher, word(i)); len(hits) != 1 || hits[0].Memory.ID != m.ID {
			t.Fatalf("write %d: a search for %q on a third replica finds %+v; want %s alone", i, word(i), hits, m.ID)
		}
		if i%2 == 1 {
			if hits := search(searcher, sharedWord); len(hits) != 0 {
				t.Fatalf("write %d: a search for %q, replaced by the update, still finds %+v", i, sharedWord, hits)
			}
		}
		if i == 0 {
			shared = m.ID
		}
		if m.ID == shared {
			sharedWord = word(i)
		}
	}
}

// TestReplicaCrash kills one of three replica processes (SIGKILL) in the
// middle of a write load spread over all three: every write acknowledged
// before the kill is there, read through a surviving replica, and the
// clients of the survivors, which go on writing through the kill, see
// nothing but correct 200 answers.
func TestReplicaCrash(t *testing.T) {
	const writers, memoriesPerWriter = 6, 4
	clearEnv(t)
	children, apis := startChildReplicas(t, postgresDB(t, "crash"), 3)
	store := apis[0].createStore(t, "crash")
	// Writer w writes through replica w%3: the writers 0 and 3 through the
	// one killed.
	load := startWriteLoad(store, apis, writers, memoriesPerWriter)

	load.waitAcked(300, 10*time.Second)
	before := load.acked()
	children[0].stop(t, syscall.SIGKILL)
	// The survivors' writers go on for a while after the kill.
	load.waitAcked(before+300, 10*time.Second)
	load.end()
	if len(load.failures) > 0 || load.retries > 0 {
		t.Fatalf("%d writes failed and %d were retried; the failures: %v", len(load.failures), load.retries, load.failures)
	}
	for w, err := range load.gone {
		if w%len(children) != 0 {
			t.Errorf("writer %d, on a surviving replica, lost its server: %v", w, err)
		}
	}
	if load.acks < before+50 {
		t.Fatalf("%d writes acknowledged before the kill and only %d after: the survivors are stuck or far too slow", before, load.acks-before)
	}
	checked := load.check(t, apis[1])
	t.Logf("%d acknowledged writes, %d of them before the kill, checked through a survivor", checked, before)
}

// TestReplicasDatabaseOutage makes the database refuse and end every
// connection in the middle of a write load on two replicas: meanwhile
// every request is answered 409 with x-should-retry: true (never a 5xx),
// and once the database is back, the writers, retrying, go on; at the
// end every write acknowledged before, during or after the outage is
// there.
func TestReplicasDatabaseOutage(t *testing.T) {
	const writers, memoriesPerWriter = 4, 4
	db, apis := startReplicas(t, 2)
	store := apis[0].createStore(t, "outage")
	// A key no replica has authenticated yet, so that its requests
	// during the outage must reach the database.
	code, stdout, stderr := run(t, "", "keys", "create", "--db", db, "--name", "unused", "--json")
	var fresh struct{ Secret string }
	if code != 0 || json.Unmarshal([]byte(stdout), &fresh) != nil {
		t.Fatalf("keys create: exit %d, %q %q", code, stdout, stderr)
	}
	load := startWriteLoad(store, apis, writers, memoriesPerWriter)
	load.waitMade(t, writers*memoriesPerWriter)

	end := pgtest.Outage(t, db)
	// A write committed just before the connections ended may still be
	// on its way to its client.
	time.Sleep(outageSettle)
	during := load.acked()
	for _, a := range apis {
		name := "new"
		for _, probe := range []struct {
			a            *api
			method, path string
			body         any
		}{
			{a, "GET", "/v1/memory_stores/" + store + "/memories", nil},
			{a, "GET", "/v1/memory_stores/" + store + "/memories/search?q=writer", nil},
			{a, "POST", "/v1/memory_stores", httpapi.StoreCreateRequest{Name: &name}},
			{newAPI(a.base, fresh.Secret), "GET", "/v1/memory_stores", nil},
		} {
			status, header, data, err := probe.a.send(probe.method, probe.path, probe.body, nil)
			if err != nil || status != http.StatusConflict || header.Get("x-should-retry") != "true" {
				t.Errorf("%s %s during the outage: %d %q %s %v; want 409 with x-should-retry: true", probe.method, probe.path, status, header.Get("x-should-retry"), data, err)
			}
		}
	}
	time.Sleep(time.Second)
	if n := load.acked() - during; n > 0 {
		t.Errorf("%d writes acknowledged while the database took no connections", n)
	}
	end()
	after := load.acked()
	load.waitAcked(after+200, 10*time.Second)
	load.end()
	if len(load.failures) > 0 || len(load.gone) > 0 {
		t.Fatalf("%d writes failed and %d writers lost their server; the failures: %v %v", len(load.failures), len(load.gone), load.failures, load.gone)
	}
	if load.retries == 0 {
		t.Errorf("no write was asked to retry during the outage")
	}
	if load.acks < after+50 {
		t.Fatalf("only %d writes acknowledged in 10s after the outage: the replicas did not recover", load.acks-after)
	}
	checked := load.check(t, apis[1])
	t.Logf("%d acknowledged writes checked, %d retries asked for during the outage", checked, load.retries)
}

// outageSettle is how long the answers of writes committed before an
// outage may take to reach their clients.
const outageSettle = 200 * time.Millisecond

// TestReplicasDatabaseRestart restarts PostgreSQL itself, a fast
// shutdown and then a start on the same port, in the middle of a write
// load on three replica processes, while readers on each replica read a
// memory, list, search and authenticate a key no replica has seen yet.
// While the database is away, every answer is 200 and right, or says
// x-should-retry: true (a 409 or a 5xx): never a 404 for a memory that
// exists, a 401 for a valid key, or a 200 for a write. Once it is back,
// the same replica processes, not restarted, serve again and refuse a
// key revoked elsewhere, and every acknowledged write is there.
func TestReplicasDatabaseRestart(t *testing.T) {
	const writers, memoriesPerWriter = 6, 4
	clearEnv(t)
	pg := pgtest.NewServer(t)
	db := pg.DB(t, migratePostgres)
	_, apis := startChildReplicas(t, db, 3)
	store := apis[0].createStore(t, "restart")
	code, stdout, stderr := run(t, "", "keys", "create", "--db", db, "--name", "unseen", "--json")
	var unseen struct{ ID, Secret string }
	if code != 0 || json.Unmarshal([]byte(stdout), &unseen) != nil {
		t.Fatalf("keys create: exit %d, %q %q", code, stdout, stderr)
	}
	load := startWriteLoad(store, apis, writers, memoriesPerWriter)
	load.waitMade(t, writers*memoriesPerWriter)
	var someID string
	load.mu.Lock()
	for _, ml := range load.logs {
		someID = ml.id
		break
	}
	load.mu.Unlock()

	readers := startReaders(apis, unseen.Secret, store, someID)
	pg.Down(t)
	time.Sleep(outageSettle)
	down := load.acked()
	readers.mark()
	time.Sleep(restartDowntime)
	if n := load.acked() - down; n > 0 {
		t.Errorf("%d writes acknowledged while PostgreSQL was down", n)
	}
	retriedDown := readers.retried()
	pg.Up(t)
	up := load.acked()
	readers.mark()
	load.waitAcked(up+200, 20*time.Second)
	load.end()
	readers.end()

	if len(load.failures) > 0 || len(load.gone) > 0 {
		t.Fatalf("%d writes failed and %d writers lost their server; the failures: %v %v", len(load.failures), len(load.gone), load.failures, load.gone)
	}
	if len(readers.wrong) > 0 {
		t.Fatalf("%d wrong answers to the readers; the first ones: %v", len(readers.wrong), readers.wrong[:min(5, len(readers.wrong))])
	}
	if load.retries == 0 || retriedDown == 0 {
		t.Errorf("%d writes and %d reads were asked to retry: the restart went unseen", load.retries, retriedDown)
	}
	if load.acks < up+50 {
		t.Fatalf("only %d writes acknowledged in 20s after the restart: the replicas did not recover", load.acks-up)
	}
	for i, n := range readers.servedSinceMark() {
		if n == 0 {
			t.Errorf("replica %d answered no reader 200 after the restart", i)
		}
	}
	checked := load.check(t, apis[1])

	// The key the readers used, revoked by another process, is refused by
	// each replica within a second: each listens for revocations again
	// and empties its authentication cache once it can.
	if code, _, stderr := run(t, "", "keys", "revoke", "--yes", "--db", db, unseen.ID); code != 0 {
		t.Fatalf("keys revoke: exit %d, %s", code, stderr)
	}
	revoked := time.Now()
	for _, a := range apis {
		waitRefused(t, newAPI(a.base, unseen.Secret), revoked, time.Second)
	}
	t.Logf("%d acknowledged writes checked; %d writes and %d reads asked to retry while PostgreSQL was down", checked, load.retries, retriedDown)
}

// restartDowntime is how long TestReplicasDatabaseRestart leaves
// PostgreSQL down.
const restartDowntime = time.Second

// readerPause spaces the requests of each reader.
const readerPause = 20 * time.Millisecond

// readers read through each of a set of replicas, until ended, and sort
// the answers: right, retryable, or wrong.
type readers struct {
	mu      sync.Mutex
	wrong   []string
	retries int
	served  []int // 200s per replica since the last mark
	stop    chan struct{}
	wg      sync.WaitGroup
}

// startReaders starts one reader per replica of apis, each reading in
// turn memory id of store, the store's list and a search, and the list
// of stores with key unseen.
func startReaders(apis []*api, unseen, store, id string) *readers {
	r := &readers{served: make([]int, len(apis)), stop: make(chan struct{})}
	memories := "/v1/memory_stores/" + store + "/memories"
	for i, a := range apis {
		fresh := newAPI(a.base, unseen)
		r.wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-r.stop:
					return
				default:
				}
				var status int
				var header http.Header
				var data []byte
				var err error
				var m httpapi.MemoryJSON
				switch k % 4 {
				case 0:
					status, header, data, err = a.send("GET", memories+"/"+id, nil, &m)
					if status == http.StatusOK && m.ID != id {
						err = fmt.Errorf("read memory %s, got %s", id, m.ID)
					}
				case 1:
					status, header, data, err = a.send("GET", memories, nil, nil)
				case 2:
					status, header, data, err = a.send("GET", memories+"/search?q=writer", nil, nil)
				case 3:
					status, header, data, err = fresh.send("GET", "/v1/memory_stores", nil, nil)
				}
				r.mu.Lock()
				switch {
				case err != nil:
					r.wrong = append(r.wrong, fmt.Sprintf("replica %d, read %d: %v", i, k%4, err))
				case status == http.StatusOK:
					r.served[i]++
				case retryable(status, header):
					r.retries++
				default:
					r.wrong = append(r.wrong, fmt.Sprintf("replica %d, read %d: %d %q %s", i, k%4, status, header.Get("x-should-retry"), data))
				}
				r.mu.Unlock()
				time.Sleep(readerPause)
			}
		})
	}
	return r
}

// mark starts counting the 200s and the retryable answers afresh.
func (r *readers) mark() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = 0
	clear(r.served)
}

// retried returns the number of retryable answers since the last mark.
func (r *readers) retried() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries
}

// servedSinceMark returns the 200s per replica since the last mark.
func (r *readers) servedSinceMark() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.served)
}

// end stops the readers and waits for them.
func (r *readers) end() {
	close(r.stop)
	r.wg.Wait()
}
