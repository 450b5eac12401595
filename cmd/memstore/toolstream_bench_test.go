package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The whole-process benchmark: `memstore tool` and the official TypeScript
// memory tool (memorytool/testdata/reference/run.cjs) each run the same
// stream of tool inputs, start to finish, on a fresh root.
//
//	go test -run='^$' -bench=ToolStream -benchtime=1x -count=6 ./cmd/memstore/

const (
	streamCommands = 10_000
	streamSeed     = 20250818
)

// streamReference is the directory of the reference implementation,
// relative to this package.
var streamReference = filepath.Join("..", "..", "memorytool", "testdata", "reference")

// streamChecked records that the two implementations' outputs were compared
// in this process; the comparison runs once, outside the timed part.
var streamChecked sync.Once

func BenchmarkToolStream(b *testing.B) {
	work := b.TempDir()
	stream := filepath.Join(work, "stream.jsonl")
	if err := os.WriteFile(stream, streamGenerate(streamCommands, streamSeed), 0o600); err != nil {
		b.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("go command not found; it builds the memstore binary")
	}
	bin := filepath.Join(work, "memstore")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	memstore := func(base string) *exec.Cmd {
		return exec.Command(bin, "tool", "--root", filepath.Join(base, "memories"))
	}
	node, refErr := streamReferenceAvailable()
	reference := func(base string) *exec.Cmd {
		return exec.Command(node, filepath.Join(streamReference, "run.cjs"), base)
	}

	streamChecked.Do(func() {
		ours := streamRunOnce(b, memstore, stream, filepath.Join(work, "check-memstore"))
		if refErr != nil {
			b.Logf("outputs not compared: %v", refErr)
			return
		}
		theirs := streamRunOnce(b, reference, stream, filepath.Join(work, "check-reference"))
		if !bytes.Equal(ours, theirs) {
			a, r := strings.Split(string(ours), "\n"), strings.Split(string(theirs), "\n")
			for i := range min(len(a), len(r)) {
				if a[i] != r[i] {
					b.Fatalf("outputs differ at line %d:\nmemstore:  %s\nreference: %s", i+1, a[i], r[i])
				}
			}
			b.Fatalf("outputs differ in length: memstore %d lines, reference %d", len(a), len(r))
		}
	})

	b.Run("memstore", func(b *testing.B) {
		streamBench(b, memstore, stream, work)
	})
	b.Run("reference", func(b *testing.B) {
		if refErr != nil {
			b.Skip(refErr)
		}
		streamBench(b, reference, stream, work)
	})
}

// streamReferenceAvailable returns the node binary, or why the reference
// cannot run.
func streamReferenceAvailable() (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("reference skipped: node not found in PATH")
	}
	if _, err := os.Stat(filepath.Join(streamReference, "node_modules", "@anthropic-ai", "sdk")); err != nil {
		return "", fmt.Errorf("reference skipped: node_modules missing; run npm ci --prefix memorytool/testdata/reference")
	}
	return node, nil
}

// streamRun runs one process on a fresh base directory below work with the
// stream on standard input and its output in a file, and returns that file.
func streamRun(b *testing.B, cmd func(base string) *exec.Cmd, stream, base string) string {
	if err := os.Mkdir(base, 0o700); err != nil {
		b.Fatal(err)
	}
	in, err := os.Open(stream)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	outName := base + ".out"
	out, err := os.Create(outName)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	var stderr bytes.Buffer
	c := cmd(base)
	c.Stdin, c.Stdout, c.Stderr = in, out, &stderr
	if err := c.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", c, err, stderr.Bytes())
	}
	return outName
}

// streamRunOnce runs the stream and returns the output, checked to have
// one line per command.
func streamRunOnce(b *testing.B, cmd func(base string) *exec.Cmd, stream, base string) []byte {
	out, err := os.ReadFile(streamRun(b, cmd, stream, base))
	if err != nil {
		b.Fatal(err)
	}
	if n := bytes.Count(out, []byte("\n")); n != streamCommands {
		b.Fatalf("%d output lines for %d commands", n, streamCommands)
	}
	return out
}

func streamBench(b *testing.B, cmd func(base string) *exec.Cmd, stream, work string) {
	dir, err := os.MkdirTemp(work, b.Name()[strings.LastIndexByte(b.Name(), '/')+1:]+"-")
	if err != nil {
		b.Fatal(err)
	}
	runs := 0
	for b.Loop() {
		runs++
		out := streamRun(b, cmd, stream, filepath.Join(dir, fmt.Sprint(runs)))
		b.StopTimer()
		if n := streamCountLines(b, out); n != streamCommands {
			b.Fatalf("%d output lines for %d commands", n, streamCommands)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*streamCommands), "ns/cmd")
}

func streamCountLines(b *testing.B, name string) int {
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			n++
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return n
		}
	}
}

// streamGen makes a realistic, deterministic stream of tool inputs: an agent
// that keeps notes in a few topic directories, mostly reading and editing
// them, now and then reorganising. It tracks the files' contents so that
// its commands mostly succeed; a few are the ordinary mistakes a model makes
// (a missing path, a file that exists, text that is not there).
//
// Every input is one whose result the reference and memstore agree on: a
// str_replace old_str is a single-line token, so whole-text and line-wise
// matching coincide, and directories stay small enough that their size is
// one block in both.
type streamGen struct {
	r      *rand.Rand
	paths  []string          // existing files, in creation order
	files  map[string]string // path -> content
	tokens map[string][]string
	dirs   []string // existing directories below the root
	next   int      // for unique tokens and names
	out    bytes.Buffer
}

var streamTopics = []string{"projects", "people", "preferences", "decisions", "bugs", "meetings", "ideas", "archive"}

var streamWords = strings.Fields("the user prefers short answers and wants tests before refactoring; " +
	"deploys happen on tuesday, the staging database is shared, ask before migrations; " +
	"the team uses go and typescript, reviews need two approvals, release notes go in the changelog")

func streamGenerate(n int, seed uint64) []byte {
	g := &streamGen{
		r:      rand.New(rand.NewPCG(seed, seed>>1|1)),
		files:  make(map[string]string),
		tokens: make(map[string][]string),
	}
	for range n {
		g.command()
	}
	return g.out.Bytes()
}

func (g *streamGen) emit(fields map[string]any) {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	g.out.Write(b)
	g.out.WriteByte('\n')
}

// line returns one line of note text carrying a new unique token.
func (g *streamGen) line() (string, string) {
	g.next++
	token := fmt.Sprintf("[t%d]", g.next)
	words := make([]string, 4+g.r.IntN(8))
	for i := range words {
		words[i] = streamWords[g.r.IntN(len(streamWords))]
	}
	return "- " + strings.Join(words, " ") + " " + token, token
}

func (g *streamGen) pick() string { return g.paths[g.r.IntN(len(g.paths))] }

func (g *streamGen) newPath() string {
	g.next++
	if g.r.IntN(10) == 0 {
		return fmt.Sprintf("/memories/note-%d.md", g.next)
	}
	return fmt.Sprintf("/memories/%s/note-%d.md", streamTopics[g.r.IntN(len(streamTopics))], g.next)
}

func (g *streamGen) addDir(p string) {
	dir := p[:strings.LastIndexByte(p, '/')]
	if dir != "/memories" && !slices.Contains(g.dirs, dir) {
		g.dirs = append(g.dirs, dir)
	}
}

func (g *streamGen) remove(p string) {
	i := slices.Index(g.paths, p)
	g.paths = slices.Delete(g.paths, i, i+1)
	delete(g.files, p)
	delete(g.tokens, p)
}

func (g *streamGen) command() {
	x := g.r.IntN(100)
	switch {
	case len(g.paths) < 5 || (x < 18 && len(g.paths) < 120):
		g.create()
	case x < 18:
		g.delete()
	case x < 40:
		g.viewFile()
	case x < 48:
		g.viewDir()
	case x < 70:
		g.strReplace()
	case x < 84:
		g.insert()
	case x < 91:
		g.rename()
	case x < 97:
		g.delete()
	default:
		g.mistake()
	}
}

func (g *streamGen) create() {
	p := g.newPath()
	var lines, tokens []string
	for range 3 + g.r.IntN(10) {
		l, t := g.line()
		lines = append(lines, l)
		tokens = append(tokens, t)
	}
	text := "# Notes\n" + strings.Join(lines, "\n") + "\n"
	g.emit(map[string]any{"command": "create", "path": p, "file_text": text})
	g.paths = append(g.paths, p)
	g.files[p] = text
	g.tokens[p] = tokens
	g.addDir(p)
}

func (g *streamGen) viewFile() {
	p := g.pick()
	in := map[string]any{"command": "view", "path": p}
	if n := strings.Count(g.files[p], "\n") + 1; g.r.IntN(4) == 0 {
		start := 1 + g.r.IntN(n)
		end := -1
		if g.r.IntN(2) == 0 {
			end = start + g.r.IntN(n-start+1)
		}
		in["view_range"] = []int{start, end}
	}
	g.emit(in)
}

func (g *streamGen) viewDir() {
	p := "/memories"
	if len(g.dirs) > 0 && g.r.IntN(3) > 0 {
		p = g.dirs[g.r.IntN(len(g.dirs))]
	}
	g.emit(map[string]any{"command": "view", "path": p})
}

func (g *streamGen) strReplace() {
	p := g.pick()
	tokens := g.tokens[p]
	i := g.r.IntN(len(tokens))
	g.next++
	repl := fmt.Sprintf("[t%d]", g.next)
	g.emit(map[string]any{"command": "str_replace", "path": p, "old_str": tokens[i], "new_str": repl})
	g.files[p] = strings.Replace(g.files[p], tokens[i], repl, 1)
	tokens[i] = repl
}

func (g *streamGen) insert() {
	p := g.pick()
	content := g.files[p]
	count := strings.Count(content, "\n") + 1
	at := g.r.IntN(count + 1)
	l, t := g.line()
	text := l + "\n"
	g.emit(map[string]any{"command": "insert", "path": p, "insert_line": at, "insert_text": text})
	lines := strings.Split(content, "\n")
	g.files[p] = strings.Join(slices.Insert(lines, at, l), "\n")
	g.tokens[p] = append(g.tokens[p], t)
}

func (g *streamGen) rename() {
	from := g.pick()
	to := g.newPath()
	g.emit(map[string]any{"command": "rename", "old_path": from, "new_path": to})
	text, tokens := g.files[from], g.tokens[from]
	g.remove(from)
	g.paths = append(g.paths, to)
	g.files[to], g.tokens[to] = text, tokens
	g.addDir(to)
}

func (g *streamGen) delete() {
	if len(g.dirs) > 0 && g.r.IntN(15) == 0 {
		// A whole topic, with everything in it.
		i := g.r.IntN(len(g.dirs))
		dir := g.dirs[i]
		g.emit(map[string]any{"command": "delete", "path": dir})
		g.dirs = slices.Delete(g.dirs, i, i+1)
		for _, p := range slices.Clone(g.paths) {
			if strings.HasPrefix(p, dir+"/") {
				g.remove(p)
			}
		}
		return
	}
	p := g.pick()
	g.emit(map[string]any{"command": "delete", "path": p})
	g.remove(p)
}

// mistake is a command that fails the same way in both implementations.
func (g *streamGen) mistake() {
	switch g.r.IntN(5) {
	case 0:
		g.emit(map[string]any{"command": "view", "path": "/memories/missing/notes.md"})
	case 1:
		g.emit(map[string]any{"command": "create", "path": g.pick(), "file_text": "again\n"})
	case 2:
		g.emit(map[string]any{"command": "str_replace", "path": g.pick(), "old_str": "[not there]", "new_str": "x"})
	case 3:
		g.emit(map[string]any{"command": "rename", "old_path": g.pick(), "new_path": g.pick()})
	case 4:
		g.emit(map[string]any{"command": "delete", "path": "/memories/missing.md"})
	}
}
