package main

import (
	"os"
	"strings"
	"testing"
)

// TestDatabaseURL: every command that takes --db refuses a database URL
// of a kind this build has no backend for as a usage error (exit 2), and
// reports a PostgreSQL server it cannot reach as an error (exit 1) that
// says which; neither repeats the URL's password or leaves anything
// behind (a path such as postgres:/... made as a directory and a file).
func TestDatabaseURL(t *testing.T) {
	clearEnv(t)
	t.Setenv("MEMSTORE_TOKEN", "")
	t.Chdir(t.TempDir())
	const password = "s3cret-pw"
	commands := [][]string{
		{"stores", "create", "notes"},
		{"ls"},
		{"sessions", "ls"},
		{"keys", "create"},
		{"keys", "ls"},
		{"mcp", "--store", "memstore_x"},
		{"tool", "--store", "memstore_x"},
		{"serve", "--addr", "127.0.0.1:0"},
	}
	// Port 1 of the loopback refuses connections at once.
	for _, db := range []struct {
		url, want string
		code      int
	}{
		{"postgres://memstore:" + password + "@127.0.0.1:1/memstore", "cannot use the PostgreSQL database postgres://memstore:xxxxx@127.0.0.1:1/memstore", 1},
		{"PostgreSQL://memstore:" + password + "@127.0.0.1:1/memstore", "cannot use the PostgreSQL database postgresql://memstore:xxxxx@127.0.0.1:1/memstore", 1},
		{"mysql://memstore:" + password + "@db.example/memstore", `"mysql" databases are not supported`, 2},
	} {
		for _, args := range commands {
			name := strings.Join(args, " ")
			t.Run(name+" "+db.url[:strings.Index(db.url, ":")], func(t *testing.T) {
				code, stdout, stderr := run(t, "", append(args, "--db", db.url)...)
				if code != db.code || !strings.Contains(stderr, db.want) || !strings.HasPrefix(stderr, "memstore ") {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, db.code, db.want)
				}
				if strings.Contains(stdout+stderr, password) {
					t.Errorf("the output repeats the URL's password: %q %q", stdout, stderr)
				}
				if left, _ := os.ReadDir("."); len(left) > 0 {
					t.Errorf("left behind: %s", left[0].Name())
				}
			})
		}
	}
	// MEMSTORE_DB is read through the same selection.
	t.Setenv("MEMSTORE_DB", "mysql://memstore:"+password+"@db.example/memstore")
	if code, _, stderr := run(t, "", "stores", "ls"); code != 2 || !strings.Contains(stderr, `"mysql" databases are not supported`) {
		t.Errorf("MEMSTORE_DB: exit %d, stderr %q", code, stderr)
	}
}

// TestDatabasePathNotURL: what precedes "://" in a path is a URL scheme
// only when it is one of more than one letter: a drive (C://) or a
// directory is still part of a file path.
func TestDatabasePathNotURL(t *testing.T) {
	for _, s := range []string{"", "C", "a b", "1pg", "dir/pg", `c:\pg`} {
		if isScheme(s) {
			t.Errorf("isScheme(%q) = true", s)
		}
	}
	for _, s := range []string{"pg", "postgres", "postgresql", "sqlite3", "a+b.c-d"} {
		if !isScheme(s) {
			t.Errorf("isScheme(%q) = false", s)
		}
	}
}
