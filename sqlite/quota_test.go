package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/storetest"
)

// TestQuotaConformance holds the core over SQLite to its limits: SQLite's
// one writer makes the creates racing for a workspace's last places wait
// for one another.
func TestQuotaConformance(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, l memstore.Limits, now func() time.Time) storetest.QuotaBackend {
		db := mustOpenAt(t, filepath.Join(t.TempDir(), "memstore.db"), sqlite.Options{Now: now})
		return memstore.NewCore(db, memstore.WithLimits(l), memstore.CoreClock(now))
	})
}
