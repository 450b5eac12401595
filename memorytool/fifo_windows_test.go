package memorytool_test

import "testing"

// mkfifo skips the test: Windows has no FIFOs in its file system, and the
// fixtures that make one hold Unix's symlinks and modes too.
func mkfifo(tb testing.TB, path string) {
	tb.Skip("the fixture needs a FIFO, which Windows has not")
}
