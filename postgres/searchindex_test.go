package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// searchPaths returns the paths of the memories a search of the store
// for text finds, in order.
func searchPaths(t *testing.T, core *memstore.Core, storeID, text string) []string {
	t.Helper()
	p, err := core.SearchMemories(t.Context(), alice, []string{storeID}, memstore.SearchQuery{Text: text, Limit: memstore.MaxSearchLimit})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	var paths []string
	for _, r := range p.Items {
		paths = append(paths, r.Memory.Path)
	}
	return paths
}

// unindexed opens a database whose indexer runs no round in the
// background, with a store of the name, and a connection of its own.
func unindexed(t *testing.T, name string) (*postgres.DB, *memstore.Core, *pgx.Conn, *memstore.Store) {
	t.Helper()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	db.StopIndexer()
	core := memstore.NewCore(db)
	s, err := core.CreateStore(t.Context(), alice, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return db, core, connect(t, url), s
}

// count runs a query of one number.
func count(t *testing.T, conn *pgx.Conn, sql string, args ...any) (n int) {
	t.Helper()
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestSearchIndexedLater proves that a write leaves its memory's search
// data to the indexer, and that a search indexes what its store has
// queued before it reads: with no round run in the background, each
// search finds the memories as the writes before it left them.
func TestSearchIndexedLater(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "later")
	m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/a/walrus.md", Content: "tusks and whiskers"})
	if err != nil {
		t.Fatal(err)
	}
	if q, n := count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`); q != 1 || n != 0 {
		t.Fatalf("after a write, %d rows queued and %d indexed, want 1 and 0", q, n)
	}
	// /metrics' memstore_search_backlog reads the queue.
	backlog := func() int64 {
		t.Helper()
		c, err := db.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.SearchBacklog
	}
	if n := backlog(); n != 1 {
		t.Errorf("the search backlog after a write: %d, want 1", n)
	}
	if got := searchPaths(t, core, s.ID, "whiskers"); !slices.Equal(got, []string{"/a/walrus.md"}) {
		t.Fatalf("a search after the write found %q", got)
	}
	if q, n := count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`); q != 0 || n != 1 {
		t.Fatalf("after a search, %d rows queued and %d indexed, want 0 and 1", q, n)
	}
	if n := backlog(); n != 0 {
		t.Errorf("the search backlog once indexed: %d, want 0", n)
	}
	if _, err := core.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Path: new("/b/narwhal.md"), Content: new("one long tooth")}); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, core, s.ID, "tooth"); !slices.Equal(got, []string{"/b/narwhal.md"}) {
		t.Fatalf("a search after an update found %q", got)
	}
	if got := searchPaths(t, core, s.ID, "whiskers"); len(got) != 0 {
		t.Fatalf("a search for the old content found %q", got)
	}
	if err := core.DeleteMemory(ctx, alice, s.ID, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, core, s.ID, "tooth"); len(got) != 0 {
		t.Fatalf("a search after the deletion found %q", got)
	}
	// A memory deleted before any round is never indexed.
	gone, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/c/seal.md", Content: "kelp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteMemory(ctx, alice, s.ID, gone.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	if q, n, p := count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`),
		count(t, conn, `SELECT count(*) FROM search_postings`); q != 0 || n != 0 || p != 0 {
		t.Fatalf("after deletions, %d rows queued, %d indexed and %d postings, want none", q, n, p)
	}
}

// TestSearchIndexerRuns proves that a process indexes its writes in the
// background, with no search asking, soon after them.
func TestSearchIndexerRuns(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	core := memstore.NewCore(mustOpenAt(t, url, postgres.Options{}))
	conn := connect(t, url)
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "background"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // more than a round takes
		if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%d.md", i), Content: fmt.Sprintf("memory number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(t, conn, `SELECT count(*) FROM search_queue`) != 0 || count(t, conn, `SELECT count(*) FROM memory_search`) != 300 {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the writes, %d rows queued and %d of 300 memories indexed",
				count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := wrongPostings(t, conn); n != 0 {
		t.Errorf("%d postings differ from the memories' words", n)
	}
}

// TestSearchIndexRoundBytes proves that a round reads a bounded amount
// of content: of memories of 20,000 bytes, one round indexes as many as
// postgres.RoundBytes holds, and leaves the others queued for the next.
func TestSearchIndexRoundBytes(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "bytes")
	const size = 20_000
	per := postgres.RoundBytes / size
	for i := range per + 2 {
		content := strings.Repeat(fmt.Sprintf("large memory %d ", i), size/15+1)[:size]
		if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/large-%d.md", i), Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.IndexRound(ctx); err != nil {
		t.Fatal(err)
	}
	if q, n := count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`); q != 2 || n != per {
		t.Fatalf("after one round, %d rows queued and %d memories indexed, want 2 and %d", q, n, per)
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	if q, n := count(t, conn, `SELECT count(*) FROM search_queue`), count(t, conn, `SELECT count(*) FROM memory_search`); q != 0 || n != per+2 {
		t.Fatalf("after the rounds, %d rows queued and %d memories indexed, want 0 and %d", q, n, per+2)
	}
}

// TestSearchSeesOtherProcessesWrites proves that a search through one
// process finds what another wrote just before, though no round of
// either has run: even when the writing process stops before indexing
// anything, as a crash after the commit would leave it.
func TestSearchSeesOtherProcessesWrites(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	a := mustOpenAt(t, url, postgres.Options{})
	a.StopIndexer()
	b := mustOpenAt(t, url, postgres.Options{})
	b.StopIndexer()
	coreA, coreB := memstore.NewCore(a), memstore.NewCore(b)
	s, err := coreA.CreateStore(ctx, alice, memstore.StoreCreate{Name: "replicas"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := coreA.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/puffin-%d.md", i), Content: "a puffin's beak"}); err != nil {
			t.Fatal(err)
		}
		got := searchPaths(t, coreB, s.ID, "beak")
		if len(got) != i+1 {
			t.Fatalf("after %d writes through one process, a search through the other found %q", i+1, got)
		}
	}
	if _, err := coreA.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/gannet.md", Content: "a gannet dives"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := searchPaths(t, coreB, s.ID, "dives"); !slices.Equal(got, []string{"/gannet.md"}) {
		t.Fatalf("after the writing process closed unindexed, a search through the other found %q", got)
	}
}

// TestSearchIndexerRaces changes a memory while a round that read it is
// still to write: a deletion, after which the round writes the search
// data of a memory gone, and an update, whose content the round did not
// read. Each change was queued after the round's claim, so the next round
// mends what this one wrote, and a search, which runs the rounds first,
// never sees it.
func TestSearchIndexerRaces(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "races")
	doomed, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/doomed.md", Content: "an albatross glides"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/changed.md", Content: "a petrel skims"})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore := postgres.OnRoundClaimed(func() {
		once.Do(func() {
			// Another connection: the round's transaction is open.
			if err := core.DeleteMemory(context.WithoutCancel(ctx), alice, s.ID, doomed.ID, ""); err != nil {
				t.Error(err)
			}
			if _, err := core.UpdateMemory(context.WithoutCancel(ctx), alice, s.ID, changed.ID, memstore.MemoryUpdate{Content: new("a shearwater skims")}); err != nil {
				t.Error(err)
			}
		})
	})
	defer restore()
	if err := db.IndexRound(ctx); err != nil {
		t.Fatal(err)
	}
	// The round wrote what it read: the memory gone and the old content.
	if n := count(t, conn, `SELECT count(*) FROM memory_search WHERE id = $1`, doomed.ID); n != 1 {
		t.Fatalf("the round raced by a deletion wrote %d rows of the memory gone, want 1 (the race did not happen)", n)
	}
	if q := count(t, conn, `SELECT count(*) FROM search_queue`); q != 2 {
		t.Fatalf("%d rows queued after the round, want the 2 changes made during it", q)
	}
	if got := searchPaths(t, core, s.ID, "albatross"); len(got) != 0 {
		t.Errorf("a search found the deleted memory: %q", got)
	}
	if got := searchPaths(t, core, s.ID, "shearwater"); !slices.Equal(got, []string{"/changed.md"}) {
		t.Errorf("a search for the new content found %q", got)
	}
	if got := searchPaths(t, core, s.ID, "petrel"); len(got) != 0 {
		t.Errorf("a search for the old content found %q", got)
	}
	if n := wrongSearchRows(t, conn); n != 0 {
		t.Errorf("%d rows of memory_search differ from the memories", n)
	}
	if n := wrongPostings(t, conn); n != 0 {
		t.Errorf("%d postings differ from the memories' words", n)
	}
}

// TestSearchIndexerRoundsMeet has a second round take the rows that a
// deletion and an update queue while a first round, which read the
// memories before them, is still to write: the second waits for the
// first, and then indexes the memories as the changes left them, rather
// than the first undoing its work.
func TestSearchIndexerRoundsMeet(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "meet")
	doomed, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/doomed.md", Content: "a skua chases"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/changed.md", Content: "a tern hovers"})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	second := make(chan error, 1)
	defer postgres.OnRoundClaimed(func() {
		once.Do(func() {
			bg := context.WithoutCancel(ctx)
			if err := core.DeleteMemory(bg, alice, s.ID, doomed.ID, ""); err != nil {
				t.Error(err)
			}
			if _, err := core.UpdateMemory(bg, alice, s.ID, changed.ID, memstore.MemoryUpdate{Content: new("a kittiwake hovers")}); err != nil {
				t.Error(err)
			}
			// The second round skips the rows this one holds and takes
			// the two new ones; it may not finish before this one.
			go func() { second <- db.IndexRound(bg) }()
			select {
			case err := <-second:
				second <- err
			case <-time.After(500 * time.Millisecond):
			}
		})
	})()
	if err := db.IndexRound(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if q := count(t, conn, `SELECT count(*) FROM search_queue`); q != 0 {
		t.Fatalf("%d rows queued after both rounds, want none", q)
	}
	if n := wrongSearchRows(t, conn); n != 0 {
		t.Errorf("%d rows of memory_search differ from the memories", n)
	}
	if n := wrongPostings(t, conn); n != 0 {
		t.Errorf("%d postings differ from the memories' words", n)
	}
	if got := searchPaths(t, core, s.ID, "kittiwake"); !slices.Equal(got, []string{"/changed.md"}) {
		t.Errorf("a search for the new content found %q", got)
	}
}

// TestSearchDeletedMeanwhile deletes a memory after a search ran the
// rounds of its store and before its snapshot: the memory's search data
// is still there, and the search leaves it out, without an error.
func TestSearchDeletedMeanwhile(t *testing.T) {
	ctx := t.Context()
	db, core, _, s := unindexed(t, "meanwhile")
	var ms []*memstore.Memory
	for _, p := range []string{"/cormorant.md", "/shag.md"} {
		m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: p, Content: "a diving bird"})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	// A write queued, so that the search runs the store's rounds.
	if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/gull.md", Content: "a gull"}); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	defer postgres.OnSearchCaughtUp(func() {
		once.Do(func() {
			if err := core.DeleteMemory(context.WithoutCancel(ctx), alice, s.ID, ms[0].ID, ""); err != nil {
				t.Error(err)
			}
		})
	})()
	if got := searchPaths(t, core, s.ID, "diving"); !slices.Equal(got, []string{"/shag.md"}) {
		t.Fatalf("a search during which a memory was deleted found %q", got)
	}
}

// TestSearchIndexerUnderLoad writes, renames, deletes and searches the
// memories of two stores through two processes at once, each with its
// indexer running, for a while: no search fails, each finds the memories
// its client wrote before it, and afterwards the search data is the
// memories'.
func TestSearchIndexerUnderLoad(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	cores := []*memstore.Core{
		memstore.NewCore(mustOpenAt(t, url, postgres.Options{})),
		memstore.NewCore(mustOpenAt(t, url, postgres.Options{})),
	}
	var stores []string
	for i := range 2 {
		s, err := cores[0].CreateStore(ctx, alice, memstore.StoreCreate{Name: fmt.Sprintf("load-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s.ID)
	}
	end := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			core, store := cores[w%2], stores[w%len(stores)]
			for i := 0; time.Now().Before(end); i++ {
				word := fmt.Sprintf("w%dn%d", w, i)
				m, err := core.CreateMemory(ctx, alice, store, memstore.MemoryCreate{Path: fmt.Sprintf("/%d/%d.md", w, i), Content: "the word " + word})
				if err != nil {
					t.Error(err)
					return
				}
				if got := searchPaths(t, core, store, word); !slices.Equal(got, []string{m.Path}) {
					t.Errorf("a search for %s after its write found %q", word, got)
					return
				}
				switch i % 3 {
				case 0:
					_, err = core.UpdateMemory(ctx, alice, store, m.ID, memstore.MemoryUpdate{Path: new(fmt.Sprintf("/%d/renamed-%d.md", w, i)), Content: new("renamed " + word)})
				case 1:
					err = core.DeleteMemory(ctx, alice, store, m.ID, "")
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	conn := connect(t, url)
	if err := cores[0].DeleteStore(ctx, alice, stores[1]); err != nil {
		t.Fatal(err)
	}
	for _, s := range stores[:1] {
		searchPaths(t, cores[1], s, "word") // runs the store's rounds
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(t, conn, `SELECT count(*) FROM search_queue`) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the writes, %d rows queued", count(t, conn, `SELECT count(*) FROM search_queue`))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := wrongSearchRows(t, conn); n != 0 {
		t.Errorf("%d rows of memory_search differ from the memories", n)
	}
	if n := wrongPostings(t, conn); n != 0 {
		t.Errorf("%d postings differ from the memories' words", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM memories`); n == 0 {
		t.Error("no memory was left to check")
	}
}

// TestSearchOtherWorkspaceQueue proves that the backend refuses a search
// naming another workspace's store before it runs that store's rounds:
// a tenant cannot make the server index, or wait for, another's writes,
// whatever the core checked before.
func TestSearchOtherWorkspaceQueue(t *testing.T) {
	ctx := t.Context()
	db, core, conn, _ := unindexed(t, "alice's")
	bob := &memstore.Caller{WorkspaceID: "wrkspc_other", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_bob"}}
	s, err := core.CreateStore(ctx, bob, memstore.StoreCreate{Name: "bob's"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.CreateMemory(ctx, bob, s.ID, memstore.MemoryCreate{Path: "/secret.md", Content: "a private note"}); err != nil {
		t.Fatal(err)
	}
	_, err = db.SearchMemories(ctx, alice.WorkspaceID, []string{s.ID}, memstore.SearchQuery{Text: "private"})
	if memstore.ErrorCode(err) != memstore.ENotFound {
		t.Fatalf("a search of another workspace's store: %v, want not found", err)
	}
	if q := count(t, conn, `SELECT count(*) FROM search_queue WHERE store_id = $1`, s.ID); q != 1 {
		t.Fatalf("the other workspace's store has %d rows queued after the refused search, want its 1", q)
	}
}

// TestSearchRoundWaitBounded holds a store's queued row from another
// connection, as a round of a process stopped in its middle would: a
// search of the store waits for it 5 s at most, then answers busy, to be
// retried, and finds the memory once the row is let go.
func TestSearchRoundWaitBounded(t *testing.T) {
	ctx := t.Context()
	_, core, conn, s := unindexed(t, "held")
	if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/held.md", Content: "a frozen round"}); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT FROM search_queue FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = core.SearchMemories(ctx, alice, []string{s.ID}, memstore.SearchQuery{Text: "frozen"})
	var e *memstore.Error
	if !errors.As(err, &e) || e.Code != memstore.EConflict || !e.Retry {
		t.Fatalf("a search waiting on a held round: %v, want busy", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the search waited %s", waited)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, core, s.ID, "frozen"); !slices.Equal(got, []string{"/held.md"}) {
		t.Fatalf("once the row was let go, a search found %q", got)
	}
}

// TestSearchWaitsForRound has a search meet a round that holds its
// store's queued rows: the search waits for it, takes what the round
// left, and finds both the memory the round indexed and the one it did
// not take.
func TestSearchWaitsForRound(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "wait")
	for _, p := range []string{"/first.md", "/second.md"} {
		content := strings.Repeat("a heron waits ", postgres.RoundBytes/14+1) // each a round's worth
		if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: p, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer postgres.OnRoundClaimed(func() {
		once.Do(func() {
			close(held)
			<-release
		})
	})()
	round := make(chan error, 1)
	go func() { round <- db.IndexRound(context.WithoutCancel(ctx)) }()
	<-held
	type result struct {
		page memstore.Page[memstore.SearchResult]
		err  error
	}
	found := make(chan result, 1)
	go func() {
		p, err := core.SearchMemories(ctx, alice, []string{s.ID}, memstore.SearchQuery{Text: "heron"})
		found <- result{p, err}
	}()
	time.Sleep(200 * time.Millisecond) // the search waits on the round's rows
	close(release)
	if err := <-round; err != nil {
		t.Fatal(err)
	}
	r := <-found
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []string
	for _, it := range r.page.Items {
		got = append(got, it.Memory.Path)
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), []string{"/first.md", "/second.md"}) {
		t.Fatalf("a search that waited for a round found %q", got)
	}
	if q := count(t, conn, `SELECT count(*) FROM search_queue`); q != 0 {
		t.Fatalf("%d rows queued after the search, want none", q)
	}
}

// TestSearchBackPressure: the writes of a store wait while more than
// maxStoreLag of its writes are queued for the search indexer, as the
// indexer last saw the queue, until rounds index them; another store's
// writes go on; and no write waits once the indexer has stopped.
func TestSearchBackPressure(t *testing.T) {
	defer postgres.SetMaxStoreLag(3)()
	ctx := t.Context()
	db, core, _, s := unindexed(t, "pressure")
	other, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	write := func(store string) chan error {
		n++
		done := make(chan error, 1)
		path := fmt.Sprintf("/m/%d.md", n)
		go func() {
			_, err := core.CreateMemory(ctx, alice, store, memstore.MemoryCreate{Path: path, Content: "text of " + path})
			done <- err
		}()
		return done
	}
	done := func(what string, c chan error) {
		t.Helper()
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s still waits", what)
		}
	}
	waits := func(what string, c chan error) {
		t.Helper()
		select {
		case err := <-c:
			t.Fatalf("%s did not wait for the indexer: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	for range 4 {
		done("a write under the limit", write(s.ID))
	}
	if err := db.LookBehind(ctx); err != nil {
		t.Fatal(err)
	}
	held := write(s.ID)
	waits("a write of a store 4 writes behind", held)
	done("a write of another store", write(other.ID))
	if err := db.IndexQueued(ctx); err != nil { // its last look finds the store caught up
		t.Fatal(err)
	}
	done("the write held back, once the rounds indexed the queue", held)

	for range 4 {
		done("a write under the limit", write(s.ID))
	}
	if err := db.LookBehind(ctx); err != nil {
		t.Fatal(err)
	}
	held = write(s.ID)
	waits("a write of a store behind again", held)
	db.StopIndexer()
	done("the write held back, once the indexer stopped", held)
}

// TestSearchBackPressureFirst: the background rounds index the queue of a
// store whose writes wait before the older queue of other stores, so
// that those writes wait for their own store's backlog only: here ten
// stores' large memories, each store under the limit, are still queued
// when the write held back goes.
func TestSearchBackPressureFirst(t *testing.T) {
	defer postgres.SetMaxStoreLag(3)()
	ctx := t.Context()
	db, core, conn, b := unindexed(t, "first")
	// Each round takes three of these, in the queue's order, and waits
	// 50 ms.
	big := strings.Repeat("many words of prose ", 1000)
	var others []string
	for i := range 10 {
		s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: fmt.Sprint("other ", i)})
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, s.ID)
		for j := range 3 {
			if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", j), Content: big}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 4 {
		if _, err := core.CreateMemory(ctx, alice, b.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/b/%d.md", i), Content: big}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.LookBehind(ctx); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := core.CreateMemory(ctx, alice, b.ID, memstore.MemoryCreate{Path: "/b/held.md", Content: "small"})
		held <- err
	}()
	// Held back while nothing indexes: else the check below would hold
	// whatever the rounds' order.
	select {
	case err := <-held:
		t.Fatalf("the write of a store past the limit went before any round: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	defer postgres.OnRoundClaimed(func() { time.Sleep(50 * time.Millisecond) })()
	db.StartIndexer()
	select {
	case err := <-held:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the write held back still waits")
	}
	if n := count(t, conn, `SELECT count(*) FROM search_queue WHERE store_id = ANY($1)`, others); n == 0 {
		t.Errorf("the other stores' older queue was all indexed before the write held back went: want the waiting store's first")
	}
	db.StopIndexer()
}
