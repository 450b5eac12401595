//go:build unix

package memorytool_test

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path, for the tests of what the tool does with
// one.
func mkfifo(tb testing.TB, path string) {
	tb.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Fatalf("mkfifo: %v", err)
	}
}
