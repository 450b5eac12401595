package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/postgres"
)

// TestQuotasUnderContention checks that creates racing for the last place
// of a quota cannot pass it together, on the connections of one pool as
// on the replicas of a deployment. Another connection holds back inserts
// into the table until every create waits on a lock, so that creates
// which did not wait for one another would all have counted the same
// rows; still exactly one is made.
func TestQuotasUnderContention(t *testing.T) {
	const racers = 3
	for _, tc := range []struct {
		name, table string
		limits      memstore.Limits
		// fill makes all but one of the limit's 3 places; create races
		// for the last, and want is the refusal of the others.
		fill   func(t *testing.T, co *memstore.Core, c *memstore.Caller) (create func(co *memstore.Core) error, want *memstore.Error)
		counts string // counts what the quota counts, given the workspace
	}{
		{"Stores", "stores", memstore.Limits{StoresPerWorkspace: 3},
			func(t *testing.T, co *memstore.Core, c *memstore.Caller) (func(*memstore.Core) error, *memstore.Error) {
				for range 2 {
					mustCreateStore(t, co, c)
				}
				return func(co *memstore.Core) error {
					_, err := co.CreateStore(context.Background(), c, memstore.StoreCreate{Name: "racer"})
					return err
				}, memstore.ErrStoreLimit(c.WorkspaceID, 3)
			}, `SELECT count(*) FROM stores WHERE workspace_id = $1`},
		{"Sessions", "sessions", memstore.Limits{SessionsPerWorkspace: 3},
			func(t *testing.T, co *memstore.Core, c *memstore.Caller) (func(*memstore.Core) error, *memstore.Error) {
				st := mustCreateStore(t, co, c)
				sc := memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}}
				for range 2 {
					if _, _, _, err := co.CreateSession(context.Background(), c, sc); err != nil {
						t.Fatal(err)
					}
				}
				return func(co *memstore.Core) error {
					_, _, _, err := co.CreateSession(context.Background(), c, sc)
					return err
				}, memstore.ErrSessionLimit(c.WorkspaceID, 3)
			}, `SELECT count(*) FROM sessions WHERE workspace_id = $1 AND archived_at IS NULL`},
		{"Tokens", "session_tokens", memstore.Limits{TokensPerSession: 3},
			func(t *testing.T, co *memstore.Core, c *memstore.Caller) (func(*memstore.Core) error, *memstore.Error) {
				st := mustCreateStore(t, co, c)
				s, _, _, err := co.CreateSession(context.Background(), c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := co.CreateSessionToken(context.Background(), c, s.ID, 0); err != nil {
					t.Fatal(err)
				}
				return func(co *memstore.Core) error {
					_, _, err := co.CreateSessionToken(context.Background(), c, s.ID, time.Hour)
					return err
				}, memstore.ErrTokenLimit(s.ID, 3)
			}, `SELECT count(*) FROM session_tokens WHERE workspace_id = $1 AND revoked_at IS NULL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbURL, pooled := contendedDB(t)
			// Two replicas: the racers go to both.
			cores := []*memstore.Core{
				memstore.NewCore(mustOpenAt(t, pooled, postgres.Options{}), memstore.WithLimits(tc.limits)),
				memstore.NewCore(mustOpenAt(t, pooled, postgres.Options{}), memstore.WithLimits(tc.limits)),
			}
			c := &memstore.Caller{WorkspaceID: "wrkspc_crowded", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_crowded"}}
			create, want := tc.fill(t, cores[0], c)

			made, h := raceForTheLast(t, dbURL, tc.table, racers, func(i int) error { return create(cores[i%len(cores)]) }, want)
			var n int
			if err := h.watch.QueryRow(context.Background(), tc.counts, c.WorkspaceID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if made != 1 || n != 3 {
				t.Errorf("%d racing creates made %d, and %d are counted; want 1 and 3", racers, made, n)
			}
		})
	}
}

func mustCreateStore(t *testing.T, co *memstore.Core, c *memstore.Caller) *memstore.Store {
	t.Helper()
	s, err := co.CreateStore(context.Background(), c, memstore.StoreCreate{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
