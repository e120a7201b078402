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
		for range 5 {
			pool.ScheduleRunner(counter{&ran})
		}
		synctest.Wait()
		require.Equal(t, int32(15), ran.Load())
		pool.Close()
		pool.Close()
		pool.Schedule(func() { ran.Add(1) })
		synctest.Wait()
		pool.ScheduleRunner(counter{&ran})
		synctest.Wait()
		require.Equal(t, int32(17), ran.Load(), "work scheduled after Close still runs")
	})
}

// counter is a Runner that counts its runs.
type counter struct{ n *atomic.Int32 }

func (c counter) Run() { c.n.Add(1) }

// The inbox hands its mailbox to a dispatcher with this method.
var _ interface{ ScheduleRunner(interface{ Run() }) } = (*Pool)(nil)
