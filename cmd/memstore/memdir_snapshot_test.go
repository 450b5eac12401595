package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemdirSnapshotCommands: create, then apply initializes an empty
// directory; a newer snapshot makes status say so (exit 1) and apply
// refuse without --yes, changing nothing, then apply --yes replaces the
// memories and records the snapshot applied.
func TestMemdirSnapshotCommands(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "memory")
	snap := filepath.Join(t.TempDir(), ".claude", "memory-snapshot")
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "MEMORY.md", "- [Deploys](deploys.md) — Fridays\n")
	write(src, "deploys.md", "Deploy on Fridays.\n")

	code, out, stderr := run(t, "", "memdir", "snapshot", "create", "--dir", src, "--snapshot", snap, "--json")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	var created snapshotJSON
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Done != "created" || created.Files != 2 || created.Snapshot == "" {
		t.Fatalf("create --json: %s (%v)", out, err)
	}

	code, out, _ = run(t, "", "memdir", "snapshot", "status", "--dir", dst, "--snapshot", snap)
	if code != 0 || !strings.Contains(out, "can initialize") {
		t.Fatalf("status before: exit %d: %s", code, out)
	}
	code, out, stderr = run(t, "", "memdir", "snapshot", "apply", "--dir", dst, "--snapshot", snap)
	if code != 0 || !strings.HasPrefix(out, "initialized ") {
		t.Fatalf("apply: exit %d: %s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "deploys.md")); string(b) != "Deploy on Fridays.\n" {
		t.Fatalf("deploys.md = %q", b)
	}
	code, out, _ = run(t, "", "memdir", "snapshot", "apply", "--dir", dst, "--snapshot", snap)
	if code != 1 || !strings.Contains(out, "up to date") {
		t.Fatalf("apply again: exit %d: %s", code, out)
	}

	// A local memory, then a newer snapshot.
	write(dst, "mine.md", "Mine.\n")
	write(src, "deploys.md", "Deploy on Thursdays.\n")
	if code, _, stderr := run(t, "", "memdir", "snapshot", "create", "--dir", src, "--snapshot", snap); code != 0 {
		t.Fatalf("create again: exit %d: %s", code, stderr)
	}
	code, out, _ = run(t, "", "memdir", "snapshot", "status", "--dir", dst, "--snapshot", snap, "--json")
	var st snapshotJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 1 || st.Action != "prompt-update" || st.Applied != created.SnapshotState.Snapshot || st.SnapshotState.Snapshot <= created.SnapshotState.Snapshot {
		t.Fatalf("status newer: exit %d: %s (%v)", code, out, err)
	}
	code, _, stderr = run(t, "", "memdir", "snapshot", "apply", "--dir", dst, "--snapshot", snap)
	if code != 2 || !strings.Contains(stderr, "a newer snapshot is available") || !strings.Contains(stderr, "--yes") {
		t.Fatalf("apply without --yes: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "mine.md")); string(b) != "Mine.\n" {
		t.Fatal("apply without --yes changed the directory")
	}
	code, out, stderr = run(t, "", "memdir", "snapshot", "apply", "--dir", dst, "--snapshot", snap, "--yes")
	if code != 0 || !strings.HasPrefix(out, "updated ") {
		t.Fatalf("apply --yes: exit %d: %s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "deploys.md")); string(b) != "Deploy on Thursdays.\n" {
		t.Fatalf("deploys.md = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dst, "mine.md")); err == nil {
		t.Fatal("a memory the snapshot does not have survived the update")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, ".snapshot-synced.json")); !strings.Contains(string(b), st.SnapshotState.Snapshot) {
		t.Fatalf(".snapshot-synced.json = %s", b)
	}

	// Usage errors.
	if code, _, _ := run(t, "", "memdir", "snapshot"); code != 2 {
		t.Fatalf("no subcommand: exit %d", code)
	}
	if code, _, stderr := run(t, "", "memdir", "snapshot", "create", "--agent", "x", "--dir", src); code != 2 || !strings.Contains(stderr, "--scope") {
		t.Fatalf("--agent without --scope: exit %d: %s", code, stderr)
	}
}

// TestMemdirSnapshotPublishedToStore: a snapshot published to a memory
// store by syncing its directory, and synced down elsewhere, initializes
// a memory directory there with the snapshot's time.
func TestMemdirSnapshotPublishedToStore(t *testing.T) {
	clearEnv(t)
	api, key := newStoresAPI(t)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	remote := []string{"--url", srv.URL, "--api-key", key}
	code, out, stderr := run(t, "", append([]string{"stores", "create", "snapshots", "--json"}, remote...)...)
	if code != 0 {
		t.Fatalf("stores create: exit %d: %s", code, stderr)
	}
	var st struct{ ID string }
	json.Unmarshal([]byte(out), &st)

	src, snap, pulled, dst := t.TempDir(), filepath.Join(t.TempDir(), "snap"), t.TempDir(), filepath.Join(t.TempDir(), "mem")
	os.WriteFile(filepath.Join(src, "MEMORY.md"), []byte("- [Deploys](deploys.md) — Fridays\n"), 0o600)
	os.WriteFile(filepath.Join(src, "deploys.md"), []byte("Deploy on Fridays.\n"), 0o600)
	code, out, stderr = run(t, "", "memdir", "snapshot", "create", "--dir", src, "--snapshot", snap, "--json")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	var created snapshotJSON
	json.Unmarshal([]byte(out), &created)
	for _, dir := range []string{snap, pulled} {
		if code, out, stderr := run(t, "", append([]string{"memdir", "sync", "--dir", dir, "--store", st.ID}, remote...)...); code != 0 {
			t.Fatalf("sync %s: exit %d: %s%s", dir, code, out, stderr)
		}
	}
	code, out, stderr = run(t, "", "memdir", "snapshot", "apply", "--dir", dst, "--snapshot", pulled, "--json")
	var applied snapshotJSON
	if err := json.Unmarshal([]byte(out), &applied); code != 0 || err != nil || applied.Done != "initialized" || applied.Applied != created.SnapshotState.Snapshot {
		t.Fatalf("apply: exit %d: %s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "deploys.md")); string(b) != "Deploy on Fridays.\n" {
		t.Fatalf("deploys.md = %q", b)
	}
}

// TestMemdirSnapshotAgent: an agent's memory goes to Claude Code's
// .claude/agent-memory-snapshots/NAME/ of the project, and initializes
// the agent's memory of another checkout from there.
func TestMemdirSnapshotAgent(t *testing.T) {
	clearEnv(t)
	t.Setenv("HOME", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	mem := filepath.Join(a, ".claude", "agent-memory", "code-reviewer")
	os.MkdirAll(mem, 0o700)
	os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- [Style](style.md) — tabs\n"), 0o600)
	os.WriteFile(filepath.Join(mem, "style.md"), []byte("Tabs.\n"), 0o600)
	agent := []string{"--agent", "code-reviewer", "--scope", "project", "--managed-settings", ""}
	if code, _, stderr := run(t, "", append([]string{"memdir", "snapshot", "create", "--cwd", a}, agent...)...); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	snap := filepath.Join(a, ".claude", "agent-memory-snapshots", "code-reviewer")
	if _, err := os.Stat(filepath.Join(snap, "snapshot.json")); err != nil {
		t.Fatal(err)
	}
	// The project is committed and checked out elsewhere.
	os.MkdirAll(filepath.Join(b, ".claude", "agent-memory-snapshots"), 0o700)
	if err := os.Rename(snap, filepath.Join(b, ".claude", "agent-memory-snapshots", "code-reviewer")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "", append([]string{"memdir", "snapshot", "apply", "--cwd", b}, agent...)...)
	if code != 0 || !strings.HasPrefix(out, "initialized ") {
		t.Fatalf("apply: exit %d: %s%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(b, ".claude", "agent-memory", "code-reviewer", "style.md")); string(got) != "Tabs.\n" {
		t.Fatalf("style.md = %q", got)
	}
}
