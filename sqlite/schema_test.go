package sqlite_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/sqlite"
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
	path := filepath.Join(t.TempDir(), "m.db")
	mustOpenAt(t, path, sqlite.Options{})
	got := schemaText(t, path)
	storetest.Golden(t, goldenSchema, got, *update)
}

// schemaText is the schema of the database at path as SQLite keeps it:
// the header's application_id and user_version, then every object of
// sqlite_schema (tables, indexes, triggers, views, and the indexes
// SQLite makes for constraints), sorted by type and name, each with its
// SQL reduced to tokens (sqlTokens). SQLite builds its schema from that
// SQL alone, so two databases whose texts match have the same tables,
// columns (types, defaults, constraints, collations), indexes, triggers
// and views. Last come the rows the tables hold (tableRows).
func schemaText(tb testing.TB, path string) string {
	tb.Helper()
	raw := rawDB(tb, path)
	var b strings.Builder
	for _, p := range []string{"application_id", "user_version"} {
		var n int64
		if err := raw.QueryRow("PRAGMA " + p).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "PRAGMA %s = %d\n", p, n)
	}
	rows, err := raw.QueryContext(context.Background(), `SELECT type, name, tbl_name, ifnull(sql, '') FROM sqlite_schema ORDER BY type, name`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, name, table, text string
		if err := rows.Scan(&typ, &name, &table, &text); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "\n%s %s on %s\n", typ, name, table)
		if text != "" {
			b.WriteString(layout(typ, sqlTokens(text)))
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	b.WriteString(tableRows(tb, raw))
	return b.String()
}

// tableRows lists every row of every table of the database, table by
// table: of a new database, the rows its schema starts with (such as
// search_seq's). The vector queue is listed by memory, without its order
// numbers, which a migration that fills it again gives anew.
func tableRows(tb testing.TB, raw *sql.DB) string {
	tb.Helper()
	var tables []string
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			tb.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		q := `SELECT * FROM "` + table + `"`
		if table == "vector_queue" {
			q = `SELECT memory_id, workspace_id, version_id, attempts, lease_until FROM vector_queue ORDER BY memory_id`
		}
		rows, err := raw.Query(q)
		if err != nil {
			tb.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&b, "\nrow of %s\n\t%v\n", table, vals)
		}
		if err := rows.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return b.String()
}

// sqlTokens splits SQL into its tokens, leaving out comments and white
// space: words, numbers, quoted strings as written, identifiers without
// their double quotes (SQLite quotes a table's name when it renames it),
// runs of operator characters, and each other character alone.
func sqlTokens(sql string) []string {
	var toks []string
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	const ops = "<>=!|&+-*/%~^"
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				end = len(sql) - i - 4
			}
			i += end + 4
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // a doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			tok := sql[i:min(j+1, len(sql))]
			if c == '"' && len(tok) > 2 && !strings.ContainsFunc(tok[1:len(tok)-1], func(r rune) bool { return r >= 0x80 || !isWord(byte(r)) }) {
				tok = tok[1 : len(tok)-1]
			}
			toks = append(toks, tok)
			i = j + 1
		case isWord(c):
			j := i
			for j < len(sql) && isWord(sql[j]) {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		case strings.IndexByte(ops, c) >= 0:
			j := i
			for j < len(sql) && strings.IndexByte(ops, sql[j]) >= 0 && !strings.HasPrefix(sql[j:], "--") {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

// layout joins an object's tokens with single spaces, starting a new
// line for each column of a table and each statement of a trigger,
// for a reader of the golden file and of its diffs.
func layout(typ string, toks []string) string {
	var b strings.Builder
	b.WriteString("\t")
	depth, lineStart := 0, true
	for _, tok := range toks {
		if !lineStart {
			b.WriteString(" ")
		}
		b.WriteString(tok)
		lineStart = false
		switch {
		case tok == "(":
			depth++
			if typ == "table" && depth == 1 {
				b.WriteString("\n\t\t")
				lineStart = true
			}
		case tok == ")":
			depth--
		case typ == "table" && tok == "," && depth == 1,
			typ == "trigger" && (tok == ";" || strings.EqualFold(tok, "BEGIN")):
			b.WriteString("\n\t\t")
			lineStart = true
		}
	}
	b.WriteString("\n")
	return b.String()
}
