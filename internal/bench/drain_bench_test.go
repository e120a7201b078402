package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
)

var drainProfile = flag.String("drainprofile", "",
	"BenchmarkDrain: write a CPU profile of each drain alone (not of its forest's build) to FILE.N")

// BenchmarkDrain is one round of row 6 (fan-out 10, depth 4: 11,110
// descendants): each iteration grows a forest untimed, times its scoped
// drain, then times a drain floor of the same shape (DrainFloor). It
// reports the drain's and the floor's wall and CPU times, the drain over
// the floor in wall time and in CPU time (a shared machine's load weighs
// less on the second). go test's -cpuprofile would mostly profile the
// forests' builds; -drainprofile profiles the drains alone.
func BenchmarkDrain(b *testing.B) {
	ctx := context.Background()
	var drain, drainCPU, floor, floorCPU time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		took, cpu := drainOnce(ctx, b, i)
		drain, drainCPU = drain+took, drainCPU+cpu
		// The floor runs with the runtime closed: its forest keeps half
		// the process's file limit open.
		res, _, err := drainFloor(ctx, b.TempDir(), 10, 4, 1, &floorCPU)
		if err != nil {
			b.Fatal(err)
		}
		floor += res[0]
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(drain.Nanoseconds())/n, "drain-ns/op")
	b.ReportMetric(float64(drainCPU.Nanoseconds())/n, "drain-cpu-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "floor-ns/op")
	b.ReportMetric(float64(floorCPU.Nanoseconds())/n, "floor-cpu-ns/op")
	b.ReportMetric(float64(drain)/float64(floor), "drain/floor")
	b.ReportMetric(float64(drainCPU)/float64(floorCPU), "drain-cpu/floor-cpu")
}

// drainOnce grows a forest under a fresh world, then times (and, with
// -drainprofile, profiles) its drain; it returns the drain's wall and
// CPU time.
func drainOnce(ctx context.Context, b *testing.B, i int) (took, cpu time.Duration) {
	w, err := OpenWorld(ctx, b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := w.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}()
	p, err := w.Runtime.StartAgent(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	ids, err := w.Grow(ctx, p, 10, 4)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	stop := startDrainProfile(b, i)
	start, cpu0 := time.Now(), cpuclock.Process()
	b.StartTimer()
	err = w.Runtime.Drain(ctx, p)
	b.StopTimer()
	took, cpu = time.Since(start), cpuclock.Process()-cpu0
	stop()
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		if err := w.WaitEnd(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	return took, cpu
}

// startDrainProfile starts the CPU profile of drain i when -drainprofile
// is set, and returns what stops it.
func startDrainProfile(b *testing.B, i int) (stop func()) {
	if *drainProfile == "" {
		return func() {}
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", *drainProfile, i))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(errors.Join(err, f.Close()))
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
