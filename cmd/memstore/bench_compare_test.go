package main

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/freeport"
	"github.com/memstore/memstore/internal/loadgen"
	"github.com/memstore/memstore/internal/yardstick"
)

// startYardstick serves a yardstick of engine for the test.
func startYardstick(t *testing.T, engine string) string {
	t.Helper()
	y, err := yardstick.New(t.Context(), engine, filepath.Join(t.TempDir(), "y.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(y)
	t.Cleanup(func() {
		srv.Close()
		y.Close()
	})
	return srv.URL
}

// TestBenchCompare runs bench --compare between a memstore server and
// each yardstick: both sides are measured in every round, and the
// ratios are there and finite.
func TestBenchCompare(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	bench := []string{"bench", "--url", s.url, "--api-key", s.key, "--duration", "200ms", "--concurrency", "2", "--memories", "20"}

	// The mixed mix against the map: every kind of request but search.
	code, stdout, stderr := run(t, "", append(bench, "--compare", startYardstick(t, yardstick.EngineMap), "--compare-api-key", "anything", "--mix", "mixed", "--rounds", "2", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep compareReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Rounds != 2 || rep.Mix != "mixed" || rep.Memstore.URL != s.url || len(rep.Memstore.Runs) != 2 || len(rep.Compare.Runs) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for name, m := range map[string]*loadgen.Report{"memstore": rep.Memstore.Median, "compare": rep.Compare.Median} {
		if m == nil || m.Total.Requests == 0 || len(m.Total.Errors) > 0 || m.Total.PerSecond <= 0 {
			t.Errorf("%s's median: %+v", name, m)
		}
	}
	ops := map[loadgen.Op]bool{}
	for _, r := range rep.Ratios {
		ops[r.Op] = true
		for _, v := range []float64{r.PerSecond, r.P50, r.P99, r.P999} {
			if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				t.Errorf("ratio %+v", r)
			}
		}
	}
	for _, op := range []loadgen.Op{"all", loadgen.OpRetrieve, loadgen.OpList, loadgen.OpCreate, loadgen.OpUpdate, loadgen.OpDelete} {
		if !ops[op] {
			t.Errorf("no ratio of %s: %+v", op, rep.Ratios)
		}
	}
	for _, round := range []string{"round 1/2, " + s.url, "round 2/2, " + s.url, "round 1/2, " + rep.Compare.URL, "round 2/2, " + rep.Compare.URL} {
		if strings.Count(stderr, round) != 1 {
			t.Errorf("stderr does not report %q once:\n%s", round, stderr)
		}
	}

	// The write mix against the SQLite yardstick, as a table: each
	// side's row and the ratio's for every kind of request.
	code, stdout, stderr = run(t, "", append(bench, "--compare", startYardstick(t, yardstick.EngineSQLite), "--mix", "write", "--rounds", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, op := range []string{"create", "update", "delete", "all"} {
		for _, side := range []string{"memstore", "compare", "ratio"} {
			if !hasRow(stdout, op, side) {
				t.Errorf("no %s line of %s:\n%s", side, op, stdout)
			}
		}
	}
}

// hasRow says whether a row of the table out is of op and side.
func hasRow(out, op, side string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == op && f[1] == side {
			return true
		}
	}
	return false
}

// TestBenchCompareRefused: bad flags are usage errors, and a server down
// or a mix the other server does not serve fails with a clear message.
func TestBenchCompareRefused(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	y := startYardstick(t, yardstick.EngineMap)
	bench := []string{"bench", "--url", s.url, "--api-key", s.key, "--duration", "100ms", "--concurrency", "1", "--memories", "2"}
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	down := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, tt := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--rounds", "2"}, 2, []string{"--rounds and --compare-api-key go with --compare URL"}},
		{[]string{"--compare-api-key", "k"}, 2, []string{"--rounds and --compare-api-key go with --compare URL"}},
		{[]string{"--compare", y, "--rounds", "0"}, 2, []string{"--rounds must be at least 1, not 0"}},
		{[]string{"--compare", y, "--store", "x"}, 2, []string{"leave out --store"}},
		{[]string{"--compare", "ftp://127.0.0.1"}, 2, []string{`--compare "ftp://127.0.0.1" must be http://HOST:PORT`}},
		{[]string{"--compare", down}, 1, []string{"round 1 on the server of --compare " + down, "is the server running?"}},
		{[]string{"--compare", y, "--mix", "search"}, 1, []string{"round 1 on the server of --compare " + y, "HTTP 501", "does not search"}},
	} {
		code, _, stderr := run(t, "", append(bench, tt.args...)...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d: %s", tt.args, code, tt.code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr does not say %q:\n%s", tt.args, w, stderr)
			}
		}
	}
}
