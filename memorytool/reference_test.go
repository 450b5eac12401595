package memorytool_test

// The differential test against the official TypeScript memory tool
// (@anthropic-ai/sdk 1.14.0, BetaLocalFilesystemMemoryTool, run by node
// through testdata/reference/run.cjs): random command sequences run on both,
// and every result and every resulting tree must be equal, except for the
// deliberate differences of docs/memory-tool.md (Differences from the
// reference), each of which has its own test below that pins both the
// reference's text and memstore's.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore/memorytool"
)

var refFlags = newSequenceFlags("reference", "the differential test", 40, 60)

func TestReferenceDifferential(t *testing.T) {
	refNeed(t)
	start := time.Now()
	st := &refStats{ok: make(map[string]int), failed: make(map[string]int)}
	// The sequences run in parallel (up to -test.parallel at a time), each
	// with its own node process and trees; the group waits for all.
	t.Run("seq", func(t *testing.T) {
		for i := range *refFlags.sequences {
			seed := *refFlags.seed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				refSequence(t, seed, *refFlags.commands, st)
			})
		}
	})
	t.Logf("%d sequences, %d commands on both sides in %v; %s",
		*refFlags.sequences, st.commands, time.Since(start).Round(time.Millisecond), st)
}

// refStats counts what the differential test ran.
type refStats struct {
	mu                       sync.Mutex
	commands, lineMatch, raw int
	ok, failed               map[string]int
}

func (s *refStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	for _, c := range []string{"view", "create", "str_replace", "insert", "delete", "rename"} {
		fmt.Fprintf(&sb, "%s %d ok/%d error, ", c, s.ok[c], s.failed[c])
	}
	fmt.Fprintf(&sb, "%d raw OS errors of the reference (no host paths), %d str_replace swapped for a view (whole-text str_replace)", s.raw, s.lineMatch)
	return sb.String()
}

func (s *refStats) count(c refCmd, ref refAnswer, rootA string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands++
	if c.lineMatch {
		s.lineMatch++
	}
	command, _ := c.input["command"].(string)
	if ref.OK {
		s.ok[command]++
		return
	}
	s.failed[command]++
	if _, raw := refRawOSError(c.input, ref.Text, rootA); raw {
		s.raw++
	}
}

// refSequence runs one seeded sequence of n commands.
func refSequence(t *testing.T, seed uint64, n int, st *refStats) {
	pair := refNewPair(t)
	if seed%2 == 1 {
		// Odd seeds take the general path only (no openat2), even ones the
		// fast path where it applies: both are compared with the reference.
		memorytool.GeneralPathOnly(pair.ms)
	}
	outside := refSnapshot(t, filepath.Join(pair.baseB, "outside"))
	g := newRefGen(seed, pair.rootB())
	for i := range n {
		c := g.next()
		input := refJSON(t, c.input)
		ref := pair.ref.run(input)
		ms := refMemstore(pair.ms, input)
		st.count(c, ref, pair.rootA())
		report := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, command %d: %s\ninput:     %s\nreference: %v\nmemstore:  %v\n(rerun: go test ./memorytool/ -run TestReferenceDifferential -args -reference.seed=%d -reference.sequences=1 -reference.commands=%d)",
				seed, i, fmt.Sprintf(format, args...), input, ref, ms, seed, i+1)
		}
		if leak := pair.hostPath(ms.Text); leak != "" {
			report("memstore's result contains the host path %s", leak)
		}
		if problem := refCompare(c.input, ref, ms, pair.rootA()); problem != "" {
			report("%s%s", problem, refFirstDifference(ref.Text, ms.Text))
		}
		// Trees are compared after every command that can change them,
		// and after the last one.
		if c.input["command"] != "view" || i == n-1 {
			if diff := refDiffTrees(refSnapshot(t, pair.baseA), refSnapshot(t, pair.baseB)); diff != "" {
				report("the trees differ afterwards:\n%s", diff)
			}
		}
	}
	if diff := refDiffTrees(outside, refSnapshot(t, filepath.Join(pair.baseB, "outside"))); diff != "" {
		t.Fatalf("seed %d: memstore changed the directory outside its root:\n%s", seed, diff)
	}
}

// hostPath returns the host path that text contains, if any.
func (p *refPair) hostPath(text string) string {
	for _, dir := range []string{p.baseB, p.baseA} {
		if strings.Contains(text, dir) {
			return dir
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil && strings.Contains(text, real) {
			return real
		}
	}
	return ""
}

// refCompare returns "" when memstore's answer is acceptable for the
// reference's, and otherwise what is wrong.
func refCompare(input map[string]any, ref, ms refAnswer, rootA string) string {
	if ref == ms {
		return ""
	}
	if !ref.OK {
		if want, raw := refRawOSError(input, ref.Text, rootA); raw {
			if want == "" {
				return "the reference gave a raw OS error that memstore does not replace (docs/memory-tool.md, No host paths)"
			}
			if ms != (refAnswer{Text: want}) {
				return fmt.Sprintf("the reference gave a raw OS error; memstore must answer with the model's path alone: %q", want)
			}
			return ""
		}
	}
	// Whole-text str_replace: memstore's snippet covers a multi-line
	// new_str completely, where the reference's stops two lines after the
	// first changed line.
	if input["command"] == "str_replace" && ref.OK && ms.OK {
		if newStr, _ := input["new_str"].(string); strings.Contains(newStr, "\n") && refSnippetExtends(ref.Text, ms.Text, strings.Count(newStr, "\n")) {
			return ""
		}
	}
	return "results differ"
}

// refFirstDifference shows where two texts part, for long results.
func refFirstDifference(a, b string) string {
	if a == b || len(a) < 200 && len(b) < 200 {
		return ""
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-40)
	for from > 0 && !utf8.RuneStart(a[from]) {
		from--
	}
	return fmt.Sprintf(" (from byte %d: reference …%q, memstore …%q)", i, a[from:min(len(a), i+40)], b[from:min(len(b), i+40)])
}

var (
	refSnippetLine = regexp.MustCompile(`^ *([0-9]+)\t`)
	refErrnoText   = regexp.MustCompile(`^E[A-Z]+: `)
)

// refSnippetExtends reports whether ms is the reference's snippet ref
// followed by at most extra further numbered lines, numbered on.
func refSnippetExtends(ref, ms string, extra int) bool {
	rest, ok := strings.CutPrefix(ms, ref)
	if !ok || rest == "" {
		return false
	}
	lines := strings.Split(ref, "\n")
	m := refSnippetLine.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		return false
	}
	last, _ := strconv.Atoi(m[1])
	more := strings.Split(strings.TrimPrefix(rest, "\n"), "\n")
	if !strings.HasPrefix(rest, "\n") || len(more) > extra {
		return false
	}
	for i, line := range more {
		m := refSnippetLine.FindStringSubmatch(line)
		if m == nil || len(m[0]) != 7 || m[1] != strconv.Itoa(last+1+i) {
			return false
		}
	}
	return true
}

// refRawOSError recognises the raw Node errors in the reference's answer
// to input and returns memstore's answer for it (docs/memory-tool.md, No
// host paths; "" when the error is raw but unknown). raw is false for ordinary
// messages.
func refRawOSError(input map[string]any, text, rootA string) (want string, raw bool) {
	msg, ok := strings.CutPrefix(text, "Error: ")
	if !ok {
		return "", false
	}
	command, _ := input["command"].(string)
	short := command == "delete" || command == "rename"
	paths := []string{"path"}
	if command == "rename" {
		paths = []string{"old_path", "new_path"}
	}
	// which is the model path whose lexical host path is abs; the first
	// one checked when abs is not known.
	which := func(abs string) string {
		for _, key := range paths {
			p, _ := input[key].(string)
			if abs == "" || refLexical(rootA, p) == abs {
				return p
			}
		}
		return ""
	}
	quoted := func(prefix string) (string, bool) {
		rest, ok := strings.CutPrefix(msg, prefix+" '")
		if !ok || !strings.HasSuffix(rest, "'") {
			return "", false
		}
		return rest[:len(rest)-1], true
	}
	if abs, ok := quoted("ENOTDIR: not a directory, realpath"); ok {
		p := which(abs)
		if p == "" {
			return "", true
		}
		if short {
			return "Error: The path " + p + " does not exist", true
		}
		return "Error: The path " + p + " does not exist. Please provide a valid path.", true
	}
	if abs, ok := quoted("ENAMETOOLONG: name too long, realpath"); ok {
		if p := which(abs); p != "" {
			return "Error: The path " + p + " is too long", true
		}
		return "", true
	}
	if abs, ok := quoted("ELOOP: too many symbolic links encountered, realpath"); ok {
		if p := which(abs); p != "" {
			return "Error: The path " + p + " cannot be resolved (symbolic link loop)", true
		}
		return "", true
	}
	if strings.HasPrefix(msg, "EINVAL: invalid argument, rename '") && command == "rename" {
		return "Error: Cannot move " + input["old_path"].(string) + " into itself", true
	}
	if strings.HasPrefix(msg, "ENOTDIR: not a directory, rename '") && command == "rename" {
		// A directory onto a dangling link: the destination is taken.
		return "Error: The destination " + input["new_path"].(string) + " already exists", true
	}
	// mkdir -p below a dangling link: ENOENT when the link is the parent,
	// ENOTDIR when it is further up.
	_, enoent := quoted("ENOENT: no such file or directory, mkdir")
	_, enotdir := quoted("ENOTDIR: not a directory, mkdir")
	if enoent || enotdir {
		switch command {
		case "create":
			return "Error: The path " + input["path"].(string) + " does not exist. Please provide a valid path.", true
		case "rename":
			return "Error: The path " + input["new_path"].(string) + " does not exist", true
		}
		return "", true
	}
	if strings.HasPrefix(msg, "The argument 'path' must be a string, Uint8Array, or URL without null bytes.") {
		for _, key := range paths {
			if p, _ := input[key].(string); strings.ContainsRune(p, 0) {
				return "Error: The path " + strings.ReplaceAll(p, "\x00", `\x00`) + " contains a NUL byte", true
			}
		}
		return "", true
	}
	if refErrnoText.MatchString(msg) || strings.Contains(msg, rootA) {
		return "", true
	}
	return "", false
}

// refLexical is the reference's lexical host path for model path p.
func refLexical(rootA, p string) string {
	rel, _ := strings.CutPrefix(p, "/memories")
	rel = strings.TrimPrefix(rel, "/")
	if rel == "" {
		return rootA
	}
	return path.Join(rootA, rel)
}

// refBoth runs inputs on a fresh pair, in order, and returns both sides'
// answers.
func refBoth(t *testing.T, pair *refPair, inputs ...map[string]any) (ref, ms []refAnswer) {
	t.Helper()
	for _, in := range inputs {
		b := refJSON(t, in)
		ref = append(ref, pair.ref.run(b))
		ms = append(ms, refMemstore(pair.ms, b))
	}
	return ref, ms
}

func refReadHost(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// memstore matches old_str against the whole text (docs/memory-tool.md,
// Whole-text str_replace).
func TestReferenceStrReplaceWholeText(t *testing.T) {
	refNeed(t)
	pair := refNewPair(t)
	const p = "/memories/lines.md"
	ref, ms := refBoth(t, pair,
		map[string]any{"command": "create", "path": p, "file_text": "one\ntwo\nthree\n"},
		map[string]any{"command": "str_replace", "path": p, "old_str": "one\ntwo", "new_str": "ONE\nTWO"},
	)
	if want := (refAnswer{Text: "Error: No replacement was performed, old_str `one\ntwo` did not appear verbatim in " + p + "."}); ref[1] != want {
		t.Errorf("reference, multi-line old_str: %v, want %v", ref[1], want)
	}
	if want := (refAnswer{OK: true, Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tONE\n     2\tTWO\n     3\tthree\n     4\t"}); ms[1] != want {
		t.Errorf("memstore, multi-line old_str: %v, want %v", ms[1], want)
	}
	if got := refReadHost(t, filepath.Join(pair.rootA(), "lines.md")); got != "one\ntwo\nthree\n" {
		t.Errorf("reference changed the file to %q", got)
	}
	if got := refReadHost(t, filepath.Join(pair.rootB(), "lines.md")); got != "ONE\nTWO\nthree\n" {
		t.Errorf("memstore left the file as %q", got)
	}

	// Two occurrences on one line: one matching line for the reference,
	// which replaces the first; two occurrences for memstore.
	const q = "/memories/twice.md"
	ref, ms = refBoth(t, pair,
		map[string]any{"command": "create", "path": q, "file_text": "x a b a\nc\n"},
		map[string]any{"command": "str_replace", "path": q, "old_str": "a", "new_str": "Z"},
	)
	if want := (refAnswer{OK: true, Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tx Z b a\n     2\tc\n     3\t"}); ref[1] != want {
		t.Errorf("reference, two occurrences on one line: %v, want %v", ref[1], want)
	}
	if want := (refAnswer{Text: "Error: No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 1. Please ensure it is unique"}); ms[1] != want {
		t.Errorf("memstore, two occurrences on one line: %v, want %v", ms[1], want)
	}
	if got := refReadHost(t, filepath.Join(pair.rootA(), "twice.md")); got != "x Z b a\nc\n" {
		t.Errorf("reference left %q", got)
	}
	if got := refReadHost(t, filepath.Join(pair.rootB(), "twice.md")); got != "x a b a\nc\n" {
		t.Errorf("memstore changed the file to %q", got)
	}
}

// Where the reference passes a raw OS error with host paths to the model,
// memstore names only the model's path (docs/memory-tool.md, No host
// paths).
func TestReferenceRawOSErrors(t *testing.T) {
	refNeed(t)
	pair := refNewPair(t)
	rootA := pair.rootA()
	long := strings.Repeat("n", 256) + ".md"
	// raw is the reference's text for a raw OS error of call on a path
	// under its root; gone is memstore's for a path that does not exist.
	raw := func(errno, call, rel string) string {
		return "Error: " + errno + ", " + call + " '" + rootA + rel + "'"
	}
	const enotdir, enoent, eloop = "ENOTDIR: not a directory", "ENOENT: no such file or directory", "ELOOP: too many symbolic links encountered"
	gone := func(p string) string { return "Error: The path " + p + " does not exist. Please provide a valid path." }
	cases := []struct {
		name    string
		input   map[string]any
		ref, ms string
	}{
		{"view through a regular file", map[string]any{"command": "view", "path": "/memories/notes.md/x"}, raw(enotdir, "realpath", "/notes.md/x"), gone("/memories/notes.md/x")},
		{"create through a regular file", map[string]any{"command": "create", "path": "/memories/notes.md/x/y.md", "file_text": "t"}, raw(enotdir, "realpath", "/notes.md/x/y.md"), gone("/memories/notes.md/x/y.md")},
		{"delete through a regular file", map[string]any{"command": "delete", "path": "/memories/notes.md/x"}, raw(enotdir, "realpath", "/notes.md/x"), "Error: The path /memories/notes.md/x does not exist"},
		{"rename onto a path through a regular file", map[string]any{"command": "rename", "old_path": "/memories/alpha.md", "new_path": "/memories/crlf.txt/a.md"}, raw(enotdir, "realpath", "/crlf.txt/a.md"), "Error: The path /memories/crlf.txt/a.md does not exist"},
		{"name longer than 255 bytes", map[string]any{"command": "create", "path": "/memories/" + long, "file_text": "t"}, raw("ENAMETOOLONG: name too long", "realpath", "/"+long), "Error: The path /memories/" + long + " is too long"},
		{"symlink loop", map[string]any{"command": "view", "path": "/memories/loop-a"}, raw(eloop, "realpath", "/loop-a"), "Error: The path /memories/loop-a cannot be resolved (symbolic link loop)"},
		{"symlink loop as a parent", map[string]any{"command": "create", "path": "/memories/loop-b/x.md", "file_text": "t"}, raw(eloop, "realpath", "/loop-b/x.md"), "Error: The path /memories/loop-b/x.md cannot be resolved (symbolic link loop)"},
		{"directory into itself", map[string]any{"command": "rename", "old_path": "/memories/dir/sub", "new_path": "/memories/dir/sub/inner"}, raw("EINVAL: invalid argument", "rename", "/dir/sub' -> '"+rootA+"/dir/sub/inner"), "Error: Cannot move /memories/dir/sub into itself"},
		{"create under a dangling-symlink parent", map[string]any{"command": "create", "path": "/memories/dangling/x.md", "file_text": "t"}, raw(enoent, "mkdir", "/dangling"), gone("/memories/dangling/x.md")},
		{"create under a dangling-symlink grandparent", map[string]any{"command": "create", "path": "/memories/dangling/sub/x.md", "file_text": "t"}, raw(enotdir, "mkdir", "/dangling"), gone("/memories/dangling/sub/x.md")},
		{"rename under a dangling-symlink parent", map[string]any{"command": "rename", "old_path": "/memories/alpha.md", "new_path": "/memories/dangling/x.md"}, raw(enoent, "mkdir", "/dangling"), "Error: The path /memories/dangling/x.md does not exist"},
		{"directory onto a dangling link", map[string]any{"command": "rename", "old_path": "/memories/dir/sub", "new_path": "/memories/dangling"}, raw(enotdir, "rename", "/dir/sub' -> '"+rootA+"/dangling"), "Error: The destination /memories/dangling already exists"},
		{"NUL byte", map[string]any{"command": "view", "path": "/memories/a\x00b.md"},
			"Error: The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '" + rootA + "/a\\x00b.md'",
			`Error: The path /memories/a\x00b.md contains a NUL byte`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			beforeA, beforeB := refSnapshot(t, pair.baseA), refSnapshot(t, pair.baseB)
			ref, ms := refBoth(t, pair, c.input)
			if want := (refAnswer{Text: c.ref}); ref[0] != want {
				t.Errorf("reference: %v\nwant       %v", ref[0], want)
			}
			if !strings.Contains(ref[0].Text, rootA) {
				t.Errorf("the reference's raw error %q does not contain the host path %s", ref[0].Text, rootA)
			}
			if want := (refAnswer{Text: c.ms}); ms[0] != want {
				t.Errorf("memstore: %v\nwant      %v", ms[0], want)
			}
			if leak := pair.hostPath(ms[0].Text); leak != "" {
				t.Errorf("memstore's answer contains the host path %s", leak)
			}
			if got, _ := refRawOSError(c.input, ref[0].Text, rootA); got != c.ms {
				t.Errorf("the differential test maps this raw error to %q, want %q", got, c.ms)
			}
			// Neither side changes anything (the reference fails before
			// writing, memstore refuses).
			if diff := refDiffTrees(beforeA, refSnapshot(t, pair.baseA)); diff != "" {
				t.Errorf("the reference changed its tree:\n%s", diff)
			}
			if diff := refDiffTrees(beforeB, refSnapshot(t, pair.baseB)); diff != "" {
				t.Errorf("memstore changed its tree:\n%s", diff)
			}
		})
	}
}

// The prefix is exact (docs/memory-tool.md, Exact prefix).
func TestReferenceExactPrefix(t *testing.T) {
	for _, c := range []struct{ path, hostRel string }{
		{"/memoriesX/a.md", "X/a.md"},
		{"/memories.txt", ".txt"},
		{"/memories_backup/x", "_backup/x"},
	} {
		refCreateRefused(t, c.path, c.hostRel, "Error: Path must start with /memories, got: "+c.path)
	}
}

// Percent-encoded traversal is refused, never decoded (docs/memory-tool.md,
// Encoded traversal).
func TestReferencePercentEncoded(t *testing.T) {
	for _, c := range []struct{ path, hostRel string }{
		{"/memories/%2e%2e%2fsecret.md", "%2e%2e%2fsecret.md"},
		{"/memories/%2E%2E%2Fsecret.md", "%2E%2E%2Fsecret.md"},
		{"/memories/%2E%2e%2F%2e%2E%2fx.md", "%2E%2e%2F%2e%2E%2fx.md"},
		{"/memories/..%2fescape.md", "..%2fescape.md"},
		{"/memories/%2e%2e/x.md", "%2e%2e/x.md"},
		{"/memories/a%5c..%5cb.md", "a%5c..%5cb.md"},
	} {
		refCreateRefused(t, c.path, c.hostRel, "Error: Path "+c.path+" would escape /memories directory")
	}
}

// refCreateRefused checks a create that the reference carries out, writing
// hostRel inside its root, and that memstore refuses with want, writing
// nothing.
func refCreateRefused(t *testing.T, path, hostRel, want string) {
	t.Helper()
	refNeed(t)
	t.Run(path, func(t *testing.T) {
		pair := refNewPair(t)
		before := refSnapshot(t, pair.baseB)
		ref, ms := refBoth(t, pair, map[string]any{"command": "create", "path": path, "file_text": "quirk\n"})
		if wantRef := (refAnswer{OK: true, Text: "File created successfully at: " + path}); ref[0] != wantRef {
			t.Errorf("reference: %v, want %v", ref[0], wantRef)
		}
		if got := refReadHost(t, filepath.Join(pair.rootA(), hostRel)); got != "quirk\n" {
			t.Errorf("reference wrote %q at %s inside its root, want %q", got, hostRel, "quirk\n")
		}
		refMemstoreRefused(t, pair, before, ms[0], want)
	})
}

// Malformed input changes nothing (docs/memory-tool.md, Malformed input).
// The reference's create without file_text fails only after it has made
// an empty file.
func TestReferenceCreateWithoutFileText(t *testing.T) {
	refNeed(t)
	pair := refNewPair(t)
	before := refSnapshot(t, pair.baseB)
	ref, ms := refBoth(t, pair, map[string]any{"command": "create", "path": "/memories/half.md"})
	if want := (refAnswer{Text: `Error: The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received undefined`}); ref[0] != want {
		t.Errorf("reference: %v, want %v", ref[0], want)
	}
	fi, err := os.Lstat(filepath.Join(pair.rootA(), "half.md"))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf("the reference should leave an empty file behind: %v, %v", fi, err)
	}
	refMemstoreRefused(t, pair, before, ms[0], "Error: Invalid input for create: file_text is required")
}

// refMemstoreRefused checks that memstore answered the error want and left
// its tree as the snapshot before shows it.
func refMemstoreRefused(t *testing.T, pair *refPair, before map[string]refEntry, got refAnswer, want string) {
	t.Helper()
	if w := (refAnswer{Text: want}); got != w {
		t.Errorf("memstore: %v, want %v", got, w)
	}
	if diff := refDiffTrees(before, refSnapshot(t, pair.baseB)); diff != "" {
		t.Errorf("memstore wrote something:\n%s", diff)
	}
}

// Lexical ".." and other spellings of the same path: both sides must agree
// (up to the replacement of raw OS errors), whatever the random
// sequences happened to pick.
func TestReferenceDotDotSpellings(t *testing.T) {
	refNeed(t)
	pair := refNewPair(t)
	for _, p := range []string{
		"/memories/a/../notes.md", "/memories/dir/../notes.md", "/memories/../memories/notes.md",
		"/memories/../memories", "/memories/../memories/dir/../alpha.md", "/memories/../../memories/notes.md",
		"/memories/dir/../../../memories/notes.md", "/memories/..", "/memories/../x.md", "/memories//../x.md",
		"/memories/../memories2/x", "/memories/dir/sub/../../alpha.md", "/memories/dir/back/../notes.md",
		"/memories/link-dir/../notes.md", "/memories/./notes.md", "/memories//notes.md", "/memories/notes.md/",
		"/memories/dir/..", "/memories/zz/..", "/memories/.",
	} {
		ins := []map[string]any{{"command": "view", "path": p}}
		if !strings.HasPrefix(path.Base(p+"-new"), ".") { // hidden: TestReferenceHiddenPaths
			ins = append(ins, map[string]any{"command": "create", "path": p + "-new", "file_text": "n\n"})
		}
		for _, in := range ins {
			ref, ms := refBoth(t, pair, in)
			if problem := refCompare(in, ref[0], ms[0], pair.rootA()); problem != "" {
				t.Errorf("%s: %s\nreference %v\nmemstore  %v", refJSON(t, in), problem, ref[0], ms[0])
			}
		}
	}
	if diff := refDiffTrees(refSnapshot(t, pair.baseA), refSnapshot(t, pair.baseB)); diff != "" {
		t.Errorf("the trees differ:\n%s", diff)
	}
}

// Hidden names are refused (stricter than the reference): the reference
// writes .git/config inside the memory directory, where git would run
// its hooks and fsmonitor, and reads .env; memstore does neither, and
// leaves the directory as it was.
func TestReferenceHiddenPaths(t *testing.T) {
	refNeed(t)
	pair := refNewPair(t)
	before := refSnapshot(t, pair.baseB)
	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/.git/config", "file_text": "[core]\n\tfsmonitor = touch pwned\n"},
		{"command": "create", "path": "/memories/dir/.env", "file_text": "KEY=1\n"},
		{"command": "view", "path": "/memories/.hidden"},
		{"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/.notes.md"},
	} {
		ref, ms := refBoth(t, pair, in)
		if !ref[0].OK {
			t.Errorf("%s: the reference refused (%v); this test pins that it does not", refJSON(t, in), ref[0])
		}
		p, _ := in["path"].(string)
		if p == "" {
			p, _ = in["new_path"].(string)
		}
		want := refAnswer{Text: "Error: The path " + p + " is not allowed: names beginning with \".\" are hidden, kept for other tools' settings and credentials, never memories. Choose a name without a leading dot"}
		if ms[0] != want {
			t.Errorf("%s: memstore %v, want %v", refJSON(t, in), ms[0], want)
		}
	}
	if diff := refDiffTrees(before, refSnapshot(t, pair.baseB)); diff != "" {
		t.Errorf("memstore changed the directory:\n%s", diff)
	}
}
