package dirsync_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dirsync"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

const index = "- [A](a.md) — first\n"

// TestThreeWay checks the decision for each combination of a change here
// and a change in the store, from a directory in step with its store.
func TestThreeWay(t *testing.T) {
	type side func(tb testing.TB, s *server, dir string)
	edit := func(p, c string) side {
		return func(tb testing.TB, s *server, dir string) { write(tb, dir, map[string]string{p[1:]: c}) }
	}
	del := func(p string) side {
		return func(tb testing.TB, s *server, dir string) { remove(tb, dir, p[1:]) }
	}
	put := func(p, c string) side {
		return func(tb testing.TB, s *server, dir string) { s.put(tb, p, c) }
	}
	rm := func(p string) side {
		return func(tb testing.TB, s *server, dir string) { s.rm(tb, p) }
	}
	conflictCopy := "f.conflict-laptop-20260901T123456Z.md"
	tests := []struct {
		name          string
		prefer        string
		local, remote side
		// want is the content of /f.md and /MEMORY.md on both sides after
		// the sync ("" for none).
		wantF, wantIndex string
		wantChanges      []string
		wantCopy         string // content of the conflict copy, "" for none
		wantWinner       string
	}{
		{name: "nothing", wantF: "base\n", wantIndex: index},
		{name: "local edit", local: edit("/f.md", "mine\n"), wantF: "mine\n", wantIndex: index,
			wantChanges: []string{"push /f.md"}},
		{name: "remote edit", remote: put("/f.md", "theirs\n"), wantF: "theirs\n", wantIndex: index,
			wantChanges: []string{"pull /f.md"}},
		{name: "local delete", local: del("/f.md"), wantIndex: index,
			wantChanges: []string{"delete_remote /f.md"}},
		{name: "remote delete", remote: rm("/f.md"), wantIndex: index,
			wantChanges: []string{"delete_local /f.md"}},
		{name: "both delete", local: del("/f.md"), remote: rm("/f.md"), wantIndex: index},
		{name: "same edit on both sides", local: edit("/f.md", "same\n"), remote: put("/f.md", "same\n"),
			wantF: "same\n", wantIndex: index},
		{name: "local new file", local: edit("/new.md", "n\n"), wantF: "base\n", wantIndex: index,
			wantChanges: []string{"create /new.md"}},
		{name: "both edit: the store keeps the path", local: edit("/f.md", "mine\n"), remote: put("/f.md", "theirs\n"),
			wantF: "theirs\n", wantIndex: index, wantCopy: "mine\n", wantWinner: "remote"},
		{name: "both edit, local preferred", prefer: dirsync.PreferLocal,
			local: edit("/f.md", "mine\n"), remote: put("/f.md", "theirs\n"),
			wantF: "mine\n", wantIndex: index, wantChanges: nil, wantCopy: "theirs\n", wantWinner: "local"},
		{name: "deleted here, edited there: restored", local: del("/f.md"), remote: put("/f.md", "theirs\n"),
			wantF: "theirs\n", wantIndex: index, wantChanges: []string{"pull /f.md (restored)"}},
		{name: "edited here, deleted there: re-created", local: edit("/f.md", "mine\n"), remote: rm("/f.md"),
			wantF: "mine\n", wantIndex: index, wantChanges: []string{"create /f.md (re-created)"}},
		{name: "index edited on both sides: merged",
			local:  edit("/MEMORY.md", index+"- [Mine](m.md) — here\n"),
			remote: put("/MEMORY.md", "- [Theirs](t.md) — there\n"+index),
			wantF:  "base\n", wantIndex: index + "- [Mine](m.md) — here\n- [Theirs](t.md) — there\n",
			wantChanges: []string{"merge /MEMORY.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := pulled(t, "/f.md", "base\n", "/MEMORY.md", index)
			if tt.local != nil {
				tt.local(t, s, dir)
			}
			if tt.remote != nil {
				tt.remote(t, s, dir)
			}
			o := s.options(dir)
			o.Prefer = tt.prefer
			rep := mustSync(t, o)

			want := map[string]string{}
			if tt.wantF != "" {
				want["/f.md"] = tt.wantF
			}
			want["/MEMORY.md"] = tt.wantIndex
			if strings.Contains(tt.name, "new file") {
				want["/new.md"] = "n\n"
			}
			copies := s.inStep(t, dir, want)
			if diff := cmp.Diff(tt.wantChanges, changes(rep)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if tt.wantCopy == "" {
				if len(copies) != 0 || len(rep.Conflicts) != 0 {
					t.Errorf("conflicts %v, copies %v; want none", rep.Conflicts, copies)
				}
			} else {
				wantConflicts := []dirsync.Conflict{{Path: "/f.md", Winner: tt.wantWinner, Kept: conflictCopy}}
				if diff := cmp.Diff(wantConflicts, rep.Conflicts); diff != "" {
					t.Errorf("conflicts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{conflictCopy: tt.wantCopy}, copies); diff != "" {
					t.Errorf("conflict copies (-want +got):\n%s", diff)
				}
			}
			if rep.Findings() != (tt.wantCopy != "") {
				t.Errorf("Findings() = %v", rep.Findings())
			}
			// A second sync finds everything in step.
			again := mustSync(t, o)
			if len(again.Changes)+len(again.Conflicts)+len(again.Skipped) != 0 || again.Unchanged != len(want) {
				t.Errorf("second sync: %+v", again)
			}
		})
	}
}

// TestFirstSync: a directory and a store that were never synced meet;
// files on one side only cross over, equal files are agreed, different
// ones conflict (both kept), and the index is merged.
func TestFirstSync(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/remote.md", "r\n")
	s.put(t, "/both.md", "same\n")
	s.put(t, "/differs.md", "theirs\n")
	s.put(t, "/MEMORY.md", "- b\n- a\n")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"local/deep/l.md": "l\n", "both.md": "same\n", "differs.md": "mine\n", "MEMORY.md": "- a\n- c\n",
	})
	rep := mustSync(t, s.options(dir))
	want := map[string]string{
		"/remote.md": "r\n", "/both.md": "same\n", "/differs.md": "theirs\n",
		"/local/deep/l.md": "l\n", "/MEMORY.md": "- a\n- c\n- b\n",
	}
	copies := s.inStep(t, dir, want)
	if diff := cmp.Diff(map[string]string{"differs.conflict-laptop-20260901T123456Z.md": "mine\n"}, copies); diff != "" {
		t.Errorf("copies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"create /local/deep/l.md", "merge /MEMORY.md", "pull /remote.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if rep.Unchanged != 1 {
		t.Errorf("unchanged %d, want 1 (both.md)", rep.Unchanged)
	}
	// The state file names the store and is never synced.
	data, err := os.ReadFile(filepath.Join(dir, dirsync.StateFile))
	if err != nil || !strings.Contains(string(data), s.store) {
		t.Errorf("state file: %q, %v", data, err)
	}
	if _, ok := s.files(t)["/"+dirsync.StateFile]; ok {
		t.Error("the state file was uploaded")
	}
}

// TestUnchangedFilesKeepTheirTime: a sync never rewrites a file it has no
// reason to, and a pull rewrites only the file pulled.
func TestUnchangedFilesKeepTheirTime(t *testing.T) {
	s, dir := pulled(t, "/a.md", "a\n", "/b.md", "b\n")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, f := range []string{"a.md", "b.md"} {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	s.put(t, "/b.md", "b2\n")
	mustSync(t, s.options(dir))
	mustSync(t, s.options(dir))
	fa, err := os.Stat(filepath.Join(dir, "a.md"))
	if err != nil || !fa.ModTime().Equal(old) {
		t.Errorf("a.md: %v, %v; want its time kept", fa.ModTime(), err)
	}
	fb, err := os.Stat(filepath.Join(dir, "b.md"))
	if err != nil || fb.ModTime().Equal(old) {
		t.Errorf("b.md was not rewritten: %v", err)
	}
}

// TestRename: a rename on either side is a deletion and a creation, and
// reaches the other side as such.
func TestRename(t *testing.T) {
	s, dir := pulled(t, "/old.md", "moved here\n", "/theirs/x.md", "x\n")

	if err := os.Rename(filepath.Join(dir, "old.md"), filepath.Join(dir, "new.md")); err != nil {
		t.Fatal(err)
	}
	m, err := memstore.FindMemory(t.Context(), memstore.NewCore(s.DB), &memstore.Caller{WorkspaceID: s.ws.ID, Actor: s.by}, s.store, "/theirs/x.md")
	if err != nil {
		t.Fatal(err)
	}
	newPath := "/renamed/y.md"
	if _, err := sqlitetest.Writer(s.DB).UpdateMemory(t.Context(), s.ws.ID, s.store, m.ID, memstore.MemoryUpdate{Path: &newPath}, s.by); err != nil {
		t.Fatal(err)
	}
	rep := mustSync(t, s.options(dir))
	want := map[string]string{"/new.md": "moved here\n", "/renamed/y.md": "x\n"}
	s.inStep(t, dir, want)
	if diff := cmp.Diff([]string{"create /new.md", "delete_local /theirs/x.md", "delete_remote /old.md", "pull /renamed/y.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "theirs")); !os.IsNotExist(err) {
		t.Errorf("the emptied directory theirs/ is still there: %v", err)
	}
}

// TestSkippedFiles: oversize, binary and non-regular files are reported
// and neither uploaded nor overwritten nor deleted in the store.
func TestSkippedFiles(t *testing.T) {
	s, dir := pulled(t, "/grows.md", "small\n", "/big.md", "the store's big.md\n")
	big := strings.Repeat("x", memstore.MaxContentBytes+1)
	write(t, dir, map[string]string{
		"grows.md":      big,                                           // was synced, now too large
		"big.md":        big,                                           // the store has another version
		"exactly.md":    strings.Repeat("y", memstore.MaxContentBytes), // at the limit: synced
		"image.png":     "\x89PNG\r\n\x1a\n\x00\x00\xff\xfe",
		"notes/fine.md": "fine\n",
	})
	if err := os.Symlink(filepath.Join(dir, "notes", "fine.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	s.put(t, "/big.md", "edited in the store\n")
	rep := mustSync(t, s.options(dir))
	if diff := cmp.Diff([]string{"local /big.md", "local /grows.md", "local /image.png", "local /link.md"}, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if !rep.Findings() {
		t.Error("Findings() = false with skipped files")
	}
	if diff := cmp.Diff([]string{"create /exactly.md", "create /notes/fine.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"/grows.md": "small\n", "/big.md": "edited in the store\n",
		"/exactly.md": strings.Repeat("y", memstore.MaxContentBytes), "/notes/fine.md": "fine\n",
	}
	if diff := cmp.Diff(want, s.files(t)); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "big.md")); string(data) != big {
		t.Error("the skipped local big.md was overwritten")
	}

	// Once it shrinks, the file syncs again from its old base.
	write(t, dir, map[string]string{"grows.md": "small again\n"})
	rep = mustSync(t, s.options(dir))
	if !slices.Contains(changes(rep), "push /grows.md") {
		t.Errorf("changes %v; want push /grows.md", changes(rep))
	}
}

// hostileService is a store that lists paths a real server refuses,
// serving each with content, to check what a sync does with them.
type hostileService struct {
	memstore.MemoryService
	extra []*memstore.Memory
}

func (h *hostileService) Memories(ctx context.Context, c *memstore.Caller, store string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	page, err := h.MemoryService.Memories(ctx, c, store, f)
	if err == nil && f.Page == "" {
		for _, m := range h.extra {
			c := *m
			c.Content = ""
			page.Items = append(page.Items, memstore.ListItem{Memory: &c})
		}
	}
	return page, err
}

func (h *hostileService) Memory(ctx context.Context, c *memstore.Caller, store, id string) (*memstore.Memory, error) {
	for _, m := range h.extra {
		if m.ID == id {
			return m, nil
		}
	}
	return h.MemoryService.Memory(ctx, c, store, id)
}

// TestHostileRemotePaths: no remote path writes outside the directory or
// through a symbolic link, whether plain, encoded or through a link
// planted in the directory; each is reported.
func TestHostileRemotePaths(t *testing.T) {
	s := newServer(t, serverOptions{})
	parent := t.TempDir()
	dir := filepath.Join(parent, "mem")
	outside := filepath.Join(parent, "outside")
	write(t, outside, map[string]string{"keep.md": "outside\n"})
	write(t, dir, map[string]string{"ok.md": "ok\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	// Paths the real server accepts: they only look like traversal.
	for _, p := range []string{"/%2e%2e%2fx.md", "/a/%2E%2E/x.md", "/b/%252e%252e%252fy.md", "/linked/evil.md", "/linked/keep.md", "/..%5cz.md"} {
		s.put(t, p, "hostile\n")
	}
	s.put(t, "/fine.md", "fine\n")
	mem := func(id, path string) *memstore.Memory {
		c := "hostile\n"
		return &memstore.Memory{ID: id, StoreID: s.store, Path: path, Content: c, ContentSHA256: sha(c), ContentSize: int64(len(c))}
	}
	o := s.options(dir)
	o.Memories = &hostileService{MemoryService: s.client(), extra: []*memstore.Memory{
		mem("mem_h1", "/../x.md"), mem("mem_h2", "/a/../../x.md"), mem("mem_h3", "../x.md"), mem("mem_h4", "/ok/\x00.md"),
	}}
	rep := mustSync(t, o)

	want := []string{
		"local /linked",
		"remote ../x.md", "remote /%2e%2e%2fx.md", "remote /..%5cz.md", "remote /../x.md", "remote /a/%2E%2E/x.md",
		"remote /a/../../x.md", "remote /b/%252e%252e%252fy.md", "remote /linked/evil.md", "remote /linked/keep.md", "remote /ok/\x00.md",
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// Only the harmless paths crossed.
	local, _ := tree(t, dir)
	if diff := cmp.Diff(map[string]string{"/ok.md": "ok\n", "/fine.md": "fine\n"}, local); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"mem", "outside"}, names); diff != "" {
		t.Errorf("next to the directory (-want +got):\n%s", diff)
	}
	if o, _ := tree(t, outside); !cmp.Equal(o, map[string]string{"/keep.md": "outside\n"}) {
		t.Errorf("the linked directory changed: %v", o)
	}
	// Nothing was deleted or uploaded because of the link either.
	if got := s.files(t)["/linked/keep.md"]; got != "hostile\n" {
		t.Errorf("/linked/keep.md in the store = %q", got)
	}
	if _, ok := s.files(t)["/ok.md"]; !ok {
		t.Error("ok.md was not uploaded")
	}
}

// TestTeamScope: the team scope syncs team/ and never uploads a file with
// a credential, which it reports by kind; the private scope leaves team/
// alone on both sides.
func TestTeamScope(t *testing.T) {
	s := newServer(t, serverOptions{})
	private := newServer(t, serverOptions{})
	dir := t.TempDir()
	token := "ghp_" + strings.Repeat("A1b2C3", 6) // assembled: no credential in this file
	write(t, dir, map[string]string{
		"mine.md":        "private\n",
		"team/shared.md": "for the team\n",
		"team/leaky.md":  "deploy with " + token + "\n",
		"team/MEMORY.md": "- [Shared](shared.md) — team notes\n",
	})
	o := s.options(filepath.Join(dir, "team"))
	o.Scope = dirsync.ScopeTeam
	rep := mustSync(t, o)
	want := map[string]string{"/shared.md": "for the team\n", "/MEMORY.md": "- [Shared](shared.md) — team notes\n"}
	if diff := cmp.Diff(want, s.files(t)); diff != "" {
		t.Errorf("team store (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]dirsync.Skip{{Path: "/leaky.md", Side: "local", Reason: "holds a credential, which a sync never uploads", Rule: "github-token"}}, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}

	// The private scope: team/ is not its business, on either side.
	private.put(t, "/team/intruder.md", "x\n")
	rep = mustSync(t, private.options(dir))
	if diff := cmp.Diff(map[string]string{"/mine.md": "private\n", "/team/intruder.md": "x\n"}, private.files(t)); diff != "" {
		t.Errorf("private store (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"remote /team/intruder.md"}, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "team", "intruder.md")); !os.IsNotExist(err) {
		t.Errorf("team/intruder.md was written by the private scope: %v", err)
	}
}

// TestDryRun: a dry run reports the plan and changes nothing anywhere.
func TestDryRun(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/r.md", "r\n")
	s.put(t, "/c.md", "theirs\n")
	dir := t.TempDir()
	write(t, dir, map[string]string{"l.md": "l\n", "c.md": "mine\n"})
	o := s.options(dir)
	o.DryRun = true
	rep := mustSync(t, o)
	if diff := cmp.Diff([]string{"create /l.md", "pull /r.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != "/c.md" || !rep.DryRun {
		t.Errorf("conflicts %+v", rep.Conflicts)
	}
	local, copies := tree(t, dir)
	if diff := cmp.Diff(map[string]string{"/l.md": "l\n", "/c.md": "mine\n"}, local); diff != "" || len(copies) != 0 {
		t.Errorf("directory changed (-want +got):\n%s %v", diff, copies)
	}
	if diff := cmp.Diff(map[string]string{"/r.md": "r\n", "/c.md": "theirs\n"}, s.files(t)); diff != "" {
		t.Errorf("store changed (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, dirsync.StateFile)); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote the state file: %v", err)
	}
	// A dry run of a directory that does not exist does not make it.
	o.Dir = filepath.Join(dir, "missing")
	if _, err := dirsync.Sync(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.Dir); !os.IsNotExist(err) {
		t.Errorf("a dry run made the directory: %v", err)
	}
}

// TestState: a directory synced with one store refuses another, and a
// damaged state file is a local error; both leave everything as it was.
func TestState(t *testing.T) {
	s, dir := pulled(t, "/a.md", "a\n")
	o := s.options(dir)
	o.StoreID = "memstore_other"
	if _, err := dirsync.Sync(t.Context(), o); !errors.Is(err, dirsync.ErrOtherStore) {
		t.Errorf("sync with another store: %v; want ErrOtherStore", err)
	}
	write(t, dir, map[string]string{dirsync.StateFile: "{not json"})
	if _, err := dirsync.Sync(t.Context(), s.options(dir)); !errors.Is(err, dirsync.ErrLocal) {
		t.Errorf("damaged state: %v; want ErrLocal", err)
	}
	if got := s.files(t); !cmp.Equal(got, map[string]string{"/a.md": "a\n"}) {
		t.Errorf("store changed: %v", got)
	}
	// A bad credential is the store's error.
	remove(t, dir, dirsync.StateFile)
	o = s.options(dir)
	c := s.client()
	c.APIKey = "sk-memstore-wrong"
	o.Memories = c
	if _, err := dirsync.Sync(t.Context(), o); !errors.Is(err, dirsync.ErrRemote) || memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("bad key: %v; want ErrRemote with authentication_error", err)
	}
}

// racingService changes a memory in the store just before the sync's
// update of it, as a concurrent writer would, times times.
type racingService struct {
	memstore.MemoryService
	s     *server
	tb    testing.TB
	times int
	n     int
}

func (r *racingService) UpdateMemory(ctx context.Context, c *memstore.Caller, store, id string, u memstore.MemoryUpdate) (*memstore.Memory, error) {
	if r.n < r.times {
		r.n++
		m, err := r.s.DB.Memory(ctx, r.s.ws.ID, r.s.store, id)
		if err != nil {
			r.tb.Error(err)
		} else {
			r.s.put(r.tb, m.Path, "raced "+string(rune('0'+r.n))+"\n")
		}
	}
	return r.MemoryService.UpdateMemory(ctx, c, store, id, u)
}

// TestRacedPush: a push that loses to a concurrent writer (409) is planned
// again, and settled as a conflict that keeps both versions; after two
// replans a path that keeps moving is left for the next sync, reported.
func TestRacedPush(t *testing.T) {
	for _, tt := range []struct {
		name       string
		prefer     string
		races      int
		wantPasses int
		wantStore  string
		wantLocal  string
		wantCopies []string
		wantSkips  []string
	}{
		{name: "one race", races: 1, wantPasses: 2,
			wantStore: "raced 1\n", wantLocal: "raced 1\n", wantCopies: []string{"mine\n"}},
		{name: "endless races", prefer: dirsync.PreferLocal, races: 5, wantPasses: 3,
			wantStore: "raced 3\n", wantLocal: "mine\n", wantSkips: []string{"remote /f.md"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := pulled(t, "/f.md", "base\n")
			write(t, dir, map[string]string{"f.md": "mine\n"})
			o := s.options(dir)
			o.Prefer = tt.prefer
			o.Memories = &racingService{MemoryService: s.client(), s: s, tb: t, times: tt.races}
			rep := mustSync(t, o)
			if rep.Passes != tt.wantPasses {
				t.Errorf("%d passes, want %d", rep.Passes, tt.wantPasses)
			}
			if got := s.files(t)["/f.md"]; got != tt.wantStore {
				t.Errorf("store has %q, want %q", got, tt.wantStore)
			}
			local, copies := tree(t, dir)
			if local["/f.md"] != tt.wantLocal {
				t.Errorf("f.md = %q, want %q", local["/f.md"], tt.wantLocal)
			}
			var got []string
			for _, c := range copies {
				got = append(got, c)
			}
			if diff := cmp.Diff(tt.wantCopies, got); diff != "" {
				t.Errorf("conflict copies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSkips, skips(rep)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadOnlyToken: with the token of a session that has the store
// attached read-only, a sync pulls, and reports the pushes the store
// refuses instead of failing.
func TestReadOnlyToken(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/a.md", "a\n")
	_, _, token, err := memstore.NewCore(s.DB).CreateSession(t.Context(), &memstore.Caller{WorkspaceID: s.ws.ID, Actor: s.by}, memstore.SessionCreate{
		Stores: []memstore.AttachmentCreate{{StoreID: s.store, Access: memstore.AccessReadOnly}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := s.options(dir)
	c := s.client()
	c.APIKey = token
	o.Memories = c
	mustSync(t, o)
	write(t, dir, map[string]string{"mine.md": "mine\n"})
	s.put(t, "/a.md", "a2\n")
	rep := mustSync(t, o)
	if diff := cmp.Diff([]string{"pull /a.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != "/mine.md" || !strings.Contains(rep.Skipped[0].Reason, "read-only") {
		t.Errorf("skipped %+v; want /mine.md refused as read-only", rep.Skipped)
	}
	if _, ok := s.files(t)["/mine.md"]; ok {
		t.Error("a read-only token created a memory")
	}
}

// TestMergeLines: the index merge keeps every line of both sides, local
// order first.
func TestMergeLines(t *testing.T) {
	for _, tt := range []struct{ local, remote, want string }{
		{"", "", ""},
		{"a\n", "", "a\n"},
		{"", "b\n", "b\n"},
		{"a\nb\n", "b\nc\n", "a\nb\nc\n"},
		{"a\nb", "c\na\n", "a\nb\nc\n"},
		{"a\nb", "a", "a\nb"},
		{"x\n\ny\n", "\nz\nz\n", "x\n\ny\nz\n"},
		{"a\r\nb\r\n", "a\nb\n", "a\r\nb\r\na\nb\n"},
		{"- [A](a.md) — é\n", "- [A](a.md) — é\n- [B](b.md) — b\n", "- [A](a.md) — é\n- [B](b.md) — b\n"},
	} {
		if got := dirsync.MergeLines(tt.local, tt.remote); got != tt.want {
			t.Errorf("MergeLines(%q, %q) = %q, want %q", tt.local, tt.remote, got, tt.want)
		}
	}
}

// TestHiddenPathsNeverSync: a store that holds memories at hidden paths
// (/.git/config with a command for git to run, a hook, keys, .env) puts
// none of them in the directory, and the directory's own hidden files
// (a repository's .git/config with a credential in a URL, .env, keys)
// never reach the store; the remote ones are reported, the local ones
// left alone silently, and the rest syncs both ways.
func TestHiddenPathsNeverSync(t *testing.T) {
	c := refusingSync{
		hostile: map[string]string{
			"/.git/config":              "[core]\n\tfsmonitor = touch pwned\n",
			"/.git/hooks/post-checkout": "#!/bin/sh\ntouch pwned\n",
			"/a/.ssh/id_rsa":            "their key\n",
			"/.env":                     "TOKEN=theirs\n",
			"/x/.hidden/y.md":           "hidden\n",
			"/.memstore-sync.json":      "{}\n",
			"/notes/GIT~1/hooks/pre.md": "short name\n",
			"/notes/.envrc":             "export PATH=.\n",
			"/.anthropic-memory-store":  "marker\n",
		},
		fine: map[string]string{"/notes/ok.md": "from the store\n"},
		// The directory's hidden files are left alone silently: neither
		// reported nor uploaded.
		local: map[string]string{
			".git/config":      "[remote \"origin\"]\n\turl = https://me:secret@example.com/repo.git\n",
			".git/HEAD":        "ref: refs/heads/main\n",
			".env":             "TOKEN=mine\n",
			".ssh/id_rsa":      "my key\n",
			"sub/.hidden/z.md": "mine, hidden\n",
			".DS_Store":        "\x00\x00\x00\x01Bud1",
			"mine.md":          "mine\n",
		},
		uploaded: []string{"mine.md"},
	}
	s, dir, rep := c.run(t)
	if diff := cmp.Diff([]string{"create /mine.md", "pull /notes/ok.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}

	// The state file works as before: the next sync has nothing to do,
	// and a change to a hidden memory still reaches nothing here.
	s.put(t, "/.git/config", "[core]\n\tfsmonitor = touch pwned-again\n")
	write(t, dir, map[string]string{".env": "TOKEN=changed\n"})
	again := mustSync(t, s.options(dir))
	if len(again.Changes)+len(again.Conflicts) != 0 || again.Unchanged != 2 {
		t.Errorf("second sync: changes %v, conflicts %v, %d unchanged; want none and 2", again.Changes, again.Conflicts, again.Unchanged)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(data) != c.local[".git/config"] {
		t.Errorf(".git/config is now %q", data)
	}
	if got := s.files(t)["/.env"]; got != c.hostile["/.env"] {
		t.Errorf("/.env in the store is now %q", got)
	}
	state, err := os.ReadFile(filepath.Join(dir, dirsync.StateFile))
	if err != nil || strings.Contains(string(state), "/.") || !strings.Contains(string(state), "/mine.md") {
		t.Errorf("state file: %s, %v", state, err)
	}
}

// TestPulledFilesNeverExecutable: content from the store does not keep
// an executable bit the file had, so a remote edit cannot turn a script
// here into one that runs the store's text.
func TestPulledFilesNeverExecutable(t *testing.T) {
	s := newServer(t, serverOptions{})
	dir := t.TempDir()
	write(t, dir, map[string]string{"run.sh": "echo hello\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	mustSync(t, s.options(dir))
	s.put(t, "/run.sh", "echo pwned\n")
	if rep := mustSync(t, s.options(dir)); !slices.Equal(changes(rep), []string{"pull /run.sh"}) {
		t.Fatalf("changes %v", changes(rep))
	}
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("run.sh: mode %v, %v; want 0640", fi.Mode().Perm(), err)
	}
}

// TestUnwritableNames: memories whose paths cannot be files here (a name
// over 255 bytes, look-alikes of ".", ".." and separators, a backslash)
// and memories that are not text are skipped and reported, without
// failing the sync, whose other paths sync; a local binary file is not
// uploaded.
func TestUnwritableNames(t *testing.T) {
	s := newServer(t, serverOptions{})
	long := strings.Repeat("n", 256)
	refused := []string{
		"/" + long + ".md",         // a name over 255 bytes
		"/deep/" + long + "/x.md",  // a directory's
		"/\uff0e\uff0e/x.md",       // fullwidth ．．
		"/a/\u2025/x.md",           // two-dot leader ‥
		"/a/\u2024\u2024/y.md",     // one-dot leaders ․․
		"/a/\u2024/z.md",           // one-dot leader ․
		"/x\uff0fy.md",             // fullwidth ／
		"/x\u2215y.md",             // division slash ∕
		"/x\u2044y.md",             // fraction slash ⁄
		"/x\uff3cy.md",             // fullwidth ＼
		"/\uff0egit/config",        // ．git: .git once folded
		"/%EF%BC%8E%EF%BC%8E/w.md", // ．． percent-encoded
		"/%2egit/hooks/pre-commit", // .git percent-encoded
		`/a\b.md`,                  // a backslash
		"/binary.md",               // not text
	}
	for _, p := range refused {
		s.put(t, p, "hostile\n")
	}
	s.put(t, "/binary.md", "\x00\x01\x02")
	fine := map[string]string{
		"/fine.md":                             "fine\n",
		"/\u00bd cup.md":                       "half: NFKC makes 1⁄2 of it, which is no slash\n",
		"/日本語/ノート.md":                          "notes\n",
		"/" + strings.Repeat("m", 252) + ".md": "at the limit\n",
	}
	s.putAll(t, fine)
	dir := t.TempDir()
	write(t, dir, map[string]string{"bytes.md": "\x00\x01\x02", "mine.md": "mine\n"})
	rep, err := dirsync.Sync(t.Context(), s.options(dir))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	want := []string{"local /bytes.md"}
	for _, p := range refused {
		want = append(want, "remote "+p)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	for _, k := range rep.Skipped {
		if k.Reason == "" {
			t.Errorf("%s skipped without a reason", k.Path)
		}
	}
	wantLocal := map[string]string{"/bytes.md": "\x00\x01\x02", "/mine.md": "mine\n"}
	maps.Copy(wantLocal, fine)
	got, _ := tree(t, dir)
	if diff := cmp.Diff(wantLocal, got); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	if _, ok := s.files(t)["/bytes.md"]; ok {
		t.Error("the binary file was uploaded")
	}
	if got := s.files(t)["/mine.md"]; got != "mine\n" {
		t.Errorf("/mine.md in the store = %q", got)
	}
}

// TestPathTooLongForTheSystem: a memory whose path, below the directory,
// is longer than the system's calls take is skipped and reported.
func TestPathTooLongForTheSystem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the limit checked is Linux's PATH_MAX")
	}
	const pathMax = 4096
	dir := t.TempDir()
	for len(dir) < pathMax-900 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, serverOptions{})
	seg := strings.Repeat("s", 100)
	fits := "/" + seg + "/" + seg + ".md"
	var tooLong string
	for tooLong = "/" + seg; len(dir)+len(tooLong) < pathMax; tooLong += "/" + seg {
	}
	tooLong += ".md"
	s.put(t, fits, "fits\n")
	s.put(t, tooLong, "too long\n")
	rep := mustSync(t, s.options(dir))
	if diff := cmp.Diff([]string{"remote " + tooLong}, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pull " + fits}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestConflictCopyOfALongName: the conflict copy of a file whose name is
// near the limit gets a shortened name rather than failing the sync.
func TestConflictCopyOfALongName(t *testing.T) {
	name := strings.Repeat("é", 120) + ".md" // 243 bytes
	s, dir := pulled(t, "/"+name, "base\n")
	write(t, dir, map[string]string{name: "mine\n"})
	s.put(t, "/"+name, "theirs\n")
	rep := mustSync(t, s.options(dir))
	if len(rep.Conflicts) != 1 {
		t.Fatalf("conflicts %+v; want one", rep.Conflicts)
	}
	kept := rep.Conflicts[0].Kept
	if len(kept) > 255 || !strings.HasSuffix(kept, ".conflict-laptop-20260901T123456Z.md") || !utf8.ValidString(kept) {
		t.Errorf("kept as %q (%d bytes)", kept, len(kept))
	}
	if data, err := os.ReadFile(filepath.Join(dir, kept)); err != nil || string(data) != "mine\n" {
		t.Errorf("the copy: %q, %v", data, err)
	}
	if again := mustSync(t, s.options(dir)); len(again.Changes)+len(again.Conflicts)+len(again.Skipped) != 0 {
		t.Errorf("second sync: %+v", again)
	}
}

// TestCredentialsNeverSync: whatever the directory (a memory directory
// moved onto ~/.ssh or the home directory), a sync writes no file under a
// well-known credential or shell start-up name, in any case, and uploads
// none; and it uploads no file that holds a private key or a credential,
// in either scope. Each is reported with its reason; the rest syncs.
func TestCredentialsNeverSync(t *testing.T) {
	// Keys and tokens are assembled from parts, so that this file does not
	// look like it leaks any.
	j := func(parts ...string) string { return strings.Join(parts, "") }
	pemKey := j("-----BEGIN ", "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END ", "RSA PRIVATE KEY-----\n")
	sshKey := j("-----BEGIN ", "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END ", "OPENSSH PRIVATE KEY-----\n")
	for _, scope := range []dirsync.Scope{dirsync.ScopePrivate, dirsync.ScopeTeam} {
		t.Run(string(scope), func(t *testing.T) {
			_, _, rep := refusingSync{
				scope: scope,
				hostile: map[string]string{
					"/authorized_keys":                  "ssh-ed25519 AAAA attacker\n",
					"/notes/AUTHORIZED_KEYS":            "ssh-ed25519 AAAA attacker\n",
					"/authorized_keys2":                 "ssh-ed25519 AAAA attacker\n",
					"/id_rsa":                           "their key\n",
					"/keys/id_ecdsa_sk.pub":             "ecdsa-sk AAAA\n",
					"/known_hosts":                      "github.com ssh-ed25519 AAAA\n",
					"/known_ho\u017fts":                 "long s\n", // ſ folds to s
					"/rc":                               "touch pwned\n",
					"/config":                           "Host *\n\tProxyCommand touch pwned\n",
					"/credentials":                      "[default]\naws_access_key_id = theirs\n",
					"/_netrc":                           "machine example.com login me password theirs\n",
					"/pgpass.conf":                      "*:*:*:me:theirs\n",
					"/fish/config.fish":                 "touch pwned\n",
					"/profile.ps1":                      "New-Item pwned\n",
					"/Microsoft.PowerShell_profile.ps1": "New-Item pwned\n",
				},
				fine: map[string]string{"/notes/id_card_ideas.md": "not a key\n", "/credentials.md": "where the vault is\n"},
				local: map[string]string{
					"id_ed25519":     sshKey,
					"id_ed25519.pub": "ssh-ed25519 AAAA me\n",
					"identity":       "ssh1 key\n",
					"known_hosts":    "example.com ssh-rsa AAAA\n",
					"Credentials":    "[default]\n",
					"key.md":         pemKey,
					"deploy.md":      "the box:\n" + sshKey,
					"hosts.md":       "machine example.com\n  login me\n  password s3cret\n",
					"putty.md":       "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
					"ssh2.md":        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
					"npm.md":         "//registry.npmjs.org/:_authToken=" + j("npm_", strings.Repeat("aB3", 12)) + "\n",
					"aws.md":         j("id AKIA", "IOSFODNN7EXAMPLE here\n"),
					"mine.md":        "mine\n",
					"pub.md":         "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----\n",
				},
				localSkipped: []string{"id_ed25519", "id_ed25519.pub", "identity", "known_hosts", "Credentials", "key.md", "deploy.md", "hosts.md", "putty.md", "ssh2.md", "npm.md", "aws.md"},
				uploaded:     []string{"mine.md", "pub.md"},
			}.run(t)
			for _, k := range rep.Skipped {
				content := strings.HasSuffix(k.Path, ".md")
				switch {
				case content && (k.Rule == "" || !strings.Contains(k.Reason, "credential")):
					t.Errorf("%s skipped as %q [%s]; want for the credential it holds, by kind", k.Path, k.Reason, k.Rule)
				case !content && !strings.Contains(k.Reason, "credential or start-up file"):
					t.Errorf("%s skipped as %q; want for its name", k.Path, k.Reason)
				}
			}
		})
	}
}

// refusingSync is a sync in scope of a store that holds hostile memories,
// at paths a sync refuses to write, and fine ones, into a directory that
// holds local files, of which some are reported skipped and only those
// uploaded reach the store.
type refusingSync struct {
	scope                dirsync.Scope
	hostile, fine, local map[string]string
	localSkipped         []string // names in local
	uploaded             []string // names in local
}

// run syncs and checks that each hostile memory and each of localSkipped
// is reported skipped, that the directory holds its own files, unchanged,
// and the fine memories, and that the store holds what it held and the
// uploaded files.
func (c refusingSync) run(t *testing.T) (*server, string, *dirsync.Report) {
	t.Helper()
	s := newServer(t, serverOptions{})
	s.putAll(t, c.hostile)
	s.putAll(t, c.fine)
	dir := t.TempDir()
	write(t, dir, c.local)
	o := s.options(dir)
	o.Scope = c.scope
	rep := mustSync(t, o)

	var wantSkips []string
	for p := range c.hostile {
		wantSkips = append(wantSkips, "remote "+p)
	}
	for _, rel := range c.localSkipped {
		wantSkips = append(wantSkips, "local /"+rel)
	}
	slices.Sort(wantSkips)
	if diff := cmp.Diff(wantSkips, skips(rep)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	want := maps.Clone(c.fine)
	for rel, content := range c.local {
		want["/"+rel] = content
	}
	got, copies := tree(t, dir)
	if diff := cmp.Diff(want, got); diff != "" || len(copies) != 0 {
		t.Errorf("directory (-want +got):\n%s%v", diff, copies)
	}
	wantStore := maps.Clone(c.fine)
	maps.Copy(wantStore, c.hostile)
	for _, rel := range c.uploaded {
		wantStore["/"+rel] = c.local[rel]
	}
	if diff := cmp.Diff(wantStore, s.files(t)); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
	return s, dir, rep
}

// TestDryRunCredentials: a dry run reports a file that holds a credential
// as the sync would, skipped by kind, not as a change it would make.
func TestDryRunCredentials(t *testing.T) {
	s := newServer(t, serverOptions{})
	dir := t.TempDir()
	key := strings.Join([]string{"-----BEGIN ", "OPENSSH PRIVATE KEY-----\nb3Bl\n"}, "")
	write(t, dir, map[string]string{"key.md": key, "ok.md": "ok\n"})
	o := s.options(dir)
	o.DryRun = true
	rep := mustSync(t, o)
	if diff := cmp.Diff([]string{"create /ok.md"}, changes(rep)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]dirsync.Skip{{Path: "/key.md", Side: "local", Reason: "holds a credential, which a sync never uploads", Rule: "private-key"}}, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(s.files(t)) != 0 {
		t.Errorf("a dry run wrote to the store: %v", s.files(t))
	}
}
