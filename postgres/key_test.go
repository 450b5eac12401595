package postgres_test

import (
	"context"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/postgres"
)

// TestKeyLimitUnderContention checks that creates racing for a
// workspace's last key cannot pass MaxAPIKeysPerWorkspace together.
// Another connection holds back inserts into api_keys until every create
// waits on a lock, so that creates which did not wait for one another
// would all have counted the same keys; still exactly one key is made.
func TestKeyLimitUnderContention(t *testing.T) {
	ctx := context.Background()
	const racers = 3
	dbURL, pooled := contendedDB(t)
	db := mustOpenAt(t, pooled, postgres.Options{})
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

	made, _ := raceForTheLast(t, dbURL, "api_keys", racers, func(int) error {
		_, _, err := core.CreateAPIKey(ctx, w.ID, "racer")
		return err
	}, memstore.ErrAPIKeyLimit(w.ID))
	keys, err := db.APIKeys(ctx, w.ID, "", 0)
	if made != 1 || err != nil || len(keys) != memstore.MaxAPIKeysPerWorkspace {
		t.Errorf("%d racing creates made %d keys, and the workspace holds %d (%v); want 1 and %d",
			racers, made, len(keys), err, memstore.MaxAPIKeysPerWorkspace)
	}
}
