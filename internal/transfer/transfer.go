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
// without the leading slash.
type ZipWriter struct{ zw *zip.Writer }

// NewZipWriter returns a ZipWriter to w; Close finishes the zip.
func NewZipWriter(w io.Writer) *ZipWriter { return &ZipWriter{zw: zip.NewWriter(w)} }

// Write adds m as a file.
func (z *ZipWriter) Write(m *memstore.Memory) error {
	f, err := z.zw.CreateHeader(&zip.FileHeader{Name: strings.TrimPrefix(m.Path, "/"), Method: zip.Deflate, Modified: m.UpdatedAt})
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
// NAME becomes the memory at /NAME. Folders are passed over; files below
// a hidden name and files that are not text are skipped, as a directory
// import skips them; a file over memstore.MaxContentBytes fails. It stops
// at the first error of fn, and refuses a zip of more than MaxEntries
// entries before reading any.
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
		for _, seg := range strings.Split(f.Name, "/") {
			if localfile.Hidden(seg) {
				zf.Skip = "hidden"
			}
		}
		if zf.Skip == "" {
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
