package transfer

import (
	"archive/zip"
	"bytes"
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
	// Entries no export makes, as a person's zip may hold.
	for name, content := range map[string]string{".git/config": "x", "bin.dat": "a\x00b", "big.md": strings.Repeat("x", memstore.MaxContentBytes+1)} {
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
	want := map[string]string{"/a.md": "alpha", "/d/b.md": "beta\n", "/.git/config": "skip: hidden",
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
