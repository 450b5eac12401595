package memorytool_test

// A differential test of the two backends: random command sequences run on
// a local directory and on a memory store must give the same results and
// leave the same files, but for the differences the package documentation
// lists, which the comparison takes into account.

import (
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

var diffFlags = newSequenceFlags("storediff", "the local-versus-store test", 12, 120)

// sequenceFlags size a test of random command sequences: the seed of the
// first sequence (the next ones take the seeds after it), how many
// sequences and how many commands in each. A failure names its seed, which
// -<prefix>.seed with -<prefix>.sequences=1 replays.
type sequenceFlags struct {
	seed                *uint64
	sequences, commands *int
}

func newSequenceFlags(prefix, test string, sequences, commands int) sequenceFlags {
	return sequenceFlags{
		seed:      flag.Uint64(prefix+".seed", 1, "first seed of "+test+"'s command sequences"),
		sequences: flag.Int(prefix+".sequences", sequences, "number of command sequences of "+test),
		commands:  flag.Int(prefix+".commands", commands, "commands per sequence of "+test),
	}
}

func TestStoreMatchesLocal(t *testing.T) {
	ok, failed := map[string]int{}, map[string]int{}
	defer func() { t.Logf("successes by command %v, errors %v", ok, failed) }()
	for i := range *diffFlags.sequences {
		seed := *diffFlags.seed + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			local, dir := mustOpen(t, memorytool.Options{})
			env := newStoreEnv(t)
			store := env.tool(t, nil, memorytool.Options{})
			r := rand.New(rand.NewPCG(seed, 7))
			for n := range *diffFlags.commands {
				in := diffCommand(r, env.files(t))
				a, b := do(t, local, in), do(t, store, in)
				if b.IsError {
					failed[in["command"].(string)]++
				} else {
					ok[in["command"].(string)]++
				}
				// A store has no empty directories (package documentation).
				pruneEmptyDirs(t, dir)
				if !diffSame(in, a, b) {
					t.Fatalf("command %d: %v\nlocal: %q\nstore: %q\n(rerun: go test ./memorytool/ -run TestStoreMatchesLocal -args -storediff.seed=%d -storediff.sequences=1 -storediff.commands=%d)",
						n, in, a.Content, b.Content, seed, n+1)
				}
				if lf, sf := localFiles(t, dir), env.files(t); !maps.Equal(lf, sf) {
					t.Fatalf("command %d: %v left different files\nlocal: %q\nstore: %q", n, in, lf, sf)
				}
			}
		})
	}
}

// diffNames are the path segments of generated paths: names that sort
// differently by bytes and by UTF-16, hidden ones, node_modules, and names
// that are string prefixes of each other.
var diffNames = []string{"a", "b", "a.md", "b.md", "a-b", ".h", "node_modules", "😀", "！"}

// diffCommand returns a random command, often on a path that exists.
func diffCommand(r *rand.Rand, files map[string]string) map[string]any {
	existing := slices.Sorted(maps.Keys(files))
	pick := func() string {
		if len(existing) > 0 && r.IntN(3) == 0 {
			p := existing[r.IntN(len(existing))]
			if r.IntN(3) == 0 { // its directory
				if i := strings.LastIndexByte(p, '/'); i > len(memorytool.Root) {
					p = p[:i]
				}
			}
			return p
		}
		p := memorytool.Root
		for range 1 + r.IntN(3) {
			p += "/" + diffNames[r.IntN(len(diffNames))]
		}
		switch r.IntN(12) {
		case 0:
			p += "/"
		case 1:
			p = memorytool.Root + "/x/.." + p[len(memorytool.Root):]
		case 2:
			p = memorytool.Root
		}
		return p
	}
	// pickFile is an existing file more often, for edits.
	pickFile := func() string {
		if len(existing) > 0 && r.IntN(3) > 0 {
			return existing[r.IntN(len(existing))]
		}
		return pick()
	}
	texts := []string{"", "x", "one\ntwo\n", "a\na\n", "😀 line\r\nnext"}
	oldStr := func(p string) string {
		if c, ok := files[p]; ok && c != "" && r.IntN(4) > 0 {
			lines := strings.Split(c, "\n")
			return lines[r.IntN(len(lines))]
		}
		return []string{"a", "x", "one\ntwo", "zzz"}[r.IntN(4)]
	}
	switch r.IntN(10) {
	case 0, 1:
		return view(pick())
	case 2:
		return view(pickFile(), r.IntN(4)-1, r.IntN(5)-1)
	case 3, 4:
		return create(pick(), texts[r.IntN(len(texts))])
	case 5:
		p := pickFile()
		return strReplace(p, oldStr(p), texts[r.IntN(len(texts))])
	case 6:
		return insertAt(pickFile(), r.IntN(5)-1, texts[r.IntN(len(texts))])
	case 7:
		return del(pick())
	}
	return rename(pick(), pick())
}

// diffSame reports whether the two backends' results agree, up to the
// documented differences.
func diffSame(in map[string]any, local, store memorytool.Result) bool {
	if normalizeDirSizes(local.Content) == store.Content && local.IsError == store.IsError {
		return true
	}
	if in["command"] != "rename" {
		return false
	}
	// Local makes the destination's parent directories before it looks at
	// the source: with the source missing and the destination below it,
	// that makes the source a directory, which then cannot move into
	// itself. A store makes no directories and reports the missing source.
	oldPath := in["old_path"].(string)
	return store.Content == "Error: The path "+oldPath+" does not exist" && local.Content == "Error: Cannot move "+oldPath+" into itself"
}

// normalizeDirSizes replaces the host's directory sizes in a listing with
// the store's 4K.
func normalizeDirSizes(s string) string {
	if !strings.HasPrefix(s, "Here're the files") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		size, p, ok := strings.Cut(lines[i], "\t")
		if ok && (i == 1 || strings.HasSuffix(p, "/")) && size != "" {
			lines[i] = "4K\t" + p
		}
	}
	return strings.Join(lines, "\n")
}

// localFiles returns every file under dir by model path.
func localFiles(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, name)
		if err == nil {
			out[memorytool.Root+"/"+filepath.ToSlash(rel)] = readFile(tb, name)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// pruneEmptyDirs removes the directories below dir that hold no file.
func pruneEmptyDirs(tb testing.TB, dir string) {
	tb.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && name != dir {
			dirs = append(dirs, name)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range slices.Backward(dirs) { // deepest first
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
			if err := os.Remove(d); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
