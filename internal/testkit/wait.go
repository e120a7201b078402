package testkit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// WaitLimit bounds a test's wait for something another goroutine or
// process does: far longer than any healthy run takes on a loaded CI
// machine, far shorter than go test's own timeout, so a hang fails the
// one test naming what it waited for instead of killing the binary.
const WaitLimit = time.Minute

// Receive returns the next value of c, failing tb naming what when none
// came within WaitLimit. Call it on the test's goroutine.
func Receive[T any](tb testing.TB, c <-chan T, what string) T {
	tb.Helper()
	timer := time.NewTimer(WaitLimit)
	defer timer.Stop()
	select {
	case v := <-c:
		return v
	case <-timer.C:
		tb.Fatalf("waited %s for %s", WaitLimit, what)
		var zero T
		return zero
	}
}

// Wait waits for wg, failing tb naming what when it did not finish
// within WaitLimit (the goroutine waiting on wg is then left behind, and
// goleak names it too). Call it on the test's goroutine.
func Wait(tb testing.TB, wg *sync.WaitGroup, what string) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wg.Wait()
	}()
	Receive(tb, done, what)
}

// Until polls cond (every millisecond) until it holds, failing tb naming
// what when it did not within WaitLimit. cond reads shared state the way
// its owner allows (under its lock, or through a channel's len). Call it
// on the test's goroutine; it is for states nothing signals.
func Until(tb testing.TB, cond func() bool, what string) {
	tb.Helper()
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s", WaitLimit, what)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Context is a context for the blocking calls of tb's test: it ends
// WaitLimit after this call (so a hung call returns, failing the test at
// its own line, instead of killing the binary) and when the test ends.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	tb.Cleanup(cancel)
	return ctx
}
