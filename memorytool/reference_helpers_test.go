package memorytool_test

// Helpers of the differential test against the official TypeScript memory
// tool (@anthropic-ai/sdk 1.14.0, BetaLocalFilesystemMemoryTool): running the
// reference through node, the shared fixture, tree snapshots, and an
// independent WHATWG UTF-8 decoder.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore/internal/npmtest"
	"github.com/memstore/memstore/memorytool"
)

// refDriverDir holds package.json, package-lock.json and run.cjs.
const refDriverDir = "testdata/reference"

// refAnswerTimeout bounds the wait for one answer of the node process.
const refAnswerTimeout = 30 * time.Second

// refNeed skips the test when node is missing and installs the reference
// (npm ci) when its node_modules is missing, once per test binary.
func refNeed(t *testing.T) {
	t.Helper()
	npmtest.Need(t, refDriverDir, "@anthropic-ai/sdk")
}

// refAnswer is one command's result: the ok flag and the text (the output,
// or the error with its "Error: " prefix).
type refAnswer struct {
	OK   bool
	Text string
}

func (a refAnswer) String() string {
	if a.OK {
		return fmt.Sprintf("ok: %q", a.Text)
	}
	return fmt.Sprintf("error: %q", a.Text)
}

// refProc is one `node run.cjs BASE` process, spoken to line by line.
type refProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
}

// refStart runs the reference with base/memories as its root.
func refStart(t *testing.T, base string) *refProc {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(refDriverDir, "run.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, base)
	cmd.Dir = refDriverDir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &refProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1), stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(p.lines)
				return
			}
			p.lines <- line
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *refProc) close() {
	if p.stdin == nil {
		return
	}
	p.stdin.Close()
	p.stdin = nil
	done := make(chan struct{})
	go func() {
		for range p.lines {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
	}
	p.cmd.Wait()
}

// run sends one tool input and returns the reference's answer.
func (p *refProc) run(input []byte) refAnswer {
	p.t.Helper()
	if _, err := p.stdin.Write(append(bytes.TrimSpace(input), '\n')); err != nil {
		p.t.Fatalf("write to node: %v\nstderr: %s", err, p.stderr)
	}
	var line string
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("node exited without answering %s\nstderr: %s", input, p.stderr)
		}
		line = l
	case <-time.After(refAnswerTimeout):
		p.t.Fatalf("node did not answer %s within %v", input, refAnswerTimeout)
	}
	var a struct {
		OK     bool    `json:"ok"`
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		p.t.Fatalf("bad answer line from node %q: %v", line, err)
	}
	switch {
	case a.OK && a.Output != nil:
		return refAnswer{OK: true, Text: *a.Output}
	case !a.OK && a.Error != nil:
		return refAnswer{Text: *a.Error}
	}
	p.t.Fatalf("answer line from node without text: %q", line)
	return refAnswer{}
}

// refMemstore runs one tool input on memstore the way `memstore tool` does.
func refMemstore(l *memorytool.Local, input []byte) refAnswer {
	res := memorytool.Execute(context.Background(), l, json.RawMessage(input))
	return refAnswer{OK: !res.IsError, Text: res.Content}
}

// refJSON encodes a tool input.
func refJSON(t *testing.T, input map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(input); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// refPair is the same fixture twice: base A for the reference (it uses
// A/memories), base B for memstore (B/memories). Each base also has an
// "outside" directory that links in the fixture point to.
type refPair struct {
	baseA, baseB string
	ref          *refProc
	ms           *memorytool.Local
}

func refNewPair(t *testing.T) *refPair {
	t.Helper()
	p := &refPair{baseA: t.TempDir(), baseB: t.TempDir()}
	refFixture(t, p.baseA)
	refFixture(t, p.baseB)
	p.ref = refStart(t, p.baseA)
	ms, err := memorytool.OpenLocal(filepath.Join(p.baseB, "memories"), memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	p.ms = ms
	return p
}

func (p *refPair) rootA() string { return filepath.Join(p.baseA, "memories") }
func (p *refPair) rootB() string { return filepath.Join(p.baseB, "memories") }

// refFixture builds the shared starting tree under base.
func refFixture(t *testing.T, base string) {
	t.Helper()
	mem := filepath.Join(base, "memories")
	out := filepath.Join(base, "outside")
	dirs := []string{
		mem, out, out + "/sub",
		mem + "/dir", mem + "/dir/sub", mem + "/dir/sub/deep", mem + "/dir/emptydir",
		mem + "/dir/node_modules", mem + "/.hiddendir", mem + "/node_modules", mem + "/node_modules/pkg",
		mem + "/Upper", mem + "/ｄｉｒ",
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := []struct{ rel, data string }{
		{"notes.md", "# Notes\n- likes tea\n- likes coffee\n- dislikes tea\n"},
		{"crlf.txt", "first line\r\nsecond line\r\nthird\r\n"},
		{"bad-utf8.md", "start\ntrunc \xF0\x9F\x98 end\nlone \x80 and \xBF\xBF cont\nsurrogate \xED\xA0\x80 x\noverlong \xC0\xAF\nmixed \xE2\x82 \xF4\x90\x80\x80\ntail"},
		{"bom.md", "\xEF\xBB\xBFbom line\nsecond\n"},
		{"empty.md", ""},
		{"dup.txt", "aaa\nab ab ab\nxyz\nab\nmiddle line\nab\n"},
		{"one-line.txt", "just one line"},
		{"dollars.md", "price $5 and $& and $1\n"},
		{"Zeta.md", "Z\n"},
		{"alpha.md", "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"},
		{"Éclair.md", "é\n"},
		{"ｆｕｌｌ.md", "fullwidth\n"},
		{"！bang.md", "fullwidth bang\n"},
		{"😀emoji.md", "emoji 😀 inside 😀\n"},
		{"𝒳math.md", "math\n"},
		{"a b.md", "space\n"},
		{`back\slash.md`, "backslash\n"},
		{".hidden", "hidden\n"},
		{".hiddendir/h.md", "h\n"},
		{"node_modules/pkg/index.js", "module.exports = 1;\n"},
		{"dir/a.md", "in dir\nsecond\n"},
		{"dir/Beta.md", "B\n"},
		{"dir/.secret.md", "s\n"},
		{"dir/node_modules/x.js", "x\n"},
		{"dir/sub/b.md", "deep b\n"},
		{"dir/sub/deep/c.md", "deeper c\n"},
		{"Upper/UP.md", "up\n"},
		{"ｄｉｒ/in-full.md", "in fullwidth dir\n"},
	}
	for _, f := range files {
		name := filepath.Join(mem, f.rel)
		if err := os.WriteFile(name, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, data := range map[string]string{"secret.txt": "outside secret\n", "sub/s.md": "outside sub\n"} {
		if err := os.WriteFile(filepath.Join(out, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := []struct{ rel, target string }{
		{"link-file", "notes.md"},
		{"link-dir", "dir"},
		{"link-fifo", "pipe"},
		{"dir/up-link", "../alpha.md"},
		{"dir/back", ".."},
		{"abs-file", mem + "/crlf.txt"},
		{"abs-dir", mem + "/dir/sub"},
		{"out-dir", out},
		{"out-file", out + "/secret.txt"},
		{"dangling", "missing.md"},
		{"dir/dangling-dir", "nowhere/"},
		{"loop-a", "loop-b"},
		{"loop-b", "loop-a"},
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(mem, l.rel)); err != nil {
			t.Fatal(err)
		}
	}
	pipe := filepath.Join(mem, "pipe")
	mkfifo(t, pipe)
	if err := os.Chmod(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
}

// refEntry is one entry of a snapshot: type, permission bits, and the
// content of a file or the target of a link.
type refEntry struct {
	kind string // file, dir, symlink, fifo, other
	perm fs.FileMode
	data string
}

func (e refEntry) String() string {
	switch e.kind {
	case "file":
		return fmt.Sprintf("file %#o %q", e.perm, e.data)
	case "symlink":
		return fmt.Sprintf("symlink -> %q", e.data)
	}
	return fmt.Sprintf("%s %#o", e.kind, e.perm)
}

// refSnapshot records every entry under base without following links.
// Absolute link targets that point into base are written relative to
// "$BASE", so that two copies of the fixture compare equal. Directory sizes
// and times are left out.
func refSnapshot(t *testing.T, base string) map[string]refEntry {
	t.Helper()
	snap := make(map[string]refEntry)
	err := filepath.WalkDir(base, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, name)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		fi, err := os.Lstat(name)
		if err != nil {
			return err
		}
		e := refEntry{perm: fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			e.kind, e.data = "file", string(b)
		case fi.IsDir():
			e.kind = "dir"
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(name)
			if err != nil {
				return err
			}
			if target == base || strings.HasPrefix(target, base+"/") {
				target = "$BASE" + target[len(base):]
			}
			e.kind, e.data, e.perm = "symlink", target, 0
		case fi.Mode()&fs.ModeNamedPipe != 0:
			e.kind = "fifo"
		default:
			e.kind = "other"
		}
		snap[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", base, err)
	}
	return snap
}

// refDiffTrees describes how two snapshots differ ("" when equal), and
// names any leftover temporary file.
func refDiffTrees(a, b map[string]refEntry) string {
	var names []string
	seen := make(map[string]bool)
	for _, m := range []map[string]refEntry{a, b} {
		for name := range m {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, name := range names {
		ea, okA := a[name]
		eb, okB := b[name]
		switch {
		case !okA:
			fmt.Fprintf(&sb, "  %s: only in memstore's tree (%v)\n", name, eb)
		case !okB:
			fmt.Fprintf(&sb, "  %s: only in the reference's tree (%v)\n", name, ea)
		case ea != eb:
			fmt.Fprintf(&sb, "  %s: reference %v, memstore %v\n", name, ea, eb)
		}
		if strings.HasPrefix(filepath.Base(name), ".tmp-") {
			fmt.Fprintf(&sb, "  %s: temporary file left behind\n", name)
		}
	}
	return sb.String()
}

// refDecode decodes b as UTF-8 with replacement following the WHATWG
// Encoding Standard's decoder algorithm step by step (one U+FFFD per maximal
// invalid subpart), independently of memorytool's own decoder.
func refDecode(b []byte) string {
	var sb strings.Builder
	var cp rune
	needed, seen := 0, 0
	lower, upper := byte(0x80), byte(0xBF)
	for i := 0; i < len(b); {
		c := b[i]
		if needed == 0 {
			i++
			switch {
			case c <= 0x7F:
				sb.WriteByte(c)
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xF4:
				// A few first bytes narrow the range of the second.
				switch c {
				case 0xE0:
					lower = 0xA0
				case 0xED:
					upper = 0x9F
				case 0xF0:
					lower = 0x90
				case 0xF4:
					upper = 0x8F
				}
				if c <= 0xEF {
					needed, cp = 2, rune(c&0x0F)
				} else {
					needed, cp = 3, rune(c&0x07)
				}
			default:
				sb.WriteRune(utf8.RuneError)
			}
			continue
		}
		if c < lower || c > upper {
			// The byte is not consumed: it starts the next sequence.
			cp, needed, seen, lower, upper = 0, 0, 0, 0x80, 0xBF
			sb.WriteRune(utf8.RuneError)
			continue
		}
		i++
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		if seen++; seen == needed {
			sb.WriteRune(cp)
			cp, needed, seen = 0, 0, 0
		}
	}
	if needed != 0 {
		sb.WriteRune(utf8.RuneError)
	}
	return sb.String()
}

// refReadModel returns the decoded content of the regular file that model
// path p names in memstore's tree, following links the way the tool does
// for reads; ok is false when p does not name a regular file there.
func refReadModel(root, p string) (string, bool) {
	rel, ok := strings.CutPrefix(p, "/memories")
	if !ok || (rel != "" && rel[0] != '/') || strings.ContainsRune(p, 0) {
		return "", false
	}
	name := filepath.Join(root, rel)
	if name != root && !strings.HasPrefix(name, root+"/") {
		return "", false
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false // also keeps os.ReadFile away from a FIFO
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil || !strings.HasPrefix(real, realRoot+"/") {
		return "", false // the tool refuses a link that leads outside
	}
	b, err := os.ReadFile(real)
	if err != nil {
		return "", false
	}
	return refDecode(b), true
}
