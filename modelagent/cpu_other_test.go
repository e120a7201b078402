//go:build !unix

package modelagent_test

import "time"

// processCPU is unknown here: the CPU figures of the benchmarks read 0.
func processCPU() time.Duration { return 0 }
