//go:build !unix

// Package cpuclock reads the CPU time the process has used, which the
// benchmarks and the bench command report beside wall time.
package cpuclock

import "time"

// Process is 0 where the process's CPU time is not read: the CPU figures
// then read 0 and the bench compares wall time.
func Process() time.Duration { return 0 }
