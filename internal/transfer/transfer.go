// Package transfer is the format of a store's memories outside memstore,
// as 'memstore export' and 'memstore import' and the web console write
// and read them: JSON lines, one memory a line, or a zip of files, one
// memory a file at its path.
package transfer

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
)

// A Line is one memory in a JSON-lines export.
type Line struct {
	Path          string  `json:"path"`
	Content       *string `json:"content"`
	ContentSHA256 string  `json:"content_sha256,omitempty"`
}

// LineWriter writes memories as JSON lines.
type LineWriter struct{ enc *json.Encoder }

// NewLineWriter returns a LineWriter to w.
func NewLineWriter(w io.Writer) *LineWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &LineWriter{enc: enc}
}

// Write writes m as one line.
func (lw *LineWriter) Write(m *memstore.Memory) error {
	return lw.enc.Encode(Line{Path: m.Path, Content: &m.Content, ContentSHA256: m.ContentSHA256})
}

// ParseLine reads one line of JSON lines: a path and a content, whose
// content_sha256, when the line has one, must match it. The error says
// what is wrong with the line.
func ParseLine(b []byte) (path, content string, err error) {
	var l Line
	switch {
	case json.Unmarshal(b, &l) != nil:
		return "", "", errors.New("not a JSON object with path and content")
	case l.Path == "" || l.Content == nil:
		return "", "", errors.New("path and content are required")
	case l.ContentSHA256 != "" && !strings.EqualFold(l.ContentSHA256, memstore.ContentSHA256(*l.Content)):
		return "", "", errors.New("content_sha256 does not match the content")
	}
	return l.Path, *l.Content, nil
}

// ZipWriter writes memories as the files of a zip, each at its path
// without the leading slash, escaped where needed (EntryName).
type ZipWriter struct{ zw *zip.Writer }

// NewZipWriter returns a ZipWriter to w; Close finishes the zip.
func NewZipWriter(w io.Writer) *ZipWriter { return &ZipWriter{zw: zip.NewWriter(w)} }

// Write adds m as a file.
func (z *ZipWriter) Write(m *memstore.Memory) error {
	fh := &zip.FileHeader{Name: EntryName(m.Path), Method: zip.Deflate, Modified: m.UpdatedAt}
	// Made on Unix, readable by its owner only, as every export: an
	// extractor then takes the name as the UTF-8 it is flagged as (for a
	// zip made on MS-DOS, Info-ZIP's unzip reads it in the DOS code page).
	fh.SetMode(0o600)
	f, err := z.zw.CreateHeader(fh)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, m.Content)
	return err
}

// Close writes the zip's directory.
func (z *ZipWriter) Close() error { return z.zw.Close() }

// MaxEntries bounds the entries of a file an import reads (a zip's files,
// JSON lines), so that a file of many empty or malformed entries costs no
// more than a bounded amount of work.
const MaxEntries = 10_000

// ErrTooLarge is why a file is not imported: it could not be a memory.
var ErrTooLarge = fmt.Errorf("over %d bytes, the limit for a memory", memstore.MaxContentBytes)

// A ZipFile is one file of a zip as a memory: its path and content, or
// why it is skipped (Skip: hidden, not text) or fails (Fail: too large,
// unreadable).
type ZipFile struct {
	Name, Path, Content string
	Skip, Fail          string
}

// ReadZip reads the files of a zip, in its order, as memories: a file at
// NAME becomes the memory at /NAME, unescaped (EntryPath). Folders are
// passed over; a file whose name is unsafe fails; files whose path has a
// hidden name, however the name writes it (.git/x or %2Egit/x), and
// files that are not text are skipped, as a directory import skips them:
// a zip is files, and a hidden file is never read into a store (JSON
// lines carry every path). A file over memstore.MaxContentBytes fails.
// It stops at the first error of fn, and refuses a zip of more than
// MaxEntries entries before reading any.
func ReadZip(r io.ReaderAt, size int64, fn func(ZipFile) error) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("not a zip file: %w", err)
	}
	if len(zr.File) > MaxEntries {
		return fmt.Errorf("the zip has %d entries, over the %d an import reads", len(zr.File), MaxEntries)
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		zf := ZipFile{Name: f.Name, Path: "/" + strings.TrimPrefix(f.Name, "/")}
		path, err := EntryPath(f.Name)
		if err != nil {
			zf.Fail = err.Error()
		} else {
			zf.Path = path
			// On the path the name stands for: %2Egit/x is .git/x.
			for _, seg := range strings.Split(path[1:], "/") {
				if localfile.Hidden(seg) {
					zf.Skip = "hidden"
				}
			}
		}
		if zf.Skip == "" && zf.Fail == "" {
			zf.Content, zf.Fail, zf.Skip = readZipFile(f)
		}
		if err := fn(zf); err != nil {
			return err
		}
	}
	return nil
}

// readZipFile reads a file of a zip, at most memstore.MaxContentBytes of
// it, whatever its header claims.
func readZipFile(f *zip.File) (content, fail, skip string) {
	if f.UncompressedSize64 > memstore.MaxContentBytes {
		return "", ErrTooLarge.Error(), ""
	}
	rc, err := f.Open()
	if err != nil {
		return "", err.Error(), ""
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, memstore.MaxContentBytes+1))
	switch {
	case err != nil:
		return "", err.Error(), ""
	case len(b) > memstore.MaxContentBytes:
		return "", ErrTooLarge.Error(), ""
	case !localfile.Text(b):
		return "", "", localfile.NotText
	}
	return string(b), "", ""
}

// The names of a zip's entries. A memory's path may hold what an
// extractor reads as a way out of the folder it extracts to (a
// backslash, which Windows' tools take for a separator, so that
// /..\..\x climbs; a drive, C:\x; a share, \\host\share\x), or a name
// that some system refuses, hides or treats as a device. EntryName
// therefore writes each segment of a path with these characters
// percent-escaped, as in a URL (%5C for "\"), and the escape character
// itself as %25:
//
//   - \ : * ? " < > | and %, and any control character;
//   - a character that reads as one of these, or as a dot, once folded
//     or mapped to a Windows code page (fullwidth ＼, ¥; localfile.LookAlike);
//   - a first "." (a hidden name), a last "." or space (dropped by
//     Windows), and the first letter of a device name of Windows (CON,
//     aux.txt, COM1);
//   - the "~" of a name that would otherwise be in Windows' short 8.3
//     form (GIT~1, AUTHOR~1, or .~0 once escaped as %2E~0), which would
//     reach the long name's file: GIT%7E1 is no short name.
//
// So an entry name is always relative, holds only "/" as a separator and
// no segment that is empty, "." or "..", and extracts to the same name
// everywhere (a segment longer than a file system takes, which a memory
// path may have, fails to extract there). EntryPath reads a name back,
// unescaping every %XX, so that an export imports as the same paths (but
// for hidden ones, which ReadZip skips); it refuses a name that is
// absolute or that holds "\", ":" or a ".." (or "." or empty) segment,
// which no export writes.

// EntryName is the name of a memory's file in a zip: its path without
// the leading "/", each segment escaped as above.
func EntryName(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, seg := range segs {
		segs[i] = escapeSegment(seg)
	}
	return strings.Join(segs, "/")
}

// escapeSegment escapes one segment of a path for EntryName.
func escapeSegment(seg string) string {
	if out := escapeRunes(seg, false); !localfile.ShortName(out) {
		return out
	}
	return escapeRunes(seg, true) // with no "~" left, no short name
}

// escapeRunes escapes seg's characters as EntryName says, and every "~"
// too when tilde is set.
func escapeRunes(seg string, tilde bool) string {
	var b strings.Builder
	first := localfile.Hidden(seg) || localfile.ExecName(seg) != "" || localfile.WindowsDevice(seg)
	for i, r := range seg {
		end := i+utf8.RuneLen(r) == len(seg)
		if strings.ContainsRune(`\:*?"<>|%`, r) || unicode.IsControl(r) || localfile.LookAlike(r) ||
			i == 0 && first || end && (r == '.' || r == ' ') || tilde && r == '~' {
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EntryPath is the memory path of a zip's entry name (see EntryName), or
// why the name is unsafe.
func EntryPath(name string) (string, error) {
	switch {
	case strings.HasPrefix(name, "/"):
		return "", errors.New(`unsafe name: it is absolute (begins with "/")`)
	case strings.ContainsRune(name, '\\'):
		return "", errors.New(`unsafe name: it holds "\\", a path separator on Windows`)
	case strings.ContainsRune(name, ':'):
		return "", errors.New(`unsafe name: it holds ":", which names a drive or a stream on Windows`)
	}
	segs := strings.Split(name, "/")
	for i, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			return "", errors.New(`unsafe name: it has an empty, "." or ".." segment, which leads out of where it is extracted`)
		}
		if segs[i] = unescape(seg); strings.ContainsRune(segs[i], '/') {
			return "", errors.New(`unsafe name: it escapes a "/" (%2F) within a name`)
		}
	}
	return "/" + strings.Join(segs, "/"), nil
}

// unescape decodes every %XX of s; a "%" that begins no such escape is
// kept as it is.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
