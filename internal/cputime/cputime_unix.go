//go:build unix

// Package cputime measures the CPU time the test process has used, for
// the benchmarks that report what an operation costs on a shared machine.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Process is the CPU time the process has used, in user and system mode:
// on a shared machine, what the work costs whatever else runs beside it.
func Process(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
