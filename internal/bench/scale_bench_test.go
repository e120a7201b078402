package bench

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// scaleSizes are BenchmarkScale's sizes; raise them for the full row
// (-scale.sizes=1000,10000,100000 -benchtime=1x takes minutes).
var scaleSizes = flag.String("scale.sizes", "1000,10000", "BenchmarkScale: live children of one parent, comma-separated")

// BenchmarkScale is row 9 in go test form: at each size, the per-agent
// cost of spawn, follow-up admission, a short child's whole life, drain
// and Close, reported as metrics with the collections during each
// (compare the sizes' figures; flat is right), and the floor of 9b and
// 9d without the runtime (9f, 9g). Run it with -benchtime=1x: one
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
				b.ReportMetric(float64(op.cost(c).Nanoseconds()), op.id+"-ns/agent")
				b.ReportMetric(float64(op.gc(c.GC)), op.id+"-gcs")
			}
			f := measureFloor(live)
			b.ReportMetric(float64(f.Send.Nanoseconds()), "9f-ns/agent")
			b.ReportMetric(float64(f.Drain.Nanoseconds()), "9g-ns/agent")
		})
	}
}

func TestScaleLinesCompareTheLargestSizeWithTheSmallest(t *testing.T) {
	small := ScaleCosts{Live: 1000, Spawn: 100, Send: 10, Settle: 300, Drain: 40, Close: 50}
	mid := ScaleCosts{Live: 10_000, Spawn: 110, Send: 10, Settle: 300, Drain: 40, Close: 50}
	big := ScaleCosts{Live: 100_000, Spawn: 120, Send: 30, Settle: 300, Drain: 40, Close: 60, GC: ScaleGC{Send: 2}}
	lines, err := scaleLines([]ScaleCosts{small, mid, big}, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"9a": Met, "9b": Missed, "9c": Met, "9d": Met, "9e": Met}
	for _, l := range lines {
		if l.Status != want[l.ID] {
			t.Errorf("%s: %s, want %s (ratio %v)", l.ID, l.Status, want[l.ID], l.Ratio)
		}
	}
	if lines[0].Ratio != 1.2 || !strings.Contains(lines[0].Name, "100k vs 1k live children") {
		t.Errorf("9a: ratio %v, name %q", lines[0].Ratio, lines[0].Name)
	}
	if !strings.HasPrefix(lines[1].Note, "per agent (collections during it) at 1k: 10.0 ns (0 GC), 10k: 10.0 ns (0 GC), 100k: 30.0 ns (2 GC); live heap a collection marks, 1k: 0 B") {
		t.Errorf("9b note: %q", lines[1].Note)
	}
}

func TestTheScaleFloorStopsEveryGoroutine(t *testing.T) {
	f := measureFloor(100)
	if f.Live != 100 || f.Send <= 0 || f.Drain <= 0 {
		t.Errorf("floor at 100: %+v", f)
	}
	lines, err := scaleFloorLines([]ScaleFloor{{Live: 1000, Send: 10, Drain: 20}, {Live: 100_000, Send: 30, Drain: 20}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].ID != "9f" || lines[0].Ratio != 3 || lines[1].Ratio != 1 || lines[0].Status != Info {
		t.Errorf("floor lines: %+v", lines)
	}
}
