package lines

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "short\n" + long + "\n\nexact" + strings.Repeat("y", 15) + "\n" + long + "z\nlast"
	// A small buffer, so that long lines come in several parts.
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	type got struct {
		line    string
		tooLong bool
	}
	want := []got{{"short", false}, {"", true}, {"", false}, {"exact" + strings.Repeat("y", 15), false}, {"", true}, {"last", false}}
	for i, w := range want {
		line, tooLong, err := Read(r, 20)
		if string(line) != w.line || tooLong != w.tooLong {
			t.Errorf("line %d: %q, too long %v; want %q, %v", i, line, tooLong, w.line, w.tooLong)
		}
		if (err != nil) != (i == len(want)-1) || err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("line %d: err %v", i, err)
		}
	}
}
