//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system, every thread) the process
// has used so far; 0 when it cannot be read.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
