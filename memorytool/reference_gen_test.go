package memorytool_test

// The random command generator of the differential test. It looks at
// memstore's tree before each command (both trees are equal at that point)
// to pick existing and missing paths and old_str values from the current
// content.

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// refItem is an entry of the tree: its root-relative path, its own type
// (lstat) and the type of what it leads to ("" when a link dangles, loops
// or leads outside the root).
type refItem struct {
	rel, own, leads string
}

type refGen struct {
	r        *rand.Rand
	root     string // memstore's root, B/memories
	realRoot string
	items    []refItem
	scanned  bool // items are current: no command that changes the tree ran since
}

// refCmd is one generated command.
type refCmd struct {
	input map[string]any
	// lineMatch: a str_replace that whole-text matching took out; input is
	// then the replacement command.
	lineMatch bool
}

func newRefGen(seed uint64, root string) *refGen {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	return &refGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), root: root, realRoot: real}
}

// scan refreshes the list of entries.
func (g *refGen) scan() {
	g.items = g.items[:0]
	filepath.WalkDir(g.root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == g.root {
			return nil
		}
		// Hidden entries are refused on purpose (TestHiddenPathsRefused),
		// so commands never name them; they stay in the trees compared.
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(g.root, name)
		it := refItem{rel: rel}
		switch t := d.Type(); {
		case t.IsDir():
			it.own = "dir"
		case t&fs.ModeSymlink != 0:
			it.own = "symlink"
		case t&fs.ModeNamedPipe != 0:
			it.own = "fifo"
		default:
			it.own = "file"
		}
		it.leads = it.own
		if it.own == "symlink" {
			it.leads = ""
			if real, err := filepath.EvalSymlinks(name); err == nil && strings.HasPrefix(real, g.realRoot+"/") {
				if fi, err := os.Stat(real); err == nil {
					switch {
					case fi.IsDir():
						it.leads = "dir"
					case fi.Mode().IsRegular():
						it.leads = "file"
					default:
						it.leads = "fifo"
					}
				}
			}
		}
		g.items = append(g.items, it)
		return nil
	})
}

func (g *refGen) chance(p float64) bool { return g.r.Float64() < p }

func refPick[T any](g *refGen, list []T) T { return list[g.r.IntN(len(list))] }

// choose draws one number and returns the index of the first of the
// rising bounds below which it falls, or len(bounds) when none.
func (g *refGen) choose(bounds ...float64) int {
	x := g.r.Float64()
	for i, b := range bounds {
		if x < b {
			return i
		}
	}
	return len(bounds)
}

// item picks an entry for which keep holds; ok is false when there is none.
func (g *refGen) item(keep func(refItem) bool) (refItem, bool) {
	var cands []refItem
	for _, it := range g.items {
		if keep(it) {
			cands = append(cands, it)
		}
	}
	if len(cands) == 0 {
		return refItem{}, false
	}
	return refPick(g, cands), true
}

func anyItem(refItem) bool { return true }

// spell writes the model path of a root-relative path, sometimes in an
// equivalent spelling (doubled or trailing slash, "." or ".." that stays
// inside).
func (g *refGen) spell(rel string) string {
	if rel == "" || rel == "." {
		return refPick(g, refRootSpellings)
	}
	if !g.chance(0.3) {
		return "/memories/" + rel
	}
	switch g.r.IntN(6) {
	case 0:
		return "/memories//" + rel
	case 1:
		return "/memories/./" + rel
	case 2:
		return "/memories/" + rel + "/"
	case 3:
		return "/memories/zz/../" + rel
	case 4:
		return "/memories/../memories/" + rel
	}
	if dir, base := path.Split(rel); dir != "" {
		return "/memories/" + dir + "./" + base
	}
	return "/memories/" + rel
}

var refRootSpellings = []string{"/memories", "/memories/", "/memories/.", "/memories//", "/memories/dir/..", "/memories/./", "/memories/zz/.."}

// refEdgePaths are paths with something special on the way: links in
// every direction, a file or FIFO used as a directory, lexical ".." that
// stays inside or escapes, and a name that is too long.
var refEdgePaths = []string{
	"/memories/link-file", "/memories/link-dir", "/memories/link-dir/a.md", "/memories/link-dir/new.md",
	"/memories/link-dir/sub/b.md", "/memories/dir/back/notes.md", "/memories/dir/back/dir/a.md",
	"/memories/dir/up-link", "/memories/abs-file", "/memories/abs-dir", "/memories/abs-dir/b.md",
	"/memories/out-dir", "/memories/out-dir/secret.txt", "/memories/out-dir/new.md", "/memories/out-file",
	"/memories/dangling", "/memories/dangling/x.md", "/memories/dir/dangling-dir", "/memories/dir/dangling-dir/y.md",
	"/memories/loop-a", "/memories/loop-b/x.md", "/memories/pipe", "/memories/link-fifo", "/memories/pipe/x",
	"/memories/notes.md/x", "/memories/crlf.txt/sub/y.md", "/memories/link-file/z",
	"/memories/a/../b.md", "/memories/dir/../notes.md", "/memories/dir/sub/../../alpha.md",
	"/memories/..", "/memories/../x.md", "/memories/a/../../x.md", "/memories/../memories2/x", "/memories/dir/../../etc/passwd",
	"/memories/../memories/notes.md", "/memories/../../memories/notes.md", "/memories/dir/../../../memories/x.md", "/memories//../x.md",
	"/memories/" + strings.Repeat("L", 256) + ".md", "/memories/" + strings.Repeat("d", 300) + "/x.md",
	"/memories/node_modules/pkg/index.js", "/memories/a\x00b.md",
}

var refFreshNames = []string{
	"new.md", "New.md", "ünï.md", "😀.md", "ｆ.md", "！.md", "a b.md", `x\y.md`, "x", "y.txt",
	"node_modules", "sub", "notes.md", "Zeta.md", "dir", "e\u0301.md", "q'uo\"te.md", "tab\tname.md",
}

// fresh is a path that probably does not exist yet: a new name in an
// existing directory, sometimes below new directories.
func (g *refGen) fresh() string {
	parent := ""
	if g.chance(0.5) {
		if it, ok := g.item(func(it refItem) bool { return it.leads == "dir" }); ok {
			parent = it.rel + "/"
		}
	}
	switch g.r.IntN(5) {
	case 0:
		parent += "nd/"
	case 1:
		parent += "nd/deeper/"
	}
	return parent + refPick(g, refFreshNames)
}

// anyPath is an existing entry, the root, a fresh path or an edge path.
func (g *refGen) anyPath() string {
	switch x := g.r.Float64(); {
	case x < 0.5:
		if it, ok := g.item(anyItem); ok {
			return g.spell(it.rel)
		}
	case x < 0.7:
		return g.spell(g.fresh())
	case x < 0.75:
		return g.spell("")
	}
	return refPick(g, refEdgePaths)
}

func (g *refGen) filePath() string {
	if g.chance(0.75) {
		if it, ok := g.item(func(it refItem) bool { return it.leads == "file" }); ok {
			return g.spell(it.rel)
		}
	}
	return g.anyPath()
}

func (g *refGen) dirPath() string {
	if g.chance(0.8) {
		if it, ok := g.item(func(it refItem) bool { return it.leads == "dir" }); ok {
			return g.spell(it.rel)
		}
	}
	return g.spell("")
}

var refTexts = []string{
	"", "hello", "hello\n", "two\nlines\n", "crlf\r\nfile\r\n", "dup dup\ndup\n", "ünï 😀 ｆ\n",
	"$& $1 $$ $'\n", "no final newline\nhere", "\n\n", "a\nb\nc\nd\ne\nf\ng\n", "tab\there\n", "\xef\xbb\xbfbom\n",
}

var refNewStrs = []string{"", "X", "replaced", "$&", "$1", "$$", "$'", "two\nlines", "ends\n", "crlf\r\n", "😀", "ｆ", "a\n\nb\nc\nd"}

var refInsertTexts = []string{"ins", "ins\n", "ins\r\n", "ins\n\n", "", "\n", "two\nlines\n", "😀 u", "$&", "x\r\ny"}

// next generates one command.
func (g *refGen) next() refCmd {
	if !g.scanned {
		g.scan()
	}
	commands := []func() refCmd{g.view, g.create, g.strReplace, g.insert, g.delete, g.rename}
	c := commands[g.choose(0.24, 0.44, 0.64, 0.80, 0.88)]()
	g.scanned = c.input["command"] == "view"
	return c
}

func (g *refGen) view() refCmd {
	paths := []func() string{g.filePath, g.dirPath, g.anyPath}
	p := paths[g.choose(0.4, 0.7)]()
	in := map[string]any{"command": "view", "path": p}
	if g.chance(0.5) {
		n := 5
		if content, ok := refReadModel(g.root, p); ok {
			n = strings.Count(content, "\n") + 1
		}
		ranges := [][]int{
			{0, 0}, {-3, 2}, {1, -1}, {2, -2}, {n, n}, {n + 1, n + 5}, {5, 3}, {1, 1000000}, {3}, {1, 2, 3},
			{}, {2, n}, {-1, -1}, {0, -1}, {1, 1}, {n, -1}, {2, -100}, {g.r.IntN(n + 2), g.r.IntN(n+3) - 1}, nil,
		}
		if r := refPick(g, ranges); r != nil {
			in["view_range"] = r
		} else {
			in["view_range"] = nil // JSON null
		}
	}
	return refCmd{input: in}
}

func (g *refGen) create() refCmd {
	var p string
	switch x := g.r.Float64(); {
	case x < 0.5:
		p = g.spell(g.fresh())
	case x < 0.75:
		p = g.anyPath()
	default:
		p = refPick(g, append(refEdgePaths, refRootSpellings...))
	}
	return refCmd{input: map[string]any{"command": "create", "path": p, "file_text": refPick(g, refTexts)}}
}

// oldStr picks an old_str for content: a piece of one line (unique or not),
// a whole line, a single character, two lines, empty, or absent text.
func (g *refGen) oldStr(content string) string {
	lines := strings.Split(content, "\n")
	line := refPick(g, lines)
	switch x := g.r.Float64(); {
	case x < 0.35 && line != "":
		runes := []rune(line)
		i := g.r.IntN(len(runes))
		j := i + 1 + g.r.IntN(len(runes)-i)
		return string(runes[i:j])
	case x < 0.5:
		return line
	case x < 0.6 && line != "":
		r, _ := utf8.DecodeRuneInString(line)
		return string(r)
	case x < 0.7:
		return ""
	case x < 0.78 && len(lines) > 1:
		i := g.r.IntN(len(lines) - 1)
		return lines[i] + "\n" + lines[i+1][:len(lines[i+1])/2]
	case x < 0.9:
		return refPick(g, []string{"ab", "likes", "tea", "a", "line", "dup", "\r", "😀", "\uFFFD", "$&"})
	}
	return "not in the file"
}

func (g *refGen) strReplace() refCmd {
	p := g.filePath()
	content, isFile := refReadModel(g.root, p)
	old := g.oldStr(content)
	in := map[string]any{"command": "str_replace", "path": p, "old_str": old, "new_str": refPick(g, refNewStrs)}
	if isFile && refLineMatchDiffers(content, old) {
		// Whole-text and per-line matching disagree here; that has its own
		// test, so ask for something both sides agree on.
		return refCmd{input: map[string]any{"command": "view", "path": p}, lineMatch: true}
	}
	return refCmd{input: in}
}

// refLineMatchDiffers reports whether the reference's per-line matching and
// memstore's whole-text matching (overlapping occurrences) can give
// different results for old in content.
func refLineMatchDiffers(content, old string) bool {
	if strings.Contains(old, "\n") {
		return true
	}
	if old == "" {
		return false // both match every line
	}
	whole := 0
	for i := 0; i+len(old) <= len(content); i++ {
		if utf8.RuneStart(content[i]) && strings.HasPrefix(content[i:], old) {
			whole++
		}
	}
	lines := 0
	for _, line := range strings.Split(content, "\n") {
		if strings.Contains(line, old) {
			lines++
		}
	}
	return whole != lines
}

func (g *refGen) insert() refCmd {
	p := g.filePath()
	n := 3
	if content, ok := refReadModel(g.root, p); ok {
		n = strings.Count(content, "\n") + 1
	}
	line := refPick(g, []int{0, 0, 1, n - 1, n, n, n + 1, -1, -5, g.r.IntN(n + 1), 1000})
	return refCmd{input: map[string]any{"command": "insert", "path": p, "insert_line": line, "insert_text": refPick(g, refInsertTexts)}}
}

func (g *refGen) delete() refCmd {
	var p string
	switch x := g.r.Float64(); {
	case x < 0.35:
		if it, ok := g.item(func(it refItem) bool { return it.own != "dir" }); ok {
			p = g.spell(it.rel)
		}
	case x < 0.5:
		if it, ok := g.item(func(it refItem) bool { return it.own == "dir" }); ok {
			p = g.spell(it.rel)
		}
	case x < 0.65:
		if it, ok := g.item(func(it refItem) bool { return it.own == "symlink" }); ok {
			p = g.spell(it.rel)
		}
	case x < 0.75:
		p = refPick(g, refRootSpellings)
	}
	if p == "" {
		p = g.anyPath()
	}
	return refCmd{input: map[string]any{"command": "delete", "path": p}}
}

func (g *refGen) rename() refCmd {
	var from refItem
	var oldPath string
	switch x := g.r.Float64(); {
	case x < 0.6:
		from, _ = g.item(anyItem)
	case x < 0.7:
		from, _ = g.item(func(it refItem) bool { return it.own == "dir" })
	case x < 0.75:
		oldPath = refPick(g, refRootSpellings)
	case x < 0.85:
		oldPath = g.spell(g.fresh())
	default:
		oldPath = refPick(g, refEdgePaths)
	}
	if oldPath == "" {
		if from.rel == "" {
			oldPath = g.anyPath()
		} else {
			oldPath = g.spell(from.rel)
		}
	}
	var newPath string
	switch x := g.r.Float64(); {
	case x < 0.4:
		newPath = g.spell(g.fresh())
	case x < 0.55:
		if it, ok := g.item(anyItem); ok {
			newPath = g.spell(it.rel)
		}
	case x < 0.65:
		if it, ok := g.item(func(it refItem) bool { return it.own == "symlink" && it.leads == "" }); ok {
			newPath = g.spell(it.rel) // a dangling link, or one that loops or leads out
		}
	case x < 0.68:
		newPath = oldPath
	case x < 0.8:
		if from.own == "dir" || from.leads == "dir" {
			newPath = g.spell(from.rel + "/" + refPick(g, []string{"x", "sub/x", "nd/deeper"}))
		}
	default:
		newPath = refPick(g, append(refEdgePaths, refRootSpellings...))
	}
	if newPath == "" {
		newPath = g.spell(g.fresh())
	}
	return refCmd{input: map[string]any{"command": "rename", "old_path": oldPath, "new_path": newPath}}
}
