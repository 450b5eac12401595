//go:build unix

package pgtest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own: an interrupt of the
// tests must not reach the server, which the watchdog stops.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
