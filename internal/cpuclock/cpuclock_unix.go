//go:build unix

// Package cpuclock reads the CPU time the process has used, which the
// benchmarks and the bench command report beside wall time (a shared
// machine makes wall time noisy).
package cpuclock

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system, every thread) the process has
// used so far; 0 when it cannot be read.
func Process() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
