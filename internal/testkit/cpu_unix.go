//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the process has used so
// far, every goroutine included; 0 when it cannot be read. Benchmarks
// report it beside wall time, which a shared machine makes noisy.
func ProcessCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
