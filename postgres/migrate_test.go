package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
	for _, q := range append(dropWebhooks,
		`ALTER TABLE stores DROP COLUMN memory_count, DROP COLUMN content_size`, `DELETE FROM schema_migrations WHERE version >= 5`) {
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

// dropWebhooks undoes the webhooks' migrations (0008 to 0010), for a
// test that takes a database back to before them.
var dropWebhooks = []string{
	`DROP TABLE webhook_cursors, webhook_deliveries, webhook_endpoints`,
	`DROP FUNCTION webhook_events_of_archive, webhook_events_of_stores, webhook_cursors_of_store CASCADE`,
	`DROP FUNCTION webhook_cursors_of_endpoint, webhook_cursors_owed, webhook_feed_end, webhook_asks_feed, webhook_event_add, webhook_event_id`,
}

// TestWebhookDeliveriesMigration takes a database back to migration
// 0008, with events waiting in the outbox, and opens it: each becomes a
// pending delivery to every endpoint that wants it, with one ID per
// event, and the outbox is gone.
func TestWebhookDeliveriesMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	w, err := db.CreateWorkspace(ctx, "hooks")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	at0008, err := os.ReadFile("migrations/0008_webhooks.sql")
	if err != nil {
		t.Fatal(err)
	}
	// Two endpoints, and two events in the outbox: a store's creation,
	// which both want, and a memory's, which one wants.
	for _, q := range append(dropWebhooks, `DELETE FROM schema_migrations WHERE version >= 8`, string(at0008),
		`INSERT INTO schema_migrations (version, applied_at) VALUES (8, 0)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_every', '`+w.ID+`', '', '', 'http://127.0.0.1:9/', '{memory_store.created,memstore.memory.created}', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_endpoints VALUES ('webhook_created', '`+w.ID+`', '', '', 'http://127.0.0.1:9/', '{memory_store.created}', 'enabled', '', 'whsec_', 1, 1)`,
		`INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at) VALUES
			('`+w.ID+`', 'memory_store.created', 'memstore_a', '', '', 1000000000),
			('`+w.ID+`', 'memstore.memory.created', 'memstore_a', 'mem_a', 'memver_a', 2000000000)`) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	db = mustOpenAt(t, url, postgres.Options{})
	now := time.Now()
	ds, err := db.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 10, PerEndpoint: 10})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]string{} // the endpoints of each event's deliveries
	for _, d := range ds {
		key := d.Event.Type + " " + d.Event.ID
		events[key] = append(events[key], d.EndpointID)
		if d.Event.StoreID != "memstore_a" || d.Event.WorkspaceID != w.ID || !strings.HasPrefix(d.Event.ID, "wevt_") ||
			(d.Event.Type == memstore.WebhookMemoryCreated && (d.Event.MemoryID != "mem_a" || d.Event.VersionID != "memver_a" || d.Event.CreatedAt.Unix() != 2)) {
			t.Errorf("delivery %+v", d)
		}
	}
	if len(ds) != 3 || len(events) != 2 {
		t.Fatalf("the outbox became %d deliveries of %d events, want 3 of 2: %v", len(ds), len(events), events)
	}
	for key, eps := range events {
		slices.Sort(eps)
		want := []string{"webhook_every"}
		if strings.HasPrefix(key, memstore.WebhookStoreCreated+" ") {
			want = []string{"webhook_created", "webhook_every"}
		}
		if !slices.Equal(eps, want) {
			t.Errorf("%s went to %v, want %v", key, eps, want)
		}
	}
	var outbox bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('webhook_outbox') IS NOT NULL`).Scan(&outbox); err != nil || outbox {
		t.Errorf("the outbox is still there (%v)", err)
	}
}
