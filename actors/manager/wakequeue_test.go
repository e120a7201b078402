package manager

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// Each queue test runs in a synctest bubble: a wake that never comes
// fails at once as a deadlock instead of hanging.

// A burst of wakes runs on at most the queue's limit of goroutines at
// once, and every distinct wake runs.
func TestABurstOfWakesRunsWithinTheBoundAndAllRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, n = 3, 40
		var group sync.WaitGroup
		var running, most atomic.Int32
		started := make(chan string, n)
		release := make(chan struct{})
		ran := map[string]int{}
		var mu sync.Mutex
		run := func(_ context.Context, id string) {
			now := running.Add(1)
			for old := most.Load(); now > old && !most.CompareAndSwap(old, now); old = most.Load() {
			}
			started <- id
			<-release
			running.Add(-1)
			mu.Lock()
			ran[id]++
			mu.Unlock()
		}
		q := wakeQueue{limit: limit, ctx: bg, group: &group, runner: wakeFunc(run)}
		for i := range n {
			q.push(fmt.Sprint("child-", i))
		}
		for range limit {
			<-started // the first limit wakes all block in run: the burst uses the whole bound
		}
		for range n - limit {
			release <- struct{}{}
			<-started // one more runs only once one ended
		}
		for range limit {
			release <- struct{}{}
		}
		group.Wait()
		require.LessOrEqual(t, most.Load(), int32(limit), "never more than the bound at once")
		require.Len(t, ran, n, "no wake was lost")
		for id, times := range ran {
			require.Equal(t, 1, times, id)
		}
	})
}

// Wakes for a session already queued (not yet running) coalesce into
// one; a wake for a session whose wake is running queues again.
func TestDuplicateQueuedWakesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var group sync.WaitGroup
		started := make(chan string, 16)
		release := make(chan struct{})
		run := func(_ context.Context, id string) { started <- id; <-release }
		q := wakeQueue{limit: 1, ctx: bg, group: &group, runner: wakeFunc(run)}
		q.push("x")
		require.Equal(t, "x", <-started)
		for _, id := range []string{"a", "a", "b", "a", "x"} {
			q.push(id)
		}
		var order []string
		for range 3 {
			release <- struct{}{}
			order = append(order, <-started)
		}
		release <- struct{}{}
		group.Wait()
		require.Equal(t, []string{"a", "b", "x"}, order, "x once more (it was running when woken), a and b once each")
	})
}

// A stopped queue drops the wakes still queued; the running one ends.
func TestAStoppedWakeQueueDropsWhatIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var group sync.WaitGroup
		ctx, cancel := context.WithCancel(bg)
		started := make(chan string, 4)
		release := make(chan struct{})
		run := func(_ context.Context, id string) { started <- id; <-release }
		q := wakeQueue{limit: 1, ctx: ctx, group: &group, runner: wakeFunc(run)}
		q.push("x")
		<-started
		q.push("y")
		cancel()
		close(release)
		group.Wait()
		require.Empty(t, started, "y was dropped")
	})
}

// wakeFunc runs a test's wakes.
type wakeFunc func(ctx context.Context, id string)

func (f wakeFunc) runWake(ctx context.Context, id string) { f(ctx, id) }
