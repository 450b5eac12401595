package transfer

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
)

// TestZipRoundTrip: memories written as a zip read back at their paths;
// hidden, binary and oversized files are skipped or failed with a reason.
func TestZipRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	zw := NewZipWriter(&buf)
	for _, m := range []memstore.Memory{{Path: "/a.md", Content: "alpha"}, {Path: "/d/b.md", Content: "beta\n"}} {
		if err := zw.Write(&m); err != nil {
			t.Fatal(err)
		}
	}
	// Entries no export makes, as a person's zip may hold; a hidden name
	// is hidden however it is written.
	for name, content := range map[string]string{".git/config": "x", "%2Egit/hooks/pre-commit": "x", "d/%2eenv": "x", "bin.dat": "a\x00b", "big.md": strings.Repeat("x", memstore.MaxContentBytes+1)} {
		f, _ := zw.zw.Create(name)
		f.Write([]byte(content))
	}
	zw.zw.Create("empty/")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err := ReadZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(f ZipFile) error {
		switch {
		case f.Skip != "":
			got[f.Path] = "skip: " + f.Skip
		case f.Fail != "":
			got[f.Path] = "fail: " + f.Fail
		default:
			got[f.Path] = f.Content
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"/a.md": "alpha", "/d/b.md": "beta\n", "/.git/config": "skip: hidden", "/.git/hooks/pre-commit": "skip: hidden", "/d/.env": "skip: hidden",
		"/bin.dat": "skip: " + localfile.NotText, "/big.md": "fail: " + ErrTooLarge.Error()}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if err := ReadZip(strings.NewReader("not a zip"), 9, func(ZipFile) error { return nil }); err == nil || !strings.Contains(err.Error(), "not a zip") {
		t.Errorf("a file that is no zip: %v", err)
	}
	var many bytes.Buffer
	mz := zip.NewWriter(&many)
	for range MaxEntries + 1 {
		mz.Create("x/")
	}
	mz.Close()
	if err := ReadZip(bytes.NewReader(many.Bytes()), int64(many.Len()), func(ZipFile) error { t.Fatal("read an entry"); return nil }); err == nil {
		t.Error("a zip over MaxEntries entries was read")
	}
}

// TestParseLine: a line says its path and content; a bad one says what is
// wrong with it.
func TestParseLine(t *testing.T) {
	p, c, err := ParseLine([]byte(`{"path":"/a.md","content":"hi","content_sha256":"` + memstore.ContentSHA256("hi") + `"}`))
	if err != nil || p != "/a.md" || c != "hi" {
		t.Fatalf("= %q %q %v", p, c, err)
	}
	for line, want := range map[string]string{
		`nope`:             "not a JSON object",
		`{"path":"/a.md"}`: "path and content are required",
		`{"path":"/a.md","content":"hi","content_sha256":"00"}`: "does not match",
	} {
		if _, _, err := ParseLine([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

// awkward are memory paths that are valid in a store but unsafe or
// impossible as a zip's entry names on some system: separators and
// drives of Windows, its reserved names and characters, hidden names,
// look-alikes of separators and the escape character itself.
var awkward = []string{
	`/..\..\x`, `/C:\x`, `/\\host\share\x`, `/a:b.md`, `/CON`, `/aux.txt`, `/d/nul.md`, `/Com1 .md`,
	`/trailing.`, `/space `, `/.hidden/a.md`, `/d/.env`, `/GIT~1/config`, `/AUTHOR~1`, `/0~0`, `/MEMORY~1.MD`, `/doc~1.md`, `/100%.md`, `/%2e%2e/x.md`,
	`/%5C.md`, `/q?.md`, `/a*b<c>d|e"f.md`, "/wide\uff3cx", "/wide\uff0e\uff0e", "/yen\u00a5x", "/set\u2216minus",
	"/ellipsis\u2026", `/notes/été.md`, `/ノート.md`, `/plain/a b.md`,
}

// hidden are the awkward paths with a hidden name.
var hidden = map[string]bool{`/..\..\x`: true, `/.hidden/a.md`: true, `/d/.env`: true}

// TestZipEntryNamesSafe: every entry an export writes is a relative name
// of plain segments that no common extractor reads as a separator, a
// drive, a device, a hidden file or a name Windows refuses; and each
// reads back as the memory's path, but a hidden one, which an import
// skips.
func TestZipEntryNamesSafe(t *testing.T) {
	var buf bytes.Buffer
	zw := NewZipWriter(&buf)
	for _, p := range awkward {
		if err := memstore.ValidatePath(p); err != nil {
			t.Fatalf("%s is no memory path: %v", p, err)
		}
		if err := zw.Write(&memstore.Memory{Path: p, Content: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if why := unsafeEntry(f.Name); why != "" {
			t.Errorf("entry %q: %s", f.Name, why)
		}
	}
	got := map[string]string{}
	err = ReadZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(f ZipFile) error {
		if hidden[f.Path] {
			if f.Skip != "hidden" {
				t.Errorf("entry %q (%s), a hidden path: skip %q, fail %q; want skipped as hidden", f.Name, f.Path, f.Skip, f.Fail)
			}
			got[f.Path] = f.Path
			return nil
		}
		if f.Skip != "" || f.Fail != "" {
			t.Errorf("entry %q (%s) not read: %s%s", f.Name, f.Path, f.Skip, f.Fail)
		}
		got[f.Path] = f.Content
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range awkward {
		if got[p] != p {
			t.Errorf("%s does not read back: %q", p, got[p])
		}
	}
	if len(got) != len(awkward) {
		t.Errorf("read back %d memories, want %d: %v", len(got), len(awkward), got)
	}
}

// unsafeEntry says why an entry name is unsafe to extract anywhere, ""
// when it is not.
func unsafeEntry(name string) string {
	if strings.HasPrefix(name, "/") {
		return "absolute"
	}
	for _, seg := range strings.Split(name, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return "an empty, . or .. segment"
		case strings.ContainsAny(seg, `\:*?"<>|`):
			return "a character Windows refuses or reads as a separator or a drive"
		case strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " "):
			return "a final dot or space, which Windows drops"
		case localfile.ExecName(seg) != "":
			return localfile.ExecName(seg)
		case localfile.WindowsDevice(seg):
			return "a device name on Windows"
		case localfile.ShortName(seg):
			return "a name in Windows' short (8.3) form, which can reach another file"
		case len(seg) <= localfile.MaxNameBytes && !strings.Contains(seg, "%") && localfile.NameProblem(seg, "windows") != "":
			// (A name too long for a file system fails to extract there,
			// which is no danger: a memory's path may be longer.)
			return localfile.NameProblem(seg, "windows")
		}
		for _, r := range seg {
			if r >= 0x80 && localfile.LookAlike(r) {
				return fmt.Sprintf("%q reads as a character paths give a meaning to", r)
			}
		}
	}
	return ""
}

// TestZipUnsafeNamesRefused: an entry whose name is absolute, climbs out
// with .., or holds a backslash or a drive is refused with the reason,
// and the entries around it are read.
func TestZipUnsafeNamesRefused(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	bad := []string{`../x.md`, `a/../../x.md`, `..\..\x.md`, `C:\x.md`, `C:x.md`, `\\host\share\x.md`, `/etc/x.md`, `a//b.md`, `a/%2F/b.md`}
	for _, name := range append([]string{"first.md"}, append(bad, "last.md")...) {
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("x"))
	}
	zw.Close()
	refused := map[string]string{}
	var read []string
	err := ReadZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(f ZipFile) error {
		if f.Fail != "" {
			refused[f.Name] = f.Fail
		} else {
			read = append(read, f.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bad {
		if !strings.Contains(refused[name], "unsafe") {
			t.Errorf("%q: %q, want it refused as unsafe", name, refused[name])
		}
	}
	if strings.Join(read, " ") != "/first.md /last.md" {
		t.Errorf("read %v, want /first.md and /last.md", read)
	}
}

// TestZipExtracted: Info-ZIP's unzip, which reads a backslash as a
// separator, extracts an export of the awkward paths to exactly its
// entry names, non-ASCII ones too, every file inside the folder it was
// asked to fill and readable by its owner only.
func TestZipExtracted(t *testing.T) {
	bin, err := exec.LookPath("unzip")
	if err != nil {
		t.Skip("no unzip on PATH")
	}
	var buf bytes.Buffer
	zw := NewZipWriter(&buf)
	want := map[string]bool{}
	for _, p := range awkward {
		zw.Write(&memstore.Memory{Path: p, Content: p})
		want[EntryName(p)] = true
	}
	zw.Close()
	root := t.TempDir()
	file, dir := filepath.Join(root, "export.zip"), filepath.Join(root, "out", "here")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-o", file, "-d", dir).CombinedOutput(); err != nil {
		t.Fatalf("unzip: %v\n%s", err, out)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == file {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			t.Errorf("unzip wrote %s, outside %s", p, dir)
			return nil
		}
		if info, err := d.Info(); err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != 0o600 {
			t.Errorf("unzip wrote %s with mode %v, want 0600", rel, info.Mode())
		}
		if !want[filepath.ToSlash(rel)] {
			t.Errorf("unzip wrote %s, which is no entry's name", rel)
		}
		delete(want, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) > 0 {
		t.Errorf("entries not extracted at their names: %v", want)
	}
}

// FuzzZipEntryNames: whatever memory path is exported, its entry name is
// safe (unsafeEntry) and reads back as the path; whatever name a zip
// holds, reading it never panics, and a name read is relative, with no
// backslash, colon, or empty, "." or ".." segment, and gives a path that
// begins with "/".
func FuzzZipEntryNames(f *testing.F) {
	for _, p := range awkward {
		f.Add(p)
	}
	for _, s := range []string{"/a.md", "a/b.md", "../x", `C:\x`, "/%2F/x", "%zz", "a/%2e%2e/b", "/nul", "x/", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if memstore.ValidatePath(s) == nil {
			name := EntryName(s)
			if why := unsafeEntry(name); why != "" {
				t.Fatalf("%q exports as %q: %s", s, name, why)
			}
			if back, err := EntryPath(name); err != nil || back != s {
				t.Fatalf("%q exports as %q, which reads back as %q (%v)", s, name, back, err)
			}
		}
		p, err := EntryPath(s)
		if err != nil {
			return
		}
		if strings.HasPrefix(s, "/") || strings.ContainsAny(s, `\:`) || !strings.HasPrefix(p, "/") {
			t.Fatalf("the name %q is read as %q", s, p)
		}
		for _, seg := range strings.Split(s, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("the name %q, with the segment %q, is read as %q", s, seg, p)
			}
		}
	})
}
