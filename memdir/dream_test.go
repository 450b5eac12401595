package memdir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPendingLogs: the logs not yet consolidated come oldest first, a log
// appended to after a dream gives only its new entries, a line being
// written is left for later, and the bound cuts after a whole entry.
func TestPendingLogs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"logs/2026/01/2026-01-03.md": "- 09:00 third\n",
		"logs/2026/01/2026-01-02.md": "- 09:00 second\n  more\n- 10:00 second b\n",
		"logs/2025/12/2025-12-31.md": "- 23:00 first\n- 23:30 half-writ",
		"logs/.hidden/2026-01-01.md": "- no\n",
		"topic.md":                   "not a log\n",
	})
	parts, err := PendingLogs(dir, DreamState{}, MaxDreamLogBytes)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, p.Path+"="+p.Text)
	}
	want := []string{
		"logs/2025/12/2025-12-31.md=- 23:00 first\n",
		"logs/2026/01/2026-01-02.md=- 09:00 second\n  more\n- 10:00 second b\n",
		"logs/2026/01/2026-01-03.md=- 09:00 third\n",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("pending:\n%q\nwant\n%q", got, want)
	}

	st := DreamState{}.Consolidated(parts, time.Now())
	if parts, _ := PendingLogs(dir, st, MaxDreamLogBytes); len(parts) != 0 {
		t.Fatalf("after consolidating: %+v", parts)
	}
	// The half-written line is finished, and a new entry appended.
	f, _ := os.OpenFile(filepath.Join(dir, "logs/2025/12/2025-12-31.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("ten\n- 23:59 last\n")
	f.Close()
	parts, _ = PendingLogs(dir, st, MaxDreamLogBytes)
	if len(parts) != 1 || parts[0].Text != "- 23:30 half-written\n- 23:59 last\n" || parts[0].From != int64(len("- 23:00 first\n")) {
		t.Fatalf("after appending: %+v", parts)
	}

	// The bound: only whole entries, and the logs after wait.
	parts, _ = PendingLogs(dir, DreamState{}, len("- 23:00 first\n- 23:30 half-written\n- 23:5"))
	if len(parts) != 1 || parts[0].Text != "- 23:00 first\n- 23:30 half-written\n" {
		t.Fatalf("bounded: %+v", parts)
	}
}

// TestStagingApply: changes made in the staging copy reach the directory
// only on Apply, with the record; Discard leaves the directory as it was;
// a file changed meanwhile refuses the whole apply.
func TestStagingApply(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md": "- [Old](old.md) — old\n", "old.md": "old\n", "keep.md": "keep\n",
		"logs/2026/01/2026-01-02.md": "- 09:00 x\n", ".git/HEAD": "ref\n",
	})
	before := snapshotTree(t, dir)

	s, err := BeginStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".git")); err == nil {
		t.Fatal("the staging copy holds hidden entries")
	}
	writeFiles(t, s.Dir, map[string]string{"new.md": "new\n", "MEMORY.md": "- [New](new.md) — new\n", "logs/2026/01/2026-01-02.md": "rewritten\n"})
	os.Remove(filepath.Join(s.Dir, "old.md"))
	changes, err := s.Changes()
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range changes {
		ops = append(ops, c.Op+" "+c.Path)
	}
	if strings.Join(ops, ",") != "changed MEMORY.md,added new.md,removed old.md" {
		t.Fatalf("changes: %v", ops)
	}
	s.Discard()
	if after := snapshotTree(t, dir); after != before {
		t.Fatalf("discard changed the directory:\n%s\nwas\n%s", after, before)
	}

	// A conflict: old.md changes in the directory during the dream.
	s, _ = BeginStaging(dir)
	os.Remove(filepath.Join(s.Dir, "old.md"))
	changes, _ = s.Changes()
	writeFiles(t, dir, map[string]string{"old.md": "edited meanwhile\n"})
	if err := s.Apply(changes, nil); err == nil || !strings.Contains(err.Error(), "old.md changed") {
		t.Fatalf("apply over a change: %v", err)
	}
	s.Discard()
	if b, _ := os.ReadFile(filepath.Join(dir, "old.md")); string(b) != "edited meanwhile\n" {
		t.Fatalf("old.md = %q", b)
	}

	s, _ = BeginStaging(dir)
	writeFiles(t, s.Dir, map[string]string{"sub/new.md": "new\n"})
	os.Remove(filepath.Join(s.Dir, "old.md"))
	changes, _ = s.Changes()
	at := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	st := DreamState{Logs: map[string]int64{"logs/2026/01/2026-01-02.md": 10}}.Consolidated(nil, at)
	if err := s.Apply(changes, &st); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub/new.md")); string(b) != "new\n" {
		t.Fatalf("sub/new.md = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.md")); err == nil {
		t.Fatal("old.md survived")
	}
	st, err = ReadDreamState(dir)
	if err != nil || !st.LastDream.Equal(at) || st.Logs["logs/2026/01/2026-01-02.md"] != 10 {
		t.Fatalf("state %+v %v", st, err)
	}
	for _, e := range mustReadDir(t, dir) {
		if strings.HasPrefix(e, dreamStagingMark) || e == dreamJournalName {
			t.Errorf("left behind: %s", e)
		}
	}
}

// TestStagingInterruptedApply: an apply that stopped after its journal was
// written is finished by the next dream, before it copies anything.
func TestStagingInterruptedApply(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	s, _ := BeginStaging(dir)
	writeFiles(t, s.Dir, map[string]string{"a.md": "A\n", "c.md": "c\n"})
	os.Remove(filepath.Join(s.Dir, "b.md"))
	changes, _ := s.Changes()
	// What Apply writes before it moves anything, then a crash: a.md has
	// been moved, the rest not.
	j := dreamJournal{Staging: filepath.Base(s.Dir), State: &DreamState{Logs: map[string]int64{"logs/x.md": 3}}}
	for _, c := range changes {
		j.Changes = append(j.Changes, Change{Path: c.Path, Op: c.Op})
	}
	b, _ := json.Marshal(j)
	os.WriteFile(filepath.Join(dir, dreamJournalName), b, 0o600)
	os.Rename(filepath.Join(s.Dir, "a.md"), filepath.Join(dir, "a.md"))
	s.release()

	if err := RecoverDream(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.md": "A\n", "c.md": "c\n", "b.md": ""} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	if st, _ := ReadDreamState(dir); st.Logs["logs/x.md"] != 3 {
		t.Fatalf("state %+v", st)
	}
	for _, e := range mustReadDir(t, dir) {
		if strings.HasPrefix(e, dreamStagingMark) || e == dreamJournalName {
			t.Errorf("left behind: %s", e)
		}
	}
}

// TestStagingFitIndex: an index the dream left over its limits is rebuilt
// within them from the topic files.
func TestStagingFitIndex(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"t.md": "---\nname: T\ndescription: about t\ntype: user\n---\nT.\n"})
	s, _ := BeginStaging(dir)
	defer s.Discard()
	writeFiles(t, s.Dir, map[string]string{"MEMORY.md": strings.Repeat("- line\n", MaxIndexLines+5)})
	rebuilt, err := s.FitIndex()
	if err != nil || !rebuilt {
		t.Fatalf("rebuilt %v, %v", rebuilt, err)
	}
	x, _ := ReadIndex(filepath.Join(s.Dir, "MEMORY.md"))
	if x.Truncated() || !strings.Contains(x.Content, "(t.md)") {
		t.Fatalf("index after: %+v", x)
	}
	if rebuilt, _ := s.FitIndex(); rebuilt {
		t.Fatal("rebuilt an index within its limits")
	}
}

// snapshotTree lists every file below dir with its content.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString(rel + "=" + string(c) + "\n")
		} else {
			b.WriteString(rel + "/\n")
		}
		return nil
	})
	return b.String()
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestStagingApplyStaysInside: a directory of the memory directory that is
// a symbolic link to elsewhere is not a way out: a file the dream adds
// below it is refused, and nothing is written outside.
func TestStagingApplyStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "a\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	s, err := BeginStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Discard()
	writeFiles(t, s.Dir, map[string]string{"sub/x.md": "escaped\n"})
	changes, err := s.Changes()
	if err != nil || len(changes) != 1 || changes[0].Path != "sub/x.md" {
		t.Fatalf("changes %+v, %v", changes, err)
	}
	if err := s.Apply(changes, nil); err == nil {
		t.Fatal("applied a file below a link out of the directory")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.md")); err == nil {
		t.Fatal("the dream wrote outside the memory directory")
	}
	if _, err := os.Stat(filepath.Join(dir, dreamJournalName)); err == nil {
		t.Fatal("a refused apply left its journal")
	}
}

// TestStagingOneAtATime: a second dream of a directory waits for the
// first to finish, then sees what it applied; an entry logged during a
// dream stays in the log, and is left for the next dream.
func TestStagingOneAtATime(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"logs/2026/01/2026-01-02.md": "- 09:00 one\n"})
	first, err := BeginStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := PendingLogs(dir, DreamState{}, MaxDreamLogBytes)
	got := make(chan *Staging, 1)
	go func() {
		s, err := BeginStaging(dir)
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	select {
	case <-got:
		t.Fatal("a second dream began while the first ran")
	case <-time.After(300 * time.Millisecond):
	}
	f, _ := os.OpenFile(filepath.Join(dir, "logs/2026/01/2026-01-02.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("- 09:30 two\n")
	f.Close()
	writeFiles(t, first.Dir, map[string]string{"one.md": "one\n"})
	changes, _ := first.Changes()
	st := DreamState{}.Consolidated(parts, time.Now())
	if err := first.Apply(changes, &st); err != nil {
		t.Fatal(err)
	}
	var second *Staging
	select {
	case second = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the second dream did not begin once the first was applied")
	}
	defer second.Discard()
	if b, _ := os.ReadFile(filepath.Join(second.Dir, "one.md")); string(b) != "one\n" {
		t.Fatalf("the second dream's copy lacks the first's change: %q", b)
	}
	st, _ = ReadDreamState(dir)
	parts, _ = PendingLogs(dir, st, MaxDreamLogBytes)
	if len(parts) != 1 || parts[0].Text != "- 09:30 two\n" {
		t.Fatalf("pending after the first dream: %+v", parts)
	}
}
