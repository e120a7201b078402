package testkit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// fatalRecorder is a testing.TB whose Fatalf records the message instead
// of ending the goroutine.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestReceiveReturnsTheValueOrFailsNamingTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := make(chan int, 1)
		c <- 7
		rec := &fatalRecorder{TB: t}
		require.Equal(t, 7, Receive(rec, c, "the seven"))
		require.Empty(t, rec.fatal)

		require.Zero(t, Receive(rec, c, "the eight"))
		require.Equal(t, "waited 1m0s for the eight", rec.fatal)
	})
}

func TestWaitReturnsOnceTheGroupIsDoneOrFailsNamingIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		wg.Go(func() {})
		rec := &fatalRecorder{TB: t}
		Wait(rec, &wg, "the workers")
		require.Empty(t, rec.fatal)

		wg.Add(1)
		Wait(rec, &wg, "the stuck worker")
		require.Equal(t, "waited 1m0s for the stuck worker", rec.fatal)
		wg.Done() // lets Wait's goroutine end before the bubble does
	})
}

func TestUntilReturnsOnceTheConditionHoldsOrFailsNamingIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		polls := 0
		rec := &fatalRecorder{TB: t}
		Until(rec, func() bool { polls++; return polls == 3 }, "the third poll")
		require.Empty(t, rec.fatal)
		require.Equal(t, 3, polls)

		Until(rec, func() bool { return false }, "what never holds")
		require.Equal(t, "waited 1m0s for what never holds", rec.fatal)
	})
}

func TestContextEndsAfterTheWaitLimitOrWithItsTest(t *testing.T) {
	var ended context.Context
	t.Run("ends with its test", func(t *testing.T) {
		ended = Context(t)
		require.NoError(t, ended.Err())
	})
	require.ErrorIs(t, ended.Err(), context.Canceled)

	synctest.Test(t, func(t *testing.T) {
		ctx := Context(t)
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		require.Equal(t, WaitLimit, time.Until(deadline))
		time.Sleep(WaitLimit)
		synctest.Wait()
		require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	})
}
