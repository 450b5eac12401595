//go:build !unix

package pgtest

import "os/exec"

// ownGroup does nothing where there are no process groups: the tests
// that start a PostgreSQL server run on Unix (the watchdog is a sh
// script).
func ownGroup(*exec.Cmd) {}
