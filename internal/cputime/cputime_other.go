//go:build !unix

// Package cputime measures the CPU time the test process has used, for
// the benchmarks that report what an operation costs on a shared machine.
package cputime

import (
	"testing"
	"time"
)

// Process skips the benchmark: it is measured with getrusage(2), which
// only Unix has.
func Process(b *testing.B) time.Duration {
	b.Skip("CPU time is measured with getrusage, on Unix only")
	return 0
}
