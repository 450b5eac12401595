package main

import (
	"os"
	"strings"
	"testing"
)

// TestDatabaseURL: every command that takes --db refuses a PostgreSQL
// URL, or another database URL, as a usage error (exit 2) that says so,
// never repeats the URL's password, and leaves nothing behind (a path
// such as postgres:/... made as a directory and a file).
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
	for _, db := range []struct{ url, want string }{
		{"postgres://memstore:" + password + "@db.example/memstore", "PostgreSQL is not supported by this build yet"},
		{"PostgreSQL://memstore:" + password + "@db.example/memstore", "PostgreSQL is not supported by this build yet"},
		{"mysql://memstore:" + password + "@db.example/memstore", `"mysql" databases are not supported`},
	} {
		for _, args := range commands {
			name := strings.Join(args, " ")
			t.Run(name+" "+db.url[:strings.Index(db.url, ":")], func(t *testing.T) {
				code, stdout, stderr := run(t, "", append(args, "--db", db.url)...)
				if code != 2 || !strings.Contains(stderr, db.want) || !strings.HasPrefix(stderr, "memstore ") {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, db.want)
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
	t.Setenv("MEMSTORE_DB", "postgres://memstore:"+password+"@db.example/memstore")
	if code, _, stderr := run(t, "", "stores", "ls"); code != 2 || !strings.Contains(stderr, "PostgreSQL is not supported") {
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
