package dream_test

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dream"
	"github.com/memstore/memstore/internal/agentloop"
	"github.com/memstore/memstore/internal/pgtest"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
	"github.com/memstore/memstore/postgres"
)

var dreamRE = regexp.MustCompile(`\(dream (drm_[A-Za-z0-9]+)\)`)

// Two workers, as two servers on one PostgreSQL database, share the
// dreams: each dream is run once, by one of them, and every one ends.
func TestReplicasRunEachDreamOnce(t *testing.T) {
	url := pgtest.DB(t, func(ctx context.Context, url string) error {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		return db.Close()
	})
	open := func() *postgres.DB {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	var mu sync.Mutex
	runs := map[string]map[string]int{} // dream ID -> worker key -> first requests
	e := newEnv(t, a, func(r *sm.Request) sm.Response {
		if len(r.Messages) == 1 {
			m := dreamRE.FindStringSubmatch(r.System)
			if m == nil {
				return sm.Error(400, "invalid_request_error", "no dream in the system prompt")
			}
			mu.Lock()
			if runs[m[1]] == nil {
				runs[m[1]] = map[string]int{}
			}
			runs[m[1]][r.Header.Get("X-Api-Key")]++
			mu.Unlock()
		}
		time.Sleep(50 * time.Millisecond) // slow enough for both to hold dreams at once
		return sm.Answer(sm.Usage{InputTokens: 1}, sm.Text("done"))
	})
	const dreams = 8
	var ids []string
	for range dreams {
		in := e.store(t, "Notes", "/a.md", "a\n")
		ids = append(ids, e.newDream(t, in.ID, []string{e.session(t, "hello")}, false).ID)
	}
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for i, db := range []*postgres.DB{a, b} {
		w := dream.New(memstore.NewCore(db, memstore.WithDreams(true)), dream.Options{
			Model: agentloop.Config{BaseURL: e.model.URL, APIKey: []string{"sk-a", "sk-b"}[i]}, Limits: fast, Poll: 50 * time.Millisecond, Concurrency: 3})
		wg.Go(func() { w.Run(ctx) })
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for e.get(t, id).Status != "completed" {
			if time.Now().After(deadline) {
				t.Fatalf("dream %s: %s", id, e.get(t, id).RawJSON())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	workers := map[string]bool{}
	for _, id := range ids {
		if len(runs[id]) != 1 {
			t.Errorf("dream %s was run by %v, want one worker once", id, runs[id])
		}
		for k, n := range runs[id] {
			workers[k] = true
			if n != 1 {
				t.Errorf("dream %s was started %d times by %s", id, n, k)
			}
		}
	}
	if len(workers) != 2 {
		t.Logf("one worker ran every dream: %v", workers)
	}
}
