package memdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSnapshotCreateApplyNewer: a snapshot of one directory initializes
// an empty one; a newer snapshot prompts instead of applying, and applying
// it replaces the memories and records the new time.
func TestSnapshotCreateApplyNewer(t *testing.T) {
	src, dst, snap := t.TempDir(), filepath.Join(t.TempDir(), "mem"), filepath.Join(t.TempDir(), "snap")
	writeFiles(t, src, map[string]string{
		"MEMORY.md":             "- [Style](style.md) — tabs\n",
		"style.md":              "---\nname: style\ndescription: tabs\ntype: user\n---\nTabs.\n",
		"logs/2026/01/x.md":     "- 10:00 private log\n",
		"team/MEMORY.md":        "- team\n",
		".snapshot-synced.json": `{"syncedFrom":"2020-01-01T00:00:00.000Z"}`,
	})
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	st, err := CreateSnapshot(src, snap, t1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Snapshot != "2026-01-02T03:04:05.006Z" || st.Files != 2 {
		t.Fatalf("created %+v", st)
	}
	if got := readFile(t, filepath.Join(snap, SnapshotMetaName)); got != `{"updatedAt":"2026-01-02T03:04:05.006Z"}`+"\n" {
		t.Fatalf("snapshot.json = %q", got)
	}
	for _, name := range []string{"logs", "team", SyncedMetaName} {
		if _, err := os.Lstat(filepath.Join(snap, name)); err == nil {
			t.Errorf("the snapshot holds %s", name)
		}
	}

	// No memory yet: initialize.
	st, err = CheckSnapshot(dst, snap)
	if err != nil || st.Action != SnapshotInitialize || st.Snapshot != "2026-01-02T03:04:05.006Z" || st.Applied != "" {
		t.Fatalf("check empty: %+v, %v", st, err)
	}
	if _, err := ApplySnapshot(dst, snap); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "style.md")); !strings.Contains(got, "Tabs.") {
		t.Fatalf("style.md = %q", got)
	}
	st, err = CheckSnapshot(dst, snap)
	if err != nil || st.Action != SnapshotNone || st.Applied != "2026-01-02T03:04:05.006Z" {
		t.Fatalf("check after apply: %+v, %v", st, err)
	}

	// The directory grows a memory of its own; a newer snapshot drops
	// style.md and adds review.md.
	writeFiles(t, dst, map[string]string{"mine.md": "mine\n", "logs/2026/01/y.md": "- 11:00 log\n"})
	os.Remove(filepath.Join(src, "style.md"))
	writeFiles(t, src, map[string]string{"review.md": "Review first.\n", "MEMORY.md": "- [Review](review.md)\n"})
	if _, err := CreateSnapshot(src, snap, t1.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(snap, "style.md")); err == nil {
		t.Fatal("the new snapshot still holds style.md")
	}
	st, err = CheckSnapshot(dst, snap)
	if err != nil || st.Action != SnapshotPromptUpdate || st.Snapshot != "2026-01-02T04:04:05.006Z" || st.Applied != "2026-01-02T03:04:05.006Z" {
		t.Fatalf("check newer: %+v, %v", st, err)
	}
	if _, err := ApplySnapshot(dst, snap); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"review.md": true, "style.md": false, "mine.md": false, "logs/2026/01/y.md": true} {
		if _, err := os.Stat(filepath.Join(dst, name)); (err == nil) != want {
			t.Errorf("%s present: %v, want %v", name, err == nil, want)
		}
	}
	if st, _ := CheckSnapshot(dst, snap); st.Action != SnapshotNone {
		t.Fatalf("after update: %+v", st)
	}
}

// TestSnapshotMemoryWithoutRecord: a directory with memory of its own and
// no record of a snapshot is asked, not overwritten.
func TestSnapshotMemoryWithoutRecord(t *testing.T) {
	src, dst, snap := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "snap")
	writeFiles(t, src, map[string]string{"a.md": "a\n"})
	writeFiles(t, dst, map[string]string{"b.md": "b\n"})
	if _, err := CreateSnapshot(src, snap, time.Now()); err != nil {
		t.Fatal(err)
	}
	if st, err := CheckSnapshot(dst, snap); err != nil || st.Action != SnapshotPromptUpdate {
		t.Fatalf("%+v, %v", st, err)
	}
	if st, err := CheckSnapshot(dst, filepath.Join(t.TempDir(), "none")); err != nil || st.Action != SnapshotNone {
		t.Fatalf("no snapshot: %+v, %v", st, err)
	}
}

// TestSnapshotRefusals: a snapshot is never made of a credential, never
// carries a symbolic link's target, and a hostile snapshot (a credential,
// a binary file, a broken time) is refused whole, writing nothing.
func TestSnapshotRefusals(t *testing.T) {
	src, snap := t.TempDir(), filepath.Join(t.TempDir(), "snap")
	secret := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n"
	writeFiles(t, src, map[string]string{"a.md": "a\n", "key.md": secret})
	_, err := CreateSnapshot(src, snap, time.Now())
	if err == nil || !strings.Contains(err.Error(), "credential") {
		t.Fatalf("create with a key: %v", err)
	}
	if _, err := os.Stat(snap); err == nil {
		t.Fatal("a refused snapshot was written")
	}
	os.Remove(filepath.Join(src, "key.md"))
	outside := filepath.Join(t.TempDir(), "outside.md")
	writeFiles(t, filepath.Dir(outside), map[string]string{"outside.md": "elsewhere\n"})
	if err := os.Symlink(outside, filepath.Join(src, "link.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateSnapshot(src, snap, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(snap, "link.md")); err == nil {
		t.Fatal("the snapshot followed a symbolic link")
	}

	dst := t.TempDir()
	writeFiles(t, dst, map[string]string{"keep.md": "keep\n"})
	for name, content := range map[string]string{"bad.md": secret, "bin.md": "a\x00b"} {
		writeFiles(t, snap, map[string]string{name: content})
		if _, err := ApplySnapshot(dst, snap); err == nil {
			t.Errorf("applied a snapshot with %s", name)
		}
		os.Remove(filepath.Join(snap, name))
	}
	writeFiles(t, snap, map[string]string{SnapshotMetaName: `{"updatedAt":"yesterday"}`})
	if _, err := ApplySnapshot(dst, snap); err == nil || !strings.Contains(err.Error(), "not a time") {
		t.Errorf("a broken time: %v", err)
	}
	if got := readFile(t, filepath.Join(dst, "keep.md")); got != "keep\n" {
		t.Fatalf("keep.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dst, "a.md")); err == nil {
		t.Fatal("a refused snapshot was partly applied")
	}
}

// A snapshot's file whose name the memory directory holds as something
// else than a file (a directory, such as team/) cannot be applied: the
// apply is refused before it removes or writes anything.
func TestSnapshotApplyRefusedChangesNothing(t *testing.T) {
	dir, snap := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{"mine.md": "mine\n", "team/MEMORY.md": "- team\n"})
	writeFiles(t, snap, map[string]string{
		SnapshotMetaName: `{"updatedAt":"2026-01-02T03:04:05.000Z"}`,
		"a.md":           "a\n",
		"team":           "not a directory\n",
	})
	if _, err := ApplySnapshot(dir, snap); err == nil || !strings.Contains(err.Error(), "team") {
		t.Fatalf("apply: %v, want a refusal naming team", err)
	}
	if got := readFile(t, filepath.Join(dir, "mine.md")); got != "mine\n" {
		t.Errorf("mine.md = %q", got)
	}
	for _, name := range []string{"a.md", SyncedMetaName} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}
