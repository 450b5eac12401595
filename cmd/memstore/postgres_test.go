package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// postgresDB returns the URL of a fresh, migrated PostgreSQL database for
// t, with a password the server does not ask for (it trusts local
// connections), so that a test can look for it in what the command says.
func postgresDB(t *testing.T, password string) string {
	t.Helper()
	raw := pgtest.DB(t, migratePostgres)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// migratePostgres brings the schema of the database at dsn up to date.
func migratePostgres(ctx context.Context, dsn string) error {
	db, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		return err
	}
	return db.Close()
}

// revokedRefusedWithin is how soon after its revocation by another
// process a key must stop working on a replica that is listening.
const revokedRefusedWithin = time.Second

// waitRefused waits until a, whose key another process revoked at
// revoked, is refused, and fails t if a request sent more than within
// after the revocation is still served.
func waitRefused(t *testing.T, a *api, revoked time.Time, within time.Duration) {
	t.Helper()
	for {
		sent := time.Now()
		status, _, err := a.call("GET", "/v1/memory_stores", nil, nil)
		if status == http.StatusUnauthorized {
			return
		}
		if err != nil || sent.Sub(revoked) > within {
			t.Fatalf("a key revoked by another process still works on a replica %v after: %d %v", sent.Sub(revoked), status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServePostgres: two servers on one PostgreSQL database are two
// replicas of one memstore. The first makes the first key and prints it,
// keeping no file; the second makes none, and each serves what the other
// wrote. 'memstore keys create' works on the database too. Nothing shows
// the URL's password.
func TestServePostgres(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	const password = "pg-s3cret"
	db := postgresDB(t, password)

	one := startServer(t, "--db", db)
	if one.key == "" {
		t.Fatalf("a first run printed no key:\n%s", one.stdout)
	}
	if !strings.Contains(one.stdout.String(), "a database that is not a file keeps no copy") {
		t.Errorf("the first key's message does not say that no copy is kept:\n%s", one.stdout)
	}
	if left, _ := os.ReadDir("."); len(left) > 0 {
		t.Errorf("serve left a file behind: %s", left[0].Name())
	}
	two := startServer(t, "--db", db)
	if out := two.stdout.String(); out != "" {
		t.Errorf("the second replica printed %q; want nothing", out)
	}
	for _, s := range []*testServer{one, two} {
		if log := s.stdout.String() + s.stderr.String(); strings.Contains(log, password) || !strings.Contains(log, "(database postgres://") {
			t.Errorf("a replica's output names its database wrongly or shows the password:\n%s", log)
		}
	}

	id := one.api(t).createStore(t, "shared")
	var got struct{ Name string }
	newAPI(two.url, one.key).must(t, "GET", "/v1/memory_stores/"+id, nil, &got)
	if got.Name != "shared" {
		t.Errorf("the second replica sees the store as %+v", got)
	}

	code, stdout, stderr := run(t, "", "keys", "create", "--db", db, "--name", "laptop", "--json")
	var key struct{ ID, Secret string }
	if code != 0 || strings.Contains(stdout+stderr, password) || json.Unmarshal([]byte(stdout), &key) != nil {
		t.Fatalf("keys create: exit %d, %q %q", code, stdout, stderr)
	}
	laptop := newAPI(two.url, key.Secret)
	laptop.must(t, "GET", "/v1/memory_stores", nil, nil)
	code, stdout, _ = run(t, "", "stores", "ls", "--db", db)
	if code != 0 || !strings.Contains(stdout, "shared") {
		t.Errorf("stores ls --db URL: exit %d, %q", code, stdout)
	}

	// Revoked by another process, the key, which the second replica has
	// just authenticated and remembers, stops working there within a
	// second, not at the end of its cache's time to live.
	if code, _, stderr := run(t, "", "keys", "revoke", "--yes", "--db", db, key.ID); code != 0 {
		t.Fatalf("keys revoke: exit %d, %s", code, stderr)
	}
	waitRefused(t, laptop, time.Now(), revokedRefusedWithin)

	// Each replica's health follows the database's: while it takes no
	// connections, /healthz is 503, so that a load balancer looks
	// elsewhere, and 200 again once it does, each within the interval
	// for which a replica keeps the outcome of a ping.
	health := func(want int) {
		t.Helper()
		for _, s := range []*testServer{one, two} {
			deadline := time.Now().Add(httpapi.HealthInterval + httpapi.HealthTimeout + time.Second)
			for {
				res, err := http.Get(s.url + "/healthz")
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("GET /healthz: %s, want %d", res.Status, want)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	health(200)
	end := pgtest.Outage(t, db)
	health(503)
	end()
	health(200)
	res, err := http.Get(two.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), `memstore_db_connections{state="idle"}`) {
		t.Errorf("/metrics has no pool statistics:\n%s", metrics)
	}
}
