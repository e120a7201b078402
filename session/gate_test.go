package session

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// closeAsync runs g.close on a new goroutine; the channel closes when it
// returns.
func closeAsync(g *gate) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.close()
	}()
	return done
}

// closeAsyncN starts n concurrent closeAsync calls.
func closeAsyncN(g *gate, n int) []<-chan struct{} {
	closers := make([]<-chan struct{}, n)
	for i := range closers {
		closers[i] = closeAsync(g)
	}
	return closers
}

func TestGateAdmitsUntilClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		require.False(t, g.isClosed())
		for range 3 {
			require.True(t, g.enter(), "an open gate admits")
		}
		for range 3 {
			g.leave()
		}
		require.True(t, g.enter(), "leaving does not close the gate")
		g.leave()
		require.False(t, g.isClosed())

		g.close() // no writer inside: returns at once (a block here is a bubble deadlock)
		require.True(t, g.isClosed())
		require.False(t, g.enter(), "a closed gate refuses")
		require.False(t, g.enter(), "for good")
	})
}

func TestGateCloseWaitsForEveryAdmittedWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		require.True(t, g.enter())
		require.True(t, g.enter())

		closed := closeAsync(g)
		synctest.Wait()
		require.False(t, testkit.Closed(closed), "close waits while two writers are inside")
		require.True(t, g.isClosed(), "but refuses new writers at once")
		require.False(t, g.enter())

		g.leave()
		synctest.Wait()
		require.False(t, testkit.Closed(closed), "one writer is still inside")

		g.leave()
		synctest.Wait()
		require.True(t, testkit.Closed(closed), "the last writer to leave releases close")
		require.Zero(t, g.state.Load()>>1, "no writer counted")
	})
}

func TestGateCloseIsIdempotent(t *testing.T) {
	t.Run("sequential, no writer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGate()
			g.close()
			g.close() // the drained channel is closed once only: a second close(…) would panic
			require.True(t, g.isClosed())
			require.False(t, g.enter())
		})
	})
	t.Run("sequential, after writers left", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGate()
			require.True(t, g.enter())
			closed := closeAsync(g)
			synctest.Wait()
			g.leave()
			<-closed
			g.close()
			g.close()
			require.False(t, g.enter())
		})
	})
	t.Run("concurrent closers wait for the same writer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGate()
			require.True(t, g.enter())
			closers := closeAsyncN(g, 4)
			synctest.Wait()
			for i, c := range closers {
				require.False(t, testkit.Closed(c), "closer %d returned with a writer inside", i)
			}
			g.leave()
			synctest.Wait()
			for i, c := range closers {
				require.True(t, testkit.Closed(c), "closer %d still blocked after the last writer left", i)
			}
			g.close()
		})
	})
	t.Run("concurrent closers, no writer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGate()
			closers := closeAsyncN(g, 4)
			synctest.Wait()
			for i, c := range closers {
				require.True(t, testkit.Closed(c), "closer %d", i)
			}
		})
	})
}

// Writers entering and leaving in a loop race several closers: no writer
// is admitted once a close has returned, and no close returns while a
// writer is inside.
func TestGateUnderConcurrentEnterLeaveAndClose(t *testing.T) {
	const rounds, writers, closers = 2000, 8, 3
	for range rounds {
		g := newGate()
		var (
			inside        atomic.Int64 // writers between a successful enter and their leave
			closeReturned atomic.Bool
			lateAdmits    atomic.Int64 // enters that succeeded after a close returned
			earlyCloses   atomic.Int64 // closes that returned with a writer inside
		)
		var running sync.WaitGroup // every writer was admitted once: the closers may go
		running.Add(writers)
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				first := true
				for g.enter() {
					inside.Add(1)
					if closeReturned.Load() {
						lateAdmits.Add(1)
					}
					inside.Add(-1)
					g.leave()
					runtime.Gosched() // let the closers in
					if first {
						first = false
						running.Done()
					}
				}
				if first { // refused at once: a closer went ahead of it
					running.Done()
				}
			})
		}
		for range closers {
			wg.Go(func() {
				running.Wait()
				g.close()
				if inside.Load() != 0 {
					earlyCloses.Add(1)
				}
				closeReturned.Store(true)
			})
		}
		wg.Wait()
		require.Zero(t, lateAdmits.Load(), "writers admitted after close returned")
		require.Zero(t, earlyCloses.Load(), "closes that returned with a writer inside")
		require.False(t, g.enter())
		require.Equal(t, int64(1), g.state.Load(), "closed, no writer counted")
	}
}
