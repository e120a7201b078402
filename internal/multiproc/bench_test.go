package multiproc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkTakeoverAfterKill measures, per iteration, how long after a
// node holding a session is killed (kill -9) another node has taken it
// over (the first session.prompt that resumes it there, retried every
// TTL/50), against the lease TTL in the same run: takeover/ttl is about
// 2/3 to 1 (the lease was renewed at most a third of the TTL before the
// kill) plus the retry interval.
func BenchmarkTakeoverAfterKill(b *testing.B) {
	bin := buildOnce(b)
	ctx := context.Background()
	dsn := cluster.Database(b)
	survivor := startBench(b, bin, dsn, "survivor")
	require.NoError(b, InstallHistory(ctx, dsn))
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		victim := startBench(b, bin, dsn, "victim")
		parent, _, err := victim.CreateParent(ctx, 0)
		require.NoError(b, err, "iteration %d", i)
		b.StartTimer()
		killed := time.Now()
		victim.Kill()
		_, err = survivor.TakeOver(ctx, parent, ttl/50)
		require.NoError(b, err)
		total += time.Since(killed)
	}
	b.StopTimer()
	mean := total / time.Duration(b.N)
	b.ReportMetric(float64(mean.Milliseconds()), "takeover-ms")
	b.ReportMetric(float64(ttl.Milliseconds()), "ttl-ms")
	b.ReportMetric(float64(mean)/float64(ttl), "takeover/ttl")
	code, err := survivor.Stop(bound)
	require.NoError(b, err)
	require.Zero(b, code, survivor.Stderr())
	r, err := Check(ctx, dsn, nil)
	require.NoError(b, err)
	require.Empty(b, r.Violations)
}

func startBench(b *testing.B, bin, dsn, name string) *Node {
	n, err := Start(bin, dsn, name, ttl)
	require.NoError(b, err)
	b.Cleanup(func() {
		if !n.Exited() {
			n.Kill()
		}
	})
	return n
}
