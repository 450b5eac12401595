package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// prepare gives the template one table holding one row.
func prepare(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE marks (n int); INSERT INTO marks VALUES (1)`)
	return err
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestDatabasesAreFreshCopies proves that each database starts as the
// template left it, and that one test's changes stay in its database.
func TestDatabasesAreFreshCopies(t *testing.T) {
	a, b := pgtest.DB(t, prepare), pgtest.DB(t, prepare)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(t.Context(), `INSERT INTO marks VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[*pgx.Conn]int{ca: 2, cb: 1} {
		var n int
		if err := url.QueryRow(t.Context(), `SELECT count(*) FROM marks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%d rows, want %d", n, want)
		}
	}
}

// TestDropped proves that a test's database is gone once the test ends.
func TestDropped(t *testing.T) {
	var url string
	t.Run("uses", func(t *testing.T) { url = pgtest.DB(t, prepare) })
	if conn, err := pgx.Connect(t.Context(), url); err == nil {
		conn.Close(t.Context())
		t.Fatal("the database of an ended test still accepts connections")
	}
}

// TestServerRestart proves that a server of a test's own goes down, with
// its connections, and comes back on the same URL with what was
// committed before.
func TestServerRestart(t *testing.T) {
	s := pgtest.NewServer(t)
	url := s.DB(t, prepare)
	conn := connect(t, url)
	if _, err := conn.Exec(t.Context(), `INSERT INTO marks VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	s.Down(t)
	if err := conn.Ping(t.Context()); err == nil {
		t.Fatal("a connection made before the shutdown still answers")
	}
	if c, err := pgx.Connect(t.Context(), url); err == nil {
		c.Close(t.Context())
		t.Fatal("the server takes connections while down")
	}
	s.Up(t)
	var n int
	if err := connect(t, url).QueryRow(t.Context(), `SELECT count(*) FROM marks`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the restart: %d rows (%v); want 2", n, err)
	}
}
