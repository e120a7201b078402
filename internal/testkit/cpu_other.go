//go:build !unix

package testkit

import "time"

// ProcessCPU is 0 where the process's CPU time is not read: the CPU
// figures of the benchmarks read 0.
func ProcessCPU() time.Duration { return 0 }
