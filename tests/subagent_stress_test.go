package tests

import (
	"context"
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/stress"
	"github.com/stretchr/testify/require"
)

var stressBig = flag.Bool("stress.big", false, "run the bigger continuable-subagent stress loops")

// TestSubagentStressInvariants races follow-ups against settlements and
// scoped drains over several forests and checks every invariant: typed
// rejections, accepted = logged + discarded, child-first lifecycle order,
// no agent left, every session stored and listed; goleak checks the
// goroutines.
func TestSubagentStressInvariants(t *testing.T) {
	configs := []stress.Config{
		{Forests: 2, Fanout: 2, Depth: 3, Followups: 150, Seed: 1},
		{Forests: 3, Fanout: 3, Depth: 2, Followups: 200, Seed: 7, Workers: 16},
	}
	if *stressBig {
		configs = append(configs, stress.Config{Forests: 8, Fanout: 4, Depth: 4, Followups: 5000, Seed: 42, Workers: 32})
	}
	for _, cfg := range configs {
		var report stress.Report
		var err error
		// In a bubble the workload's holds take no real time.
		synctest.Test(t, func(*testing.T) {
			report, err = stress.Run(context.Background(), cfg)
			// A message that reached an actor after it stopped starts
			// the actor system's dead-letter throttle, a goroutine that
			// waits one second; time stops when this function returns,
			// so let that second pass (it takes no real time).
			time.Sleep(2 * time.Second)
		})
		require.NoError(t, err)
		require.Empty(t, report.Violations, report.String())
		require.Equal(t, cfg.Followups, report.Accepted+report.Rejected)
		require.Equal(t, report.Accepted, report.Logged+report.Discarded+report.Lost)
		require.Zero(t, report.Lost, "nothing is lost with room on the disk")
		require.Positive(t, report.Activations)
		t.Log(report, report.ByCode)
	}
}
