package memdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/internal/tooltext"
)

// LogEntry formats text as one entry of a daily log: "- HH:MM " and the
// first line, then each further line indented two spaces. Line endings
// become LF, and trailing blank lines are dropped. It reports an error
// for text that is empty or only white space.
func LogEntry(at time.Time, text string) (string, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimRight(text, " \t\n")
	text = strings.TrimLeft(text, "\n")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("nothing to log: the text is empty")
	}
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(at.Format("15:04"))
	b.WriteByte(' ')
	tooltext.AppendListItem(&b, text)
	return b.String(), nil
}

// AppendLog appends the entry for text at time at to the log file at path
// (see LogEntry), creating the missing directories (mode 0700) and the
// file (mode 0600). It never rewrites the file: the entry goes in one
// append-mode write made under an exclusive advisory lock, so entries of
// concurrent writers, in this process or others, are neither interleaved
// nor lost. If the file does not end with a line feed (a writer that does
// not take the lock stopped mid-line), the entry starts on a new line.
func AppendLog(path string, at time.Time, text string) (entry string, err error) {
	entry, err = LogEntry(at, text)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), private.DirMode); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, private.FileMode)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	unlock, err := lockFile(f)
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", path, err)
	}
	defer unlock()
	data := entry
	if ends, err := endsWithNewline(path); err != nil {
		return "", err
	} else if !ends {
		data = "\n" + entry
	}
	n, err := io.WriteString(f, data)
	if err != nil {
		return "", err
	}
	if n != len(data) {
		return "", io.ErrShortWrite
	}
	return entry, nil
}

// endsWithNewline reports whether the file at path is empty or ends with
// a line feed.
func endsWithNewline(path string) (bool, error) {
	r, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return true, nil
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] == '\n', nil
}
