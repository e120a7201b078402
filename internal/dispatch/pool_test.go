package dispatch

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPoolRunsWorkAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := NewPool(2, 7)
		require.Equal(t, 7, pool.Throughput())
		var ran atomic.Int32
		for range 10 {
			pool.Schedule(func() { ran.Add(1) })
		}
		synctest.Wait()
		require.Equal(t, int32(10), ran.Load())
		pool.Close()
		pool.Close()
		pool.Schedule(func() { ran.Add(1) })
		synctest.Wait()
		require.Equal(t, int32(11), ran.Load(), "work scheduled after Close still runs")
	})
}
