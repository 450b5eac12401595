package memdir_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/memdir"
)

// TestGuidanceCovers checks that the full guidance says everything
// docs/memory-directory.md (Prompt) says it does, and that every level
// names the directory.
func TestGuidanceCovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory") + string(filepath.Separator)
	full := memdir.Guidance(dir, false, memdir.DetailFull)
	for _, want := range []string{
		dir,                                            // what and where the directory is
		"user:", "feedback:", "project:", "reference:", // the four types
		"What not to save", "Secrets",
		"Two steps", dir + "MEMORY.md", "- [Title](file.md) — one-line hook", // saving
		"When to read",
		"check that it still exists", // verify before recommending
	} {
		if !strings.Contains(full, want) {
			t.Errorf("the guidance lacks %q", want)
		}
	}
	if strings.Contains(full, "team/") {
		t.Error("the guidance without --team mentions team memory")
	}
	team := memdir.Guidance(dir, true, memdir.DetailFull)
	for _, want := range []string{"## Team memory", dir + "team" + string(filepath.Separator), "Never put a secret in team memory"} {
		if !strings.Contains(team, want) {
			t.Errorf("the team guidance lacks %q", want)
		}
	}
	prev := len(team) + 1
	for d := memdir.DetailFull; d <= memdir.DetailMinimal; d++ {
		g := memdir.Guidance(dir, true, d)
		if !strings.Contains(g, dir) || len(g) >= prev {
			t.Errorf("detail %d: %d bytes (previous %d), names the directory: %v", d, len(g), prev, strings.Contains(g, dir))
		}
		prev = len(g)
	}
}

func indexOf(name string, n int) memdir.Index {
	var ls []string
	for i := range n {
		ls = append(ls, fmt.Sprintf("- [%s %d](m%d.md) — what %s %d is about", name, i, i, name, i))
	}
	return memdir.LoadIndex(strings.Join(ls, "\n"))
}

// TestPromptRender checks the order in which a prompt shrinks to fit:
// guidance first, then the team index, then the index, from the end.
func TestPromptRender(t *testing.T) {
	dir := "/home/u/.claude/projects/-p/memory/"
	p := memdir.Prompt{Dir: dir, Index: indexOf("Memory", 40), Team: true, TeamIndex: indexOf("Team memory", 20)}
	full, shrunk := p.Render(0)
	if shrunk || !strings.HasPrefix(full, memdir.Guidance(dir, true, memdir.DetailFull)) {
		t.Fatal("the unlimited prompt does not start with the full guidance")
	}
	for _, want := range []string{"\n\n## MEMORY.md\n\n" + p.Index.Content + "\n\n## team/MEMORY.md\n\n" + p.TeamIndex.Content + "\n"} {
		if !strings.HasSuffix(full, want) {
			t.Errorf("the prompt does not end with the indexes: %q", full[len(full)-200:])
		}
	}
	if same, _ := p.Render(memdir.Units(full)); same != full {
		t.Error("a prompt that fits exactly was changed")
	}

	indexes := "## MEMORY.md\n\n" + p.Index.Content + "\n\n## team/MEMORY.md\n\n" + p.TeamIndex.Content
	short := strings.TrimRight(memdir.Guidance(dir, true, memdir.DetailShort), "\n") + "\n\n" + indexes + "\n"
	s, shrunk := p.Render(memdir.Units(short))
	if s != short || !shrunk {
		t.Errorf("one unit short of the full prompt, want the short guidance with whole indexes; got %q", s[:100])
	}

	// Below the minimal guidance with both indexes, the team index goes
	// first, from its end.
	minimal := strings.TrimRight(memdir.Guidance(dir, true, memdir.DetailMinimal), "\n") + "\n\n" + indexes + "\n"
	s, _ = p.Render(memdir.Units(minimal) - 1)
	if !strings.Contains(s, p.Index.Content) || strings.Contains(s, p.TeamIndex.Content) {
		t.Error("the index was cut before the team index")
	}
	if !strings.Contains(s, dir+"MEMORY.md") || !strings.Contains(s, dir+"team/MEMORY.md") || !strings.Contains(s, "[Cut to fit") {
		t.Errorf("no note naming the full indexes: %q", s[len(s)-300:])
	}

	// Every limit is respected, and what is kept of an index is whole
	// lines from its start.
	for max := 40; max <= memdir.Units(full)+10; max += 37 {
		s, _ := p.Render(max)
		if u := memdir.Units(s); u > max {
			t.Fatalf("Render(%d) is %d units", max, u)
		}
		if max < memdir.Units(minimal)-400 && max > 600 {
			_, rest, ok := strings.Cut(s, "## MEMORY.md\n\n")
			if !ok {
				t.Fatalf("Render(%d) lost the index heading", max)
			}
			kept, _, _ := strings.Cut(rest, "\n\n## team/")
			if !strings.HasPrefix(p.Index.Content, kept) || (kept != "" && len(kept) < len(p.Index.Content) && p.Index.Content[len(kept)] != '\n') {
				t.Fatalf("Render(%d) kept %q of the index: not whole lines from the start", max, kept)
			}
		}
	}
}

func TestPromptEmptyIndex(t *testing.T) {
	s, _ := memdir.Prompt{Dir: "/m/"}.Render(0)
	if !strings.HasSuffix(s, "## MEMORY.md\n\n(empty: no memories saved yet)\n") {
		t.Errorf("empty index: %q", s[len(s)-80:])
	}
}
