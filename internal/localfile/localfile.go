// Package localfile holds the rules memstore applies to the files of a
// local directory it reads memories from or writes them to (import, the
// memory directory, directory sync), so that every command draws the same
// line.
package localfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Hidden reports whether a file or directory name, one path segment, is
// hidden: it begins with ".". Hidden entries (.git/, .env, .ssh/,
// .envrc and the like) hold configuration, credentials and hooks that
// other tools read or run, never memories: memstore neither reads them
// into a store nor writes them from one.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }

// NotText is why a file that is not Text is skipped, for a person.
const NotText = "not text (a binary file: not UTF-8, or with a NUL byte)"

// Text reports whether data is text a memory may hold: valid UTF-8
// without a NUL byte. A NUL marks a binary file, as it does for git and
// grep, even when the bytes around it happen to be valid UTF-8.
func Text(data []byte) bool { return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 }

// ReadAtMost reads the file at path whole, refusing one of more than
// limit bytes (read up to one byte past it, never whole), with an error
// that names the file and the limit.
func ReadAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
