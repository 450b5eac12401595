package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

const ws = "wrkspc_test"

var alice = &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_alice"}}

// replicas opens n handles on one fresh database, as n processes sharing
// it would, each behind its own core limited to max memories per store.
func replicas(t *testing.T, n, max int) []*memstore.Core {
	t.Helper()
	url := pgtest.DB(t, migrate)
	cores := make([]*memstore.Core, n)
	for i := range cores {
		cores[i] = memstore.NewCore(mustOpenAt(t, url, postgres.Options{}), memstore.MaxMemoriesPerStore(max))
	}
	return cores
}

// race runs f(i) for i in [0, n) at once, as near together as goroutines
// start.
func race(n int, f func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			f(i)
		})
	}
	start.Done()
	done.Wait()
}

// TestReplicasKeepLimit proves that the per-store limit holds exactly when
// two processes create memories in one store at once: each create counts
// the memories with the store locked.
func TestReplicasKeepLimit(t *testing.T) {
	const max, writers = 5, 16
	cores := replicas(t, 2, max)
	ctx := t.Context()
	for round := range 4 {
		s, err := cores[0].CreateStore(ctx, alice, memstore.StoreCreate{Name: fmt.Sprintf("round %d", round)})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		created := 0
		race(writers, func(i int) {
			_, err := cores[i%2].CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%d.md", i), Content: "x"})
			switch memstore.ErrorCode(err) {
			case "":
				mu.Lock()
				created++
				mu.Unlock()
			case memstore.EInvalid:
			default:
				t.Errorf("create %d: %v, want success or the limit", i, err)
			}
		})
		page, err := cores[1].Memories(ctx, alice, s.ID, memstore.MemoryFilter{Limit: memstore.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if created != max || len(page.Items) != max {
			t.Fatalf("round %d: %d creates succeeded and the store holds %d memories, want %d of each", round, created, len(page.Items), max)
		}
	}
}

// TestReplicasKeepPathsApart proves that no two memories overlap when two
// processes create a path and its descendant, or rename onto overlapping
// paths, at once: the unique index alone would let them both in.
func TestReplicasKeepPathsApart(t *testing.T) {
	cores := replicas(t, 2, 0)
	ctx := t.Context()
	s, err := cores[0].CreateStore(ctx, alice, memstore.StoreCreate{Name: "paths"})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for r := range rounds {
		// Each round, writers create a path, its parent, its child, or
		// rename a memory of their own onto one of them: one of them
		// at most may end up holding one of the three.
		paths := []string{fmt.Sprintf("/r%d", r), fmt.Sprintf("/r%d/a", r), fmt.Sprintf("/r%d/a/b", r)}
		own := make([]*memstore.Memory, 6)
		for i := range own {
			if own[i], err = cores[0].CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/own/%d/%d", r, i), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		race(12, func(i int) {
			p := paths[i%3]
			var err error
			if i < 6 {
				_, err = cores[i%2].CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: p, Content: "x"})
			} else {
				_, err = cores[i%2].UpdateMemory(ctx, alice, s.ID, own[i-6].ID, memstore.MemoryUpdate{Path: &p})
			}
			if c := memstore.ErrorCode(err); c != "" && c != memstore.EPathConflict {
				t.Errorf("write of %s: %v, want success or a path conflict", p, err)
			}
		})
	}
	var all []string
	f := memstore.MemoryFilter{Limit: memstore.MaxPageSize}
	for {
		page, err := cores[1].Memories(ctx, alice, s.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			all = append(all, it.Memory.Path)
		}
		if f.Page = page.Next; f.Page == "" {
			break
		}
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if memstore.PathsOverlap(a, b) {
				t.Errorf("the store holds both %s and %s", a, b)
			}
		}
	}
	for r := range rounds {
		n := 0
		for _, p := range all {
			if strings.HasPrefix(p, fmt.Sprintf("/r%d", r)+"/") || p == fmt.Sprintf("/r%d", r) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d: %d memories hold its paths, want exactly 1", r, n)
		}
	}
}

// TestOpenHidesPassword proves that a connection string's password is in
// no error of Open, whether the string is malformed or the server cannot
// be reached.
func TestOpenHidesPassword(t *testing.T) {
	const pw = "s3cretPassw0rd"
	for _, url := range []string{
		"postgres://memstore:" + pw + "@127.0.0.1:1/memstore?connect_timeout=2",
		"postgres://memstore:" + pw + "@127.0.0.1:notaport/memstore",
		"postgres://memstore:" + pw + "@127.0.0.1:1/memstore?sslmode=bogus",
		"host=127.0.0.1 port=1 user=memstore password=" + pw + " connect_timeout=2",
	} {
		_, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err == nil {
			t.Fatalf("Open(%s) succeeded", strings.ReplaceAll(url, pw, "***"))
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("Open's error repeats the password: %s", strings.ReplaceAll(err.Error(), pw, "***"))
		}
	}
}

// TestUnreachable proves that a call made while the server cannot be
// reached fails with a retryable conflict, not an internal error.
func TestUnreachable(t *testing.T) {
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	core := memstore.NewCore(db)
	s, err := core.CreateStore(t.Context(), alice, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	// Every connection of the database is ended, and no new one is
	// allowed, as when the server goes away.
	admin, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(t.Context(), `UPDATE pg_database SET datallowconn = false WHERE datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	_, err = core.CreateMemory(t.Context(), alice, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "x"})
	var e *memstore.Error
	if memstore.ErrorCode(err) != memstore.EConflict || !asError(err, &e) || !e.Retry {
		t.Fatalf("CreateMemory with the server unreachable: %v (code %s), want a retryable %s", err, memstore.ErrorCode(err), memstore.EConflict)
	}
	if !strings.Contains(e.Message, "unreachable") {
		t.Errorf("message %q does not say the database is unreachable", e.Message)
	}
}

// clocksApart opens two processes on one database, ahead's clock an hour
// ahead of behind's, and makes a store with one memory at /a.md holding
// content, written by ahead.
func clocksApart(t *testing.T, content string) (ahead, behind *memstore.Core, s *memstore.Store, m *memstore.Memory) {
	t.Helper()
	url := pgtest.DB(t, migrate)
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ahead = memstore.NewCore(mustOpenAt(t, url, postgres.Options{Now: func() time.Time { return base.Add(time.Hour) }}))
	behind = memstore.NewCore(mustOpenAt(t, url, postgres.Options{Now: func() time.Time { return base }}))
	s, err := ahead.CreateStore(t.Context(), alice, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	m, err = ahead.CreateMemory(t.Context(), alice, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return ahead, behind, s, m
}

// TestReplicasKeepVersionOrder proves that the versions of a store stay
// in the order they were written when the processes writing them have
// clocks apart: a version written later is listed first and is not
// dated before the one it follows.
func TestReplicasKeepVersionOrder(t *testing.T) {
	ctx := t.Context()
	ahead, behind, s, m := clocksApart(t, "one")
	var want []string // newest first
	want = append(want, m.VersionID)
	for i, c := range []*memstore.Core{behind, behind, ahead, behind} {
		content := fmt.Sprint("change ", i)
		prev := m
		var err error
		if m, err = c.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Content: &content}); err != nil {
			t.Fatal(err)
		}
		if m.UpdatedAt.Before(prev.UpdatedAt) {
			t.Errorf("change %d is dated %v, before the change it follows (%v)", i, m.UpdatedAt, prev.UpdatedAt)
		}
		want = append([]string{m.VersionID}, want...)
	}
	wantVersions(t, behind, s.ID, want)
}

// TestReplicasKeepVersionOrderConcurrently: writes of one memory from
// two processes with clocks an hour apart, racing round after round,
// still leave the memory at its newest version: a write that waited for
// the store's lock dates its version after the one the write before it
// made, whichever process's clock is behind.
func TestReplicasKeepVersionOrderConcurrently(t *testing.T) {
	ctx := t.Context()
	ahead, behind, s, m := clocksApart(t, "start")
	for round := range 30 {
		race(2, func(i int) {
			content := fmt.Sprint("round ", round, " by ", i)
			if _, err := []*memstore.Core{ahead, behind}[i].UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Content: &content}); err != nil {
				t.Error(err)
			}
		})
		cur, err := behind.Memory(ctx, alice, s.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		page, err := behind.Versions(ctx, alice, s.ID, memstore.VersionFilter{MemoryID: m.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if newest := page.Items[0]; newest.ID != cur.VersionID {
			t.Fatalf("round %d: the memory is at version %s (%v), but the newest version is %s (%v)", round, cur.VersionID, cur.UpdatedAt, newest.ID, newest.CreatedAt)
		}
	}
}

// TestReplicasKeepVersionOrderOfCreates: creates, which are one
// statement each (memory_create), keep the store's versions in the
// order they were written too, from processes whose clocks are an hour
// apart: the behind one's version is dated at the store's last and its
// ID follows the last one's (id_after).
func TestReplicasKeepVersionOrderOfCreates(t *testing.T) {
	ctx := t.Context()
	ahead, behind, s, m := clocksApart(t, "one")
	want := []string{m.VersionID} // newest first
	for i, c := range []*memstore.Core{behind, behind, ahead, behind} {
		prev := m
		var err error
		if m, err = c.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/new/%d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
		if m.CreatedAt.Before(prev.CreatedAt) || m.VersionID <= prev.VersionID {
			t.Errorf("create %d made version %s at %v, not after %s at %v", i, m.VersionID, m.CreatedAt, prev.VersionID, prev.CreatedAt)
		}
		got, err := behind.Memory(ctx, alice, s.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.VersionID != m.VersionID || !got.CreatedAt.Equal(m.CreatedAt) || !got.UpdatedAt.Equal(m.UpdatedAt) {
			t.Errorf("create %d returned version %s at %v, the store has %s at %v", i, m.VersionID, m.CreatedAt, got.VersionID, got.CreatedAt)
		}
		want = append([]string{m.VersionID}, want...)
	}
	wantVersions(t, behind, s.ID, want)
}

// TestIDAfterIsIDsNext holds the database's id_after (migration 0007)
// to ids.Next, carries and a ULID of all "z"s included.
func TestIDAfterIsIDsNext(t *testing.T) {
	conn := connect(t, pgtest.DB(t, migrate))
	g := ids.NewGenerator()
	for _, id := range []string{
		g.New(memstore.VersionIDPrefix, time.Now()),
		"ver_01jdz0000000000000000000zz",
		"ver_01jdz0000000000000000000yz",
		"ver_0zzzzzzzzzzzzzzzzzzzzzzzzz",
		"ver_zzzzzzzzzzzzzzzzzzzzzzzzzz",
	} {
		var got string
		if err := conn.QueryRow(t.Context(), `SELECT id_after($1)`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := ids.Next(id); got != want {
			t.Errorf("id_after(%s) = %s, ids.Next %s", id, got, want)
		}
	}
}

// wantVersions checks that co lists the versions of store storeID, newest
// first, as want.
func wantVersions(t *testing.T, co *memstore.Core, storeID string, want []string) {
	t.Helper()
	page, err := co.Versions(t.Context(), alice, storeID, memstore.VersionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range page.Items {
		got = append(got, v.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("versions listed %q, want newest first %q", got, want)
	}
}
