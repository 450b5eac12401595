package sqlite

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/yardstick"
)

// TestYardstickPragmas keeps the SQLite yardstick of `memstore bench
// --compare` on memstore's settings: its connections set the pragmas of
// memstore's, the writer's included.
func TestYardstickPragmas(t *testing.T) {
	writer := connParams(true)
	writer.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
	for _, tt := range []struct {
		want   url.Values
		writer bool
	}{{writer, true}, {connParams(false), false}} {
		dsn := yardstick.DSN("x.db", tt.writer)
		got, err := url.ParseQuery(dsn[strings.IndexByte(dsn, '?')+1:])
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"_pragma", "_txlock"} {
			g, w := slices.Sorted(slices.Values(got[k])), slices.Sorted(slices.Values(tt.want[k]))
			if !slices.Equal(g, w) {
				t.Errorf("writer %t: the yardstick's %s are %q, memstore's %q", tt.writer, k, g, w)
			}
		}
	}
}
