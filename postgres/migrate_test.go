package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestMemoryCountMigration takes a database back to the schema before
// stores kept the count and size of their memories (migrations 0005 and
// 0007), with stores of 0, 1 and 5 live memories, and opens it: each
// store's count and content size are those of its live memories, as the
// store and the limit of memories per store show.
func TestMemoryCountMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	w, err := db.CreateWorkspace(ctx, "counted")
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_migration"}}
	co := memstore.NewCore(db)
	live, size := map[string]int{}, map[string]int64{}
	for s, n := range []int{0, 1, 5} {
		st, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: fmt.Sprintf("store %d", s)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n + 1 {
			m, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", i), Content: strings.Repeat("x", i)})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 { // one created and deleted in each
				if err := co.DeleteMemory(ctx, c, st.ID, m.ID, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		live[st.ID] = n
		size[st.ID] = int64(n * (n + 1) / 2) // the deleted one was empty
	}
	db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// The migrations after 0005 go too, to be made again (webhooks).
	for _, q := range []string{`DROP TABLE webhook_deliveries, webhook_outbox, webhook_endpoints`, `DROP FUNCTION webhook_outbox_stores, webhook_outbox_events, webhook_outbox_add CASCADE`,
		`ALTER TABLE stores DROP COLUMN memory_count, DROP COLUMN content_size`, `DELETE FROM schema_migrations WHERE version >= 5`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)

	const limit = 6
	co = memstore.NewCore(mustOpenAt(t, url, postgres.Options{}), memstore.MaxMemoriesPerStore(limit))
	for id, n := range live {
		st, err := co.Store(ctx, c, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.MemoryCount != int64(n) || st.ContentSize != size[id] {
			t.Errorf("store %s reports %d memories of %d bytes, want %d of %d", id, st.MemoryCount, st.ContentSize, n, size[id])
		}
		made := 0
		for i := 0; made <= limit; i++ {
			if _, err := co.CreateMemory(ctx, c, id, memstore.MemoryCreate{Path: fmt.Sprintf("/new/%d.md", i), Content: "y"}); err != nil {
				if memstore.ErrorCode(err) != memstore.EInvalid {
					t.Fatal(err)
				}
				break
			}
			made++
		}
		if made != limit-n {
			t.Errorf("store %s with %d memories took %d more under a limit of %d, want %d", id, n, made, limit, limit-n)
		}
	}
}
