package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
)

// ScaleCosts are the per-agent costs of one size of row 9.
type ScaleCosts struct {
	Live int // live children of the one parent
	// Spawn: Spawn of each child, in a turn that sleeps, until accepted.
	Spawn Phase
	// Send: a follow-up to each live child until its inbox accepts it.
	Send Phase
	// Settle: Spawn of a short child beside the live ones, its turn, its
	// settlement and disposal (WaitChild), over a batch started together.
	Settle Phase
	// Drain: Drain of the parent, disposing every live child child-first.
	Drain Phase
	// Close: Close of a runtime holding that many live children.
	Close Phase
	// Heap is the live heap a collection found before the follow-ups.
	Heap uint64
}

// Phase is one timed operation over a batch of agents, per agent: the
// process's CPU time (every thread: the runtime's goroutines, the
// collector, the kernel's work for it), the wall time, and how many
// collections ended while it ran. Each starts after a forced collection,
// so none inherits a cycle the one before it left half done.
type Phase struct {
	CPU, Wall time.Duration
	GC        uint64
}

// Cost is what row 9 compares: the CPU time, which other processes on a
// shared machine inflate far less than the wall time; the wall time where
// the CPU time is not read.
func (p Phase) Cost() time.Duration {
	if p.CPU > 0 {
		return p.CPU
	}
	return p.Wall
}

// timePhase runs op over n agents after a forced collection and returns
// its Phase.
func timePhase(n int, op func() error) (Phase, error) {
	runtime.GC()
	cycles, cpu, start := gcCycles(), cpuclock.Process(), time.Now()
	err := op()
	per := time.Duration(max(n, 1))
	return Phase{CPU: (cpuclock.Process() - cpu) / per, Wall: time.Since(start) / per, GC: gcCycles() - cycles}, err
}

// gcCycles is how many collections have ended so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// scaleSleep is the prompt of a child that stays in its turn until it is
// cancelled.
var scaleSleep = event.Text("sleep 10m")

// Scale measures ScaleCosts with live children of one parent, on a
// runtime opened with dsh.Open over a JSONL store in a new folder under
// dir without fsync (so the runtime's own costs show), then a second
// runtime whose live children Close disposes; settle short children are
// started and waited for beside the live ones. ctx bounds every step.
func Scale(ctx context.Context, dir string, live, settle int) (ScaleCosts, error) {
	c := ScaleCosts{Live: live}
	root, err := os.MkdirTemp(dir, "scale-*")
	if err != nil {
		return c, err
	}
	defer os.RemoveAll(root)
	if err := c.measureLive(ctx, root+"/drain", live, settle); err != nil {
		return c, err
	}
	err = c.measureClose(ctx, root+"/close", live)
	return c, err
}

// openScale opens a runtime over a clean store at root with a parent.
func openScale(ctx context.Context, root string) (*dsh.Runtime, *dsh.Handle, error) {
	rt, err := dsh.Open(dsh.Options{Dir: root, NoSync: true})
	if err != nil {
		return nil, nil, err
	}
	p, err := rt.StartAgent(ctx, "scale-parent")
	if err != nil {
		return nil, nil, errors.Join(err, rt.Close())
	}
	return rt, p, nil
}

// measureLive times spawn, follow-up admission, short children and the
// drain at live children.
func (c *ScaleCosts) measureLive(ctx context.Context, root string, live, settle int) (err error) {
	rt, p, err := openScale(ctx, root)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()
	var ids []string
	if c.Spawn, err = timePhase(live, func() (err error) {
		ids, err = spawnEach(ctx, rt, p, live, scaleSleep)
		return err
	}); err != nil {
		return err
	}
	c.Heap = liveHeap()
	if c.Send, err = timePhase(live, func() error { return sendEach(ctx, rt, p, ids) }); err != nil {
		return err
	}
	if c.Settle, err = timePhase(settle, func() error { return settleBatch(ctx, rt, p, settle) }); err != nil {
		return err
	}
	c.Drain, err = timePhase(live, func() error { return rt.Drain(ctx, p) })
	if err != nil {
		return fmt.Errorf("drain of %d children: %w", live, err)
	}
	return nil
}

// measureClose times Close of a runtime with live children.
func (c *ScaleCosts) measureClose(ctx context.Context, root string, live int) error {
	rt, p, err := openScale(ctx, root)
	if err != nil {
		return err
	}
	if _, err := spawnEach(ctx, rt, p, live, scaleSleep); err != nil {
		return errors.Join(err, rt.Close())
	}
	if c.Close, err = timePhase(live, rt.Close); err != nil {
		return fmt.Errorf("close of %d children: %w", live, err)
	}
	return nil
}

// spawnEach spawns n children of p with prompt, one after another, and
// returns their ids.
func spawnEach(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, n int, prompt []event.Block) ([]string, error) {
	ids := make([]string, 0, n)
	for i := range n {
		id, err := rt.Spawn(ctx, p, "scale", prompt)
		if err != nil {
			return ids, fmt.Errorf("spawn of child %d of %d: %w", i+1, n, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// sendEach sends one follow-up to each child, each until its inbox
// accepts it.
func sendEach(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, ids []string) error {
	msg := event.Text("reply later")
	for _, id := range ids {
		if _, err := rt.Send(ctx, p, id, msg); err != nil {
			return fmt.Errorf("follow-up to %s: %w", id, err)
		}
	}
	return nil
}

// settleBatch spawns n short children, then waits for each to settle and
// be disposed.
func settleBatch(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, n int) error {
	ids, err := spawnEach(ctx, rt, p, n, event.Text("reply done"))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, ok, err := rt.WaitChild(ctx, id); err != nil || !ok {
			return fmt.Errorf("short child %s did not settle (ok %v): %w", id, ok, err)
		}
	}
	return nil
}

// scaleRow measures every size of cfg.ScaleSizes (scaleRuns times each,
// keeping the median run of each operation) and its floor, and compares
// the largest size with the smallest, per agent. The runs go in rounds,
// each size that still needs one in turn, so that the small sizes' runs
// are spread before and after the large ones and meet the same load of
// the machine.
func scaleRow(ctx context.Context, cfg Config) ([]Line, error) {
	sizes := cfg.ScaleSizes
	largest := sizes[len(sizes)-1]
	runs := make([][]ScaleCosts, len(sizes))
	floorRuns := make([][]ScaleFloor, len(sizes))
	endIORuns := make([][]Phase, len(sizes))
	for round := range scaleRuns(sizes[0], largest) {
		for i, live := range sizes {
			if round >= scaleRuns(live, largest) {
				continue
			}
			c, err := Scale(ctx, cfg.Dir, live, cfg.ScaleSettle)
			if err != nil {
				return nil, fmt.Errorf("at %d live children: %w", live, err)
			}
			runs[i] = append(runs[i], c)
			for range floorRunsIn(round) {
				floorRuns[i] = append(floorRuns[i], measureGoroutines(live))
			}
			for range endIORunsIn(round, live, largest) {
				io, err := measureEndIO(cfg.Dir, live)
				if err != nil {
					return nil, fmt.Errorf("floor at %d: %w", live, err)
				}
				endIORuns[i] = append(endIORuns[i], io)
			}
		}
	}
	all := make([]ScaleCosts, len(sizes))
	floors := make([]ScaleFloor, len(sizes))
	for i := range sizes {
		all[i], floors[i] = medianCosts(runs[i]), medianFloor(floorRuns[i])
		floors[i].EndIO = medianPhase(endIORuns[i], func(p Phase) Phase { return p })
	}
	lines, err := scaleLines(all, floors, cfg.ScaleSettle)
	if err != nil {
		return nil, err
	}
	floorLines, err := scaleFloorLines(floors)
	return append(lines, floorLines...), err
}

// floorRunsIn is how many goroutine floor runs (9f, 9g, 9h) go with a
// size's run in a round: two, and one more in the first, so that a size
// measured k times has 2k+1 of them (see endIORunsIn for 9i).
func floorRunsIn(round int) int {
	if round == 0 {
		return 3
	}
	return 2
}

// endIORunsIn is how many end-of-life floor runs (9i) go with a size's
// run in a round: as many as the goroutine floors for a size measured
// more than once, whose batch is short enough (20 ms at 1k) for one
// preemption on a loaded machine to swing it by a third; one for a size
// measured once, whose run builds as many logs as the size (minutes at
// 100k) and whose batch is long enough to average the load out.
func endIORunsIn(round, size, largest int) int {
	if scaleRuns(size, largest) > 1 {
		return floorRunsIn(round)
	}
	return 1
}

// scaleRuns is how many times row 9 measures a size: up to five times for
// the small sizes, whose batches are short enough for one slow moment of
// the machine to swing them, and once for a size a third of the largest
// or more, whose batch is long enough to average it out.
func scaleRuns(size, largest int) int { return min(5, max(1, largest/(3*size))) }

// medianPhase is, of the runs, the phase whose Cost is the median (the
// upper one of an even count).
func medianPhase[T any](runs []T, phase func(T) Phase) Phase {
	phases := make([]Phase, len(runs))
	for i, r := range runs {
		phases[i] = phase(r)
	}
	slices.SortFunc(phases, func(a, b Phase) int { return cmp.Compare(a.Cost(), b.Cost()) })
	return phases[len(phases)/2]
}

// medianCosts is, operation by operation, the median of runs at one size.
func medianCosts(runs []ScaleCosts) ScaleCosts {
	c := runs[len(runs)-1]
	for _, op := range scaleOps {
		*op.field(&c) = medianPhase(runs, func(r ScaleCosts) Phase { return *op.field(&r) })
	}
	return c
}

// medianFloor is, operation by operation, the median of runs at one size.
func medianFloor(runs []ScaleFloor) ScaleFloor {
	f := runs[0]
	for _, op := range floorOps {
		*op.field(&f) = medianPhase(runs, func(r ScaleFloor) Phase { return *op.field(&r) })
	}
	return f
}

// floorOps are row 9's floor lines: id, what is measured, and the phase.
var floorOps = []struct {
	id, name string
	field    func(*ScaleFloor) *Phase
}{
	{"9f", "floor of 9b without the runtime: a message queued on one of the parked goroutines", func(f *ScaleFloor) *Phase { return &f.Send }},
	{"9g", "floor of 9d and 9e without the runtime: stopping each parked goroutine", func(f *ScaleFloor) *Phase { return &f.Drain }},
	{"9h", "floor of 9a and 9c without the runtime: starting a parked goroutine, found by id", func(f *ScaleFloor) *Phase { return &f.Spawn }},
	{"9i", "end-of-life I/O of 9d and 9e without the runtime: a line appended to each log, its lease record unlinked", func(f *ScaleFloor) *Phase { return &f.EndIO }},
}

// scaleFloorLines compare, without a target, ScaleFloor's costs at the
// largest size with the smallest: the ratios row 9's stand on.
func scaleFloorLines(floors []ScaleFloor) ([]Line, error) {
	first, last := floors[0], floors[len(floors)-1]
	var lines []Line
	for _, op := range floorOps {
		l, err := compareSizes(op.id, op.name, *op.field(&last), last.Live, *op.field(&first), first.Live, nil)
		if err != nil {
			return nil, err
		}
		l.Note = sizesNote(floors, func(f ScaleFloor) (int, Phase) { return f.Live, *op.field(&f) })
		lines = append(lines, l)
	}
	lines[0].Note += fmt.Sprintf("; each goroutine holds %d B and is found by id in a map; a message is %d B", floorHeap, floorMessage)
	lines[3].Note += fmt.Sprintf("; a store's layout (a folder per log in one project folder, its lease record a hard link to one of %d owner files), reached relative to the open project folder; the first %d logs keep their file open (the store's kept-file budget here), the others open and close it for the line", floorOwners, storeKeptFiles())
	return lines, nil
}

// compareSizes is the Line comparing phase last at lastLive with phase
// first at firstLive, per agent, by Cost.
func compareSizes(id, name string, last Phase, lastLive int, first Phase, firstLive int, target *Target) (Line, error) {
	return Compare(id, fmt.Sprintf("%s, %s vs %s", name, liveCount(lastLive), liveCount(firstLive)),
		NsPer(fmt.Sprintf("at %d", lastLive), float64(last.Cost()), "agent"),
		NsPer(fmt.Sprintf("at %d", firstLive), float64(first.Cost()), "agent"), OursOverBase, target)
}

// sizesNote lists a phase at every size: "per agent, CPU (wall,
// collections) at 1k: …, 100k: …".
func sizesNote[T any](all []T, phase func(T) (int, Phase)) string {
	var sizes []string
	for _, c := range all {
		live, p := phase(c)
		sizes = append(sizes, fmt.Sprintf("%s: %s (%s, %d GC)", liveCount(live), FormatNs(float64(p.CPU)), FormatNs(float64(p.Wall)), p.GC))
	}
	return "per agent, CPU (wall, collections during it) at " + strings.Join(sizes, ", ")
}

// scaleOps are row 9's lines: id, what is measured, the phase, and the
// floor line it stands on.
var scaleOps = []struct {
	id, name, floor string
	field           func(*ScaleCosts) *Phase
	endIO           bool // its children's logs and leases end in the phase (9i)
}{
	{"9a", "spawn per child", "9h", func(c *ScaleCosts) *Phase { return &c.Spawn }, false},
	{"9b", "follow-up admission per child", "9f", func(c *ScaleCosts) *Phase { return &c.Send }, false},
	{"9c", "short child start → settled → disposed", "9h", func(c *ScaleCosts) *Phase { return &c.Settle }, false},
	{"9d", "drain per child", "9g", func(c *ScaleCosts) *Phase { return &c.Drain }, true},
	{"9e", "Close per live child", "9g", func(c *ScaleCosts) *Phase { return &c.Close }, true},
}

// scaleLines compares, for each operation, the per-agent cost at the
// largest size with the smallest (target ≤ 1.3×); the note gives the
// ratio over its floor's (floors, the same sizes) and every size side by
// side.
func scaleLines(all []ScaleCosts, floors []ScaleFloor, settle int) ([]Line, error) {
	first, last := all[0], all[len(all)-1]
	var lines []Line
	for _, op := range scaleOps {
		l, err := compareSizes(op.id, op.name, *op.field(&last), last.Live, *op.field(&first), first.Live, &Target{Op: AtMost, Value: 1.3})
		if err != nil {
			return nil, err
		}
		l.Name += " live children"
		floor, err := floorRatio(floors, op.floor)
		if err != nil {
			return nil, err
		}
		l.Note = fmt.Sprintf("row/floor %.2f (floor %s %.2f×); ", l.Ratio/floor, op.floor, floor) +
			sizesNote(all, func(c ScaleCosts) (int, Phase) { return c.Live, *op.field(&c) })
		if op.endIO {
			l.Note += endIONote(op.field(&first).Cost(), op.field(&last).Cost(), floors)
		}
		lines = append(lines, l)
	}
	var heaps []string
	for _, c := range all {
		heaps = append(heaps, fmt.Sprintf("%s: %s", liveCount(c.Live), FormatBytes(float64(c.Heap))))
	}
	lines[1].Note += "; live heap a collection marks, " + strings.Join(heaps, ", ")
	lines[0].Note += fmt.Sprintf("; one parent, children in a sleeping turn, dsh.Open over a JSONL store without fsync; %d short children for 9c; Close on a second runtime of as many children; each phase after a forced collection, the median of %s", settle, runsNote(all))
	return lines, nil
}

// endIONote compares what a row's per-agent cost rose by, from the
// smallest size to the largest, with what its end-of-life I/O floor (9i)
// rose by: "; from 1k to 100k +26.0 µs per agent, of which 9i +6.10 µs
// (row less 9i at 100k over 1k 1.12×)".
func endIONote(first, last time.Duration, floors []ScaleFloor) string {
	lo, hi := floors[0], floors[len(floors)-1]
	io := hi.EndIO.Cost() - lo.EndIO.Cost()
	rest := "—"
	if base := first - lo.EndIO.Cost(); base > 0 {
		rest = fmt.Sprintf("%.2f×", float64(last-hi.EndIO.Cost())/float64(base))
	}
	return fmt.Sprintf("; from %s to %s %s per agent, of which 9i %s (row less 9i, %s over %s: %s)",
		liveCount(lo.Live), liveCount(hi.Live), signedNs(last-first), signedNs(io), liveCount(hi.Live), liveCount(lo.Live), rest)
}

// signedNs writes d with its sign: "+6.10 µs", "-300 ns".
func signedNs(d time.Duration) string {
	if d < 0 {
		return "-" + FormatNs(float64(-d))
	}
	return "+" + FormatNs(float64(d))
}

// runsNote says how many runs each size had: "5 runs at 1k, 1 at 100k".
func runsNote(all []ScaleCosts) string {
	largest := all[len(all)-1].Live
	var runs []string
	for _, c := range all {
		runs = append(runs, fmt.Sprintf("%d at %s", scaleRuns(c.Live, largest), liveCount(c.Live)))
	}
	runs[0] = strings.Replace(runs[0], " at ", " runs at ", 1)
	return strings.Join(runs, ", ")
}

// floorRatio is floor line id's ratio, largest size over smallest.
func floorRatio(floors []ScaleFloor, id string) (float64, error) {
	first, last := floors[0], floors[len(floors)-1]
	for _, op := range floorOps {
		if op.id == id {
			return Ratio(NsPer("largest", float64(op.field(&last).Cost()), "agent"), NsPer("smallest", float64(op.field(&first).Cost()), "agent"), OursOverBase)
		}
	}
	return 0, fmt.Errorf("row 9: no floor %s", id)
}

// liveCount writes a number of children exactly, in thousands when it is
// a whole number of them: "60", "1k", "100k".
func liveCount(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
