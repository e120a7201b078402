// Package dispatch is the protoactor Dispatcher the runtime runs its
// actors on: a fixed set of long-lived goroutines that never blocks a
// Schedule. It imports nothing of this module, so the benchmarks' floors
// run their actors on the very dispatcher the runtime does.
package dispatch
