package memdir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/memdir"
)

// writeFiles writes files (path relative to dir → content) into dir.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// topic is a topic file in the newer shape.
func topic(name, description, typ string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\nmetadata:\n  type: %s\n---\n%s is a memory.\n", name, description, typ, name)
}

// TestLintClean checks that a well-kept directory has no finding.
func TestLintClean(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"MEMORY.md":                  "# User\n\n- [Role](role.md) — the user is a data engineer\n<!-- kept by hand -->\n- [Testing](feedback_testing.md) — real databases in tests\n",
		"role.md":                    topic("Role", "the user's role", "user"),
		"feedback_testing.md":        topic("Testing", "how tests run", "feedback"),
		"team/MEMORY.md":             "- [Style](style.md) — gofmt and short names\n",
		"team/style.md":              topic("Style", "code style of the team", "project"),
		"logs/2026/01/2026-01-02.md": "- 10:00 not a topic file\n",
		".memstore-sync.json":        "{}",
	})
	findings, err := memdir.Lint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 0 {
		t.Errorf("findings in a clean directory: %+v", findings)
	}
	// A directory that does not exist has none either.
	if f, err := memdir.Lint(filepath.Join(dir, "missing")); err != nil || len(f) != 0 {
		t.Errorf("missing directory: %v, %v", f, err)
	}
}

// TestLintRules makes each rule fire once, where it should.
func TestLintRules(t *testing.T) {
	dir := t.TempDir()
	long := "- [Long](long.md) — " + strings.Repeat("w", 160)
	tooLong := "- [Huge](huge.md) — " + strings.Repeat("w", 190)
	writeFiles(t, dir, map[string]string{
		"MEMORY.md": strings.Join([]string{
			"---",
			"title: index",
			"---",
			"- [Role](role.md) — the user",
			"Free text in the index",
			"- [Gone](gone.md) — deleted",
			"- [Bare](bare.md)",
			long,
			tooLong,
			"- [Away](../elsewhere.md) — outside",
			"- [Dup](dup.md) — same name as role",
			"- [Typo](typo.md) — bad type",
			"- [Fields](fields.md) — no description",
			"- [Broken](broken.md) — bad yaml",
			"- [Key](key.md) — a credential",
			"- [Big](big.md) — big",
			"- [Giant](giant.md) — giant",
		}, "\n"),
		"role.md":       topic("Role", "the user's role", "user"),
		"bare.md":       topic("Bare", "no hook in the index", "user"),
		"long.md":       topic("Long", "d", "user"),
		"huge.md":       topic("Huge", "d", "user"),
		"dup.md":        topic("role", "same name, other case", "user"),
		"typo.md":       topic("Typo", "d", "prefrence"),
		"fields.md":     "---\nname: Fields\n---\nno description, no type\n",
		"broken.md":     "---\nname: [unclosed\nnot yaml at all\n---\n",
		"key.md":        topic("Key", "d", "reference") + "token ghp_" + strings.Repeat("a", 36) + "\n",
		"big.md":        topic("Big", "d", "project") + strings.Repeat("line\n", 300),
		"giant.md":      topic("Giant", "d", "project") + strings.Repeat("x", memstore.MaxContentBytes),
		"orphan.md":     topic("Orphan", "not in the index", "user"),
		"sub/nofm.md":   "Just text, no frontmatter.\n",
		"team/style.md": topic("Style", "team style", "project") + "password in https://bob:hunter2@example.com\n",
	})
	findings, err := memdir.Lint(dir)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		rule, file string
		line       int
		sev        memdir.Severity
	}
	var got []key
	for _, f := range findings {
		if _, ok := memdir.Rules[f.Rule]; !ok {
			t.Errorf("finding with an undocumented rule: %+v", f)
		}
		if f.Message == "" {
			t.Errorf("finding without a message: %+v", f)
		}
		if strings.Contains(f.Message, "ghp_") || strings.Contains(f.Message, "hunter2") {
			t.Errorf("a finding repeats the secret: %+v", f)
		}
		got = append(got, key{f.Rule, f.File, f.Line, f.Severity})
	}
	want := []key{
		{"index-frontmatter", "MEMORY.md", 1, memdir.SeverityWarning},
		{"index-line-format", "MEMORY.md", 5, memdir.SeverityWarning},
		{"index-dangling-link", "MEMORY.md", 6, memdir.SeverityError},
		{"index-line-format", "MEMORY.md", 7, memdir.SeverityWarning},
		{"index-line-long", "MEMORY.md", 8, memdir.SeverityWarning},
		{"index-line-too-long", "MEMORY.md", 9, memdir.SeverityError},
		{"index-line-format", "MEMORY.md", 10, memdir.SeverityWarning},
		{"file-long", "big.md", 0, memdir.SeverityWarning},
		{"frontmatter-invalid", "broken.md", 0, memdir.SeverityError},
		{"frontmatter-field", "fields.md", 0, memdir.SeverityError},
		{"file-too-large", "giant.md", 0, memdir.SeverityError},
		{"secret", "key.md", 0, memdir.SeverityWarning},
		{"index-missing-topic", "orphan.md", 0, memdir.SeverityWarning},
		// dup.md comes first in the walk, so role.md is the duplicate.
		{"name-duplicate", "role.md", 0, memdir.SeverityWarning},
		{"index-missing-topic", "sub/nofm.md", 0, memdir.SeverityWarning},
		{"frontmatter-missing", "sub/nofm.md", 1, memdir.SeverityError},
		{"index-missing", "team/MEMORY.md", 0, memdir.SeverityError},
		{"secret", "team/style.md", 0, memdir.SeverityError},
		{"type-unknown", "typo.md", 0, memdir.SeverityError},
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", dump(got), dump(want))
	}
}

func dump[T any](v []T) string {
	var b strings.Builder
	for _, x := range v {
		fmt.Fprintf(&b, "  %+v\n", x)
	}
	return b.String()
}

// TestLintIndexLimits checks the findings for an index over and near its
// limits.
func TestLintIndexLimits(t *testing.T) {
	tests := []struct {
		name  string
		index string
		rules []string
	}{
		{"150 short lines", strings.Repeat("# h\n", 150), []string{"index-near-lines"}},
		{"201 short lines", strings.Repeat("# h\n", 201), []string{"index-over-lines"}},
		{"21,000 units", strings.Repeat("# "+strings.Repeat("h", 138)+"\n", 150), []string{"index-near-lines", "index-near-size"}},
		{"26,000 units", strings.Repeat("# "+strings.Repeat("h", 128)+"\n", 200), []string{"index-near-lines", "index-over-size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"MEMORY.md": tt.index})
			findings, err := memdir.Lint(dir)
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range findings {
				rules = append(rules, f.Rule)
			}
			slices.Sort(rules)
			if !slices.Equal(rules, tt.rules) {
				t.Errorf("rules %v, want %v", rules, tt.rules)
			}
		})
	}
}

// TestFixIndexNewestFirst checks that --fix keeps the newest memories when
// the index cannot hold them all, ordering by the frontmatter's modified,
// else the file's time.
func TestFixIndexNewestFirst(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	files := map[string]string{}
	const n = 230
	for i := range n {
		files[fmt.Sprintf("m%03d.md", i)] = fmt.Sprintf("---\nname: Memory %d\ndescription: memory number %d\nmetadata:\n  type: project\n  modified: %s\n---\nbody\n", i, i, base.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
	}
	// Without modified: the file's time decides (the newest of all).
	files["plain.md"] = "---\nname: Plain\ndescription: no modified\ntype: user\n---\n"
	// Without frontmatter: the file name and the old index's hook.
	files["nofm.md"] = "Some fact.\n"
	files["MEMORY.md"] = "- [Old title](nofm.md) — hook from the old index\n"
	writeFiles(t, dir, files)
	future := base.Add(1000 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "plain.md"), future, future); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "nofm.md"), base.Add(-time.Hour), base.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}

	res, err := memdir.FixIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Entries != 200 || len(res[0].Omitted) != n+2-200 || !res[0].Changed {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(ls) != 200 {
		t.Fatalf("%d lines", len(ls))
	}
	if ls[0] != "- [Plain](plain.md) — no modified" {
		t.Errorf("first line %q, want the newest file", ls[0])
	}
	if ls[1] != fmt.Sprintf("- [Memory %d](m%03d.md) — memory number %d", n-1, n-1, n-1) {
		t.Errorf("second line %q", ls[1])
	}
	// The oldest are the ones omitted: m000..m030 and nofm.md.
	if res[0].Omitted[len(res[0].Omitted)-1] != "nofm.md" || res[0].Omitted[0] != "m030.md" {
		t.Errorf("omitted %v", res[0].Omitted)
	}
	x := memdir.LoadIndex(string(b))
	if x.Truncated() {
		t.Errorf("the rebuilt index is over the limits: %s", x.Warning)
	}
	// Running it again changes nothing.
	res, err = memdir.FixIndex(dir)
	if err != nil || res[0].Changed {
		t.Errorf("second fix: %+v, %v", res, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "MEMORY.md"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("index mode %v, %v", fi.Mode(), err)
	}
}

// TestFixIndexSize checks that the rebuilt index stays under 25,000 units
// with long lines, and keeps the old index's title and hook for a file
// without frontmatter.
func TestFixIndexSize(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"MEMORY.md": "- [Kept title](nofm.md) — kept hook\n"}
	files["nofm.md"] = "Some fact.\n"
	long := strings.Repeat("n", 140)
	for i := range 190 {
		files[fmt.Sprintf("%s%03d.md", long, i)] = topic(fmt.Sprintf("T%d", i), "d", "user")
	}
	writeFiles(t, dir, files)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "nofm.md"), old.Add(time.Hour*2), old.Add(time.Hour*2)); err != nil {
		t.Fatal(err)
	}
	res, err := memdir.FixIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	x := memdir.LoadIndex(string(b))
	if x.Truncated() || x.Units > memdir.MaxIndexUnits {
		t.Errorf("index of %d units cut: %s", x.Units, x.Warning)
	}
	if len(res[0].Omitted) == 0 || res[0].Entries+len(res[0].Omitted) != 191 {
		t.Errorf("result %+v", res[0])
	}
	if !strings.HasPrefix(string(b), "- [Kept title](nofm.md) — kept hook\n") {
		t.Errorf("the newest line is %q", strings.SplitN(string(b), "\n", 2)[0])
	}
}

// TestFixIndexTeam checks that the team directory gets its own index, and
// that a directory with nothing in it gets none.
func TestFixIndexTeam(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"team/a.md": topic("A", "team memory a", "project"),
		"team/b.md": topic("B", "team memory b", "reference"),
	})
	res, err := memdir.FixIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Index != "team/MEMORY.md" || res[0].Entries != 2 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "MEMORY.md")); !os.IsNotExist(err) {
		t.Errorf("an empty private scope got an index: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "team", "MEMORY.md"))
	for _, want := range []string{"- [A](a.md) — team memory a\n", "- [B](b.md) — team memory b\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("team index %q lacks %q", b, want)
		}
	}
	if f, err := memdir.Lint(dir); err != nil || len(f) != 0 {
		t.Errorf("findings after fix: %+v, %v", f, err)
	}
}

// TestFixIndexKeepsMode: a rebuilt index keeps the mode its owner gave
// the old one, but never an execute bit, and no temporary file is left.
func TestFixIndexKeepsMode(t *testing.T) {
	for _, tt := range []struct{ had, want os.FileMode }{{0o644, 0o644}, {0o755, 0o644}, {0o600, 0o600}} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"MEMORY.md": "stale\n", "a.md": topic("A", "memory a", "user")})
		index := filepath.Join(dir, "MEMORY.md")
		if err := os.Chmod(index, tt.had); err != nil {
			t.Fatal(err)
		}
		if res, err := memdir.FixIndex(dir); err != nil || len(res) != 1 || !res[0].Changed {
			t.Fatalf("fix: %+v, %v", res, err)
		}
		if fi, err := os.Stat(index); err != nil || fi.Mode().Perm() != tt.want {
			t.Errorf("index of mode %#o rebuilt with mode %v, %v; want %#o", tt.had, fi.Mode().Perm(), err, tt.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("directory holds %v; want MEMORY.md and a.md", entries)
		}
	}
}

// TestLintSizeIsSyncs: lint calls a file too large exactly when sync
// skips it, over the store's limit of a memory.
func TestLintSizeIsSyncs(t *testing.T) {
	dir := t.TempDir()
	head := topic("Sized", "d", "project")
	writeFiles(t, dir, map[string]string{
		"MEMORY.md":    "- [A](at-limit.md) — a\n- [B](over.md) — b\n- [C](old-limit.md) — c\n",
		"at-limit.md":  head + strings.Repeat("x", memstore.MaxContentBytes-len(head)),
		"over.md":      head + strings.Repeat("x", memstore.MaxContentBytes-len(head)+1),
		"old-limit.md": head + strings.Repeat("x", 100_001-len(head)),
	})
	findings, err := memdir.Lint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tooLarge []string
	for _, f := range findings {
		if f.Rule == "file-too-large" {
			tooLarge = append(tooLarge, f.File)
		}
	}
	if !slices.Equal(tooLarge, []string{"over.md"}) {
		t.Errorf("file-too-large for %v; want over.md only", tooLarge)
	}
}
