//go:build unix

package webdriver

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, which killGroup
// ends whole.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills p's process group: p and the processes it started.
func killGroup(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
}
