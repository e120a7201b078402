package bench

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scaleSizes are BenchmarkScale's sizes; raise them for the full row
// (-scale.sizes=1000,10000,100000 -benchtime=1x takes minutes).
var scaleSizes = flag.String("scale.sizes", "1000,10000", "BenchmarkScale: live children of one parent, comma-separated")

// BenchmarkScale is row 9 in go test form: at each size, the per-agent
// CPU time of spawn, follow-up admission, a short child's whole life,
// drain and Close, reported as metrics with the collections during each
// (compare the sizes' figures; flat is right), and the floors of 9a, 9b
// and 9d without the runtime (9h, 9f, 9g). Run it with -benchtime=1x: one
// iteration is a whole size.
func BenchmarkScale(b *testing.B) {
	for part := range strings.SplitSeq(*scaleSizes, ",") {
		live, err := strconv.Atoi(part)
		if err != nil || live < 1 {
			b.Fatalf("-scale.sizes: %q is not a positive number", part)
		}
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			var c ScaleCosts
			for b.Loop() {
				if c, err = Scale(context.Background(), b.TempDir(), live, 100); err != nil {
					b.Fatal(err)
				}
			}
			for _, op := range scaleOps {
				b.ReportMetric(float64(op.field(&c).Cost().Nanoseconds()), op.id+"-ns/agent")
				b.ReportMetric(float64(op.field(&c).GC), op.id+"-gcs")
			}
			f, err := measureFloor(b.TempDir(), live)
			if err != nil {
				b.Fatal(err)
			}
			for _, op := range floorOps {
				b.ReportMetric(float64(op.field(&f).Cost().Nanoseconds()), op.id+"-ns/agent")
			}
		})
	}
}

// cpu is a Phase of ns nanoseconds of CPU time per agent.
func cpu(ns time.Duration) Phase { return Phase{CPU: ns, Wall: 2 * ns} }

func TestScaleLinesCompareTheLargestSizeWithTheSmallest(t *testing.T) {
	small := ScaleCosts{Live: 1000, Spawn: cpu(100), Send: cpu(10), Settle: cpu(300), Drain: cpu(40), Close: cpu(50)}
	mid := ScaleCosts{Live: 10_000, Spawn: cpu(110), Send: cpu(10), Settle: cpu(300), Drain: cpu(40), Close: cpu(50)}
	big := ScaleCosts{Live: 100_000, Spawn: cpu(120), Send: Phase{CPU: 30, Wall: 90, GC: 2}, Settle: cpu(300), Drain: cpu(40), Close: cpu(60)}
	floors := []ScaleFloor{{Live: 1000, Spawn: cpu(10), Send: cpu(10), Drain: cpu(10)}, {Live: 10_000}, {Live: 100_000, Spawn: cpu(20), Send: cpu(15), Drain: cpu(10)}}
	lines, err := scaleLines([]ScaleCosts{small, mid, big}, floors, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"9a": Met, "9b": Missed, "9c": Met, "9d": Met, "9e": Met}
	for _, l := range lines {
		if l.Status != want[l.ID] {
			t.Errorf("%s: %s, want %s (ratio %v)", l.ID, l.Status, want[l.ID], l.Ratio)
		}
	}
	if lines[0].Ratio != 1.2 || lines[0].Name != "spawn per child, 100k vs 1k live children" {
		t.Errorf("9a: ratio %v, name %q", lines[0].Ratio, lines[0].Name)
	}
	if !strings.HasPrefix(lines[0].Note, "row/floor 0.60 (floor 9h 2.00×); ") {
		t.Errorf("9a note: %q", lines[0].Note)
	}
	if !strings.HasPrefix(lines[1].Note, "row/floor 2.00 (floor 9f 1.50×); per agent, CPU (wall, collections during it) at 1k: 10.0 ns (20.0 ns, 0 GC), 10k: 10.0 ns (20.0 ns, 0 GC), 100k: 30.0 ns (90.0 ns, 2 GC); live heap a collection marks, 1k: 0 B") {
		t.Errorf("9b note: %q", lines[1].Note)
	}
}

func TestScaleKeepsTheMedianRunOfEachOperation(t *testing.T) {
	runs := []ScaleCosts{
		{Live: 1000, Spawn: cpu(300), Drain: cpu(10)},
		{Live: 1000, Spawn: cpu(100), Drain: cpu(30)},
		{Live: 1000, Spawn: cpu(200), Drain: Phase{CPU: 20, Wall: 7, GC: 1}},
	}
	m := medianCosts(runs)
	if m.Spawn != cpu(200) || m.Drain != (Phase{CPU: 20, Wall: 7, GC: 1}) {
		t.Errorf("median: spawn %+v, drain %+v", m.Spawn, m.Drain)
	}
	if got := []int{scaleRuns(1000, 100_000), scaleRuns(10_000, 100_000), scaleRuns(100_000, 100_000), scaleRuns(20, 60)}; !slices.Equal(got, []int{5, 3, 1, 1}) {
		t.Errorf("runs per size: %v", got)
	}
}

func TestTheScaleFloorStopsEveryGoroutine(t *testing.T) {
	f, err := measureFloor(t.TempDir(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range floorOps {
		if p := *op.field(&f); f.Live != 100 || (p.Wall <= 0 && (op.id != "9i" || runtime.GOOS != "windows")) {
			t.Errorf("floor %s at 100: %+v", op.id, p)
		}
	}
	lines, err := scaleFloorLines([]ScaleFloor{{Live: 1000, Spawn: cpu(5), Send: cpu(10), Drain: cpu(20), EndIO: cpu(4)}, {Live: 100_000, Spawn: cpu(5), Send: cpu(30), Drain: cpu(20), EndIO: cpu(10)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 || lines[0].ID != "9f" || lines[0].Ratio != 3 || lines[1].Ratio != 1 || lines[2].ID != "9h" || lines[3].ID != "9i" || lines[3].Ratio != 2.5 || lines[0].Status != Info {
		t.Errorf("floor lines: %+v", lines)
	}
}

func TestTheEndOfLifeNoteSaysWhatTheFloorExplains(t *testing.T) {
	floors := []ScaleFloor{{Live: 1000, EndIO: cpu(5000)}, {Live: 100_000, EndIO: cpu(11_000)}}
	got := endIONote(50_000, 80_000, floors)
	want := "; from 1k to 100k +30.0 µs per agent, of which 9i +6.00 µs (row less 9i, 100k over 1k: 1.53×)"
	if got != want {
		t.Errorf("note:\n got %q\nwant %q", got, want)
	}
}
