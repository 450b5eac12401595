//go:build !unix

package webdriver

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups: the browser
// tests run on Unix.
func ownGroup(*exec.Cmd) {}

// killGroup kills p alone.
func killGroup(p *os.Process) {
	p.Kill()
}
