package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestServeReadOnlyDatabase: serve refuses a database it may not write,
// saying which file and what to check, instead of serving and failing
// every request (each authentication writes the key's last use).
func TestServeReadOnlyDatabase(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	// With a key, serve has nothing to write before it serves.
	if code, stdout, stderr := run(t, "", "keys", "create", "--db", db); code != 0 {
		t.Fatalf("keys create: exit %d\n%s%s", code, stdout, stderr)
	}
	sqlitetest.ReadOnly(t, db)
	bin, err := exec.LookPath("memstore")
	if err != nil {
		t.Fatalf("memstore is not on PATH: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("serve still runs on a read-only database after 10s:\n%s", stderr.String())
	}
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Errorf("serve: %v, want exit status 1", err)
	}
	if want := "file " + db + " is read-only for this user"; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve said:\n%s\nwant %q", stderr.String(), want)
	}
}
