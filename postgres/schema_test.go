package postgres_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden from a new database")

// goldenSchema is the schema of a new database, as schemaText writes it.
const goldenSchema = "testdata/schema.golden"

// TestSchemaGolden holds the schema of a new database to the committed
// one: a change of the schema shows in the golden file's diff, and one
// made by mistake fails here. go test -run TestSchemaGolden -update
// rewrites the file.
func TestSchemaGolden(t *testing.T) {
	got := schemaText(t, pgtest.DB(t, migrate))
	storetest.Golden(t, goldenSchema, got, *update)
}

// pgDump is the newest of Debian's pg_dump binaries, or the one on PATH;
// the test is skipped without one.
func pgDump(tb testing.TB) string {
	tb.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	slices.SortFunc(dirs, func(a, b string) int { // by major version, as numbers
		return cmp.Or(len(a)-len(b), strings.Compare(a, b))
	})
	if len(dirs) > 0 {
		return dirs[len(dirs)-1]
	}
	p, err := exec.LookPath("pg_dump")
	if err != nil {
		tb.Skip("pg_dump not found: install Debian's postgresql-client package")
	}
	return p
}

// schemaText is the schema of the database at url as pg_dump writes it
// (--schema-only, without owners and privileges, which depend on the
// server's users): every table with its columns (types, collations,
// defaults, storage), constraint, index, function, trigger, extension
// and text search configuration, in pg_dump's order. pg_dump's comments,
// settings and blank lines are left out. Last come the tables that hold
// rows, and the versions the schema's table of versions records.
func schemaText(tb testing.TB, url string) string {
	tb.Helper()
	cmd := exec.Command(pgDump(tb), "--schema-only", "--no-owner", "--no-privileges", "--dbname", url)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		tb.Fatalf("pg_dump: %v\n%s", err, stderr)
	}
	var b strings.Builder
	blank := true
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "--"), strings.HasPrefix(line, "SET "),
			strings.HasPrefix(line, "SELECT pg_catalog.set_config"),
			strings.HasPrefix(line, `\restrict`), strings.HasPrefix(line, `\unrestrict`):
			continue
		case line == "":
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		b.WriteString(line + "\n")
		blank = false
	}
	b.WriteString(seedRows(tb, url))
	return b.String()
}

// seedRows lists the tables of the database at url that hold rows, for
// a new database those its schema starts with, and the versions recorded
// by its table of versions.
func seedRows(tb testing.TB, url string) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var b strings.Builder
	for _, table := range publicTables(tb, conn) {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n-- %d rows in %s", n, table)
		if table == "schema_migrations" || table == "memstore_schema" {
			rows, err := conn.Query(ctx, `SELECT version FROM `+table+` ORDER BY version`)
			if err != nil {
				tb.Fatal(err)
			}
			versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			if err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&b, ": versions %v", versions)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// publicTables is the names of the tables in conn's schema public, in
// order.
func publicTables(tb testing.TB, conn *pgx.Conn) []string {
	tb.Helper()
	rows, err := conn.Query(context.Background(), `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname`)
	if err != nil {
		tb.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	return tables
}
