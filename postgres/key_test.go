package postgres_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestKeyLimitUnderContention checks that creates racing for a
// workspace's last key cannot pass MaxAPIKeysPerWorkspace together.
// Another connection holds back inserts into api_keys until every create
// waits on a lock, so that creates which did not wait for one another
// would all have counted the same keys; still exactly one key is made.
func TestKeyLimitUnderContention(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.DB(t, migrate)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	const racers = 3
	q := u.Query()
	q.Set("pool_max_conns", "8") // room for every racer beside the pool's own connections
	u.RawQuery = q.Encode()
	db := mustOpenAt(t, u.String(), postgres.Options{})
	core := memstore.NewCore(db)
	w, err := db.CreateWorkspace(ctx, "crowded")
	if err != nil {
		t.Fatal(err)
	}
	for range memstore.MaxAPIKeysPerWorkspace - 1 {
		if _, _, err := core.CreateAPIKey(ctx, w.ID, ""); err != nil {
			t.Fatal(err)
		}
	}

	// SHARE mode lets the keys be read and counted, but not inserted.
	h := holdLock(t, dbURL, `LOCK TABLE api_keys IN SHARE MODE`)
	errs := make(chan error, racers)
	for range racers {
		go func() {
			_, _, err := core.CreateAPIKey(ctx, w.ID, "racer")
			errs <- err
		}()
	}
	if waiting := h.waitFor(t, racers, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`); waiting != racers {
		t.Fatalf("%d of %d creates wait on a lock", waiting, racers)
	}
	h.release(t)
	made := 0
	for range racers {
		if err := <-errs; err == nil {
			made++
		} else if err.Error() != memstore.ErrAPIKeyLimit(w.ID).Error() {
			t.Errorf("a create beyond the limit: %v, want %v", err, memstore.ErrAPIKeyLimit(w.ID))
		}
	}
	keys, err := db.APIKeys(ctx, w.ID, "", 0)
	if made != 1 || err != nil || len(keys) != memstore.MaxAPIKeysPerWorkspace {
		t.Errorf("%d racing creates made %d keys, and the workspace holds %d (%v); want 1 and %d",
			racers, made, len(keys), err, memstore.MaxAPIKeysPerWorkspace)
	}
}
