// Package lines reads newline-delimited input of bounded line length, for
// the commands that take one JSON message per line on standard input
// (memstore tool, memstore mcp): a line longer than the bound is read to
// its end and reported, without ever being held in memory.
package lines

import (
	"bufio"
	"bytes"
	"errors"
)

// Max is the longest line the commands accept, in bytes: well above any
// message a model sends, far below what would strain the machine.
const Max = 16 << 20

// Read reads a line of at most max bytes, without its newline; a longer
// one is read to its end and reported too long, without being kept. err
// is r's, io.EOF at the end of input (with the last line, if it had no
// newline).
func Read(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		part, err := r.ReadSlice('\n')
		if !tooLong && len(line)+len(part) <= max+1 { // +1: the newline
			line = append(line, part...)
		} else {
			tooLong, line = true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
		}
	}
}
