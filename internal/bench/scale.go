package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/metrics"
	"strings"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
)

// ScaleCosts are the per-agent costs of one size of row 9, each the time
// of a whole batch divided by its agents.
type ScaleCosts struct {
	Live int // live children of the one parent
	// Spawn: Spawn of each child, in a turn that sleeps, until accepted.
	Spawn time.Duration
	// Send: a follow-up to each live child until its inbox accepts it.
	Send time.Duration
	// Settle: Spawn of a short child beside the live ones, its turn, its
	// settlement and disposal (WaitChild), over a batch started together.
	Settle time.Duration
	// Drain: Drain of the parent, disposing every live child child-first.
	Drain time.Duration
	// Close: Close of a runtime holding that many live children.
	Close time.Duration
	// GC counts the collections during each operation above; Heap is the
	// live heap the last collection before the follow-ups found.
	GC   ScaleGC
	Heap uint64
}

// ScaleGC is, per operation of ScaleCosts, how many collections ended
// while it ran; each marks the live heap (ScaleCosts.Heap), so at a
// larger size each costs more and comes less often.
type ScaleGC struct{ Spawn, Send, Settle, Drain, Close uint64 }

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
	cycles := gcCycles()
	if c.Spawn, ids, err = spawnEach(ctx, rt, p, live, scaleSleep); err != nil {
		return err
	}
	c.GC.Spawn, cycles, c.Heap = gcCycles()-cycles, gcCycles(), liveHeap()
	if c.Send, err = sendEach(ctx, rt, p, ids); err != nil {
		return err
	}
	c.GC.Send, cycles = gcCycles()-cycles, gcCycles()
	if c.Settle, err = settleBatch(ctx, rt, p, settle); err != nil {
		return err
	}
	c.GC.Settle, cycles = gcCycles()-cycles, gcCycles()
	start := time.Now()
	if err := rt.Drain(ctx, p); err != nil {
		return fmt.Errorf("drain of %d children: %w", live, err)
	}
	c.Drain, c.GC.Drain = time.Since(start)/time.Duration(live), gcCycles()-cycles
	return nil
}

// measureClose times Close of a runtime with live children.
func (c *ScaleCosts) measureClose(ctx context.Context, root string, live int) error {
	rt, p, err := openScale(ctx, root)
	if err != nil {
		return err
	}
	if _, _, err := spawnEach(ctx, rt, p, live, scaleSleep); err != nil {
		return errors.Join(err, rt.Close())
	}
	start, cycles := time.Now(), gcCycles()
	if err := rt.Close(); err != nil {
		return fmt.Errorf("close of %d children: %w", live, err)
	}
	c.Close, c.GC.Close = time.Since(start)/time.Duration(live), gcCycles()-cycles
	return nil
}

// spawnEach spawns n children of p with prompt, one after another, and
// returns the time per child and their ids.
func spawnEach(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, n int, prompt []event.Block) (time.Duration, []string, error) {
	ids := make([]string, 0, n)
	start := time.Now()
	for i := range n {
		id, err := rt.Spawn(ctx, p, "scale", prompt)
		if err != nil {
			return 0, ids, fmt.Errorf("spawn of child %d of %d: %w", i+1, n, err)
		}
		ids = append(ids, id)
	}
	return time.Since(start) / time.Duration(n), ids, nil
}

// sendEach sends one follow-up to each child and returns the time per
// accepted follow-up.
func sendEach(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, ids []string) (time.Duration, error) {
	msg := event.Text("reply later")
	start := time.Now()
	for _, id := range ids {
		if _, err := rt.Send(ctx, p, id, msg); err != nil {
			return 0, fmt.Errorf("follow-up to %s: %w", id, err)
		}
	}
	return time.Since(start) / time.Duration(len(ids)), nil
}

// settleBatch spawns n short children, then waits for each to settle and
// be disposed, and returns the time per child.
func settleBatch(ctx context.Context, rt *dsh.Runtime, p *dsh.Handle, n int) (time.Duration, error) {
	start := time.Now()
	_, ids, err := spawnEach(ctx, rt, p, n, event.Text("reply done"))
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, ok, err := rt.WaitChild(ctx, id); err != nil || !ok {
			return 0, fmt.Errorf("short child %s did not settle (ok %v): %w", id, ok, err)
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// scaleRow measures every size of cfg.ScaleSizes and compares the largest
// with the smallest, per agent.
func scaleRow(ctx context.Context, cfg Config) ([]Line, error) {
	var all []ScaleCosts
	var floors []ScaleFloor
	for _, live := range cfg.ScaleSizes {
		c, err := Scale(ctx, cfg.Dir, live, cfg.ScaleSettle)
		if err != nil {
			return nil, fmt.Errorf("at %d live children: %w", live, err)
		}
		all = append(all, c)
		floors = append(floors, measureFloor(live))
	}
	lines, err := scaleLines(all, cfg.ScaleSettle)
	if err != nil {
		return nil, err
	}
	floorLines, err := scaleFloorLines(floors)
	return append(lines, floorLines...), err
}

// scaleFloorLines compare, without a target, ScaleFloor's costs at the
// largest size with the smallest: the ratios row 9's stand on.
func scaleFloorLines(floors []ScaleFloor) ([]Line, error) {
	first, last := floors[0], floors[len(floors)-1]
	ops := []struct {
		id, name string
		cost     func(ScaleFloor) time.Duration
	}{
		{"9f", "floor of 9b without the runtime: a message queued on one of the parked goroutines", func(f ScaleFloor) time.Duration { return f.Send }},
		{"9g", "floor of 9d without the runtime: stopping each parked goroutine", func(f ScaleFloor) time.Duration { return f.Drain }},
	}
	var lines []Line
	for _, op := range ops {
		l, err := Compare(op.id, fmt.Sprintf("%s, %s vs %s", op.name, liveCount(last.Live), liveCount(first.Live)),
			NsPer(fmt.Sprintf("at %d", last.Live), float64(op.cost(last)), "agent"),
			NsPer(fmt.Sprintf("at %d", first.Live), float64(op.cost(first)), "agent"), OursOverBase, nil)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	lines[0].Note = fmt.Sprintf("each goroutine holds %d B and is found by id in a map; a message is %d B", floorHeap, floorMessage)
	return lines, nil
}

// scaleOps are row 9's lines: id, what is measured, and the cost.
var scaleOps = []struct {
	id, name string
	cost     func(ScaleCosts) time.Duration
	gc       func(ScaleGC) uint64
}{
	{"9a", "spawn per child", func(c ScaleCosts) time.Duration { return c.Spawn }, func(g ScaleGC) uint64 { return g.Spawn }},
	{"9b", "follow-up admission per child", func(c ScaleCosts) time.Duration { return c.Send }, func(g ScaleGC) uint64 { return g.Send }},
	{"9c", "short child start → settled → disposed", func(c ScaleCosts) time.Duration { return c.Settle }, func(g ScaleGC) uint64 { return g.Settle }},
	{"9d", "drain per child", func(c ScaleCosts) time.Duration { return c.Drain }, func(g ScaleGC) uint64 { return g.Drain }},
	{"9e", "Close per live child", func(c ScaleCosts) time.Duration { return c.Close }, func(g ScaleGC) uint64 { return g.Close }},
}

// scaleLines compares, for each operation, the per-agent cost at the
// largest size with the smallest (target ≤ 1.3×); the note lists every
// size side by side.
func scaleLines(all []ScaleCosts, settle int) ([]Line, error) {
	first, last := all[0], all[len(all)-1]
	var lines []Line
	for _, op := range scaleOps {
		l, err := Compare(op.id, fmt.Sprintf("%s, %s vs %s live children", op.name, liveCount(last.Live), liveCount(first.Live)),
			NsPer(fmt.Sprintf("at %d", last.Live), float64(op.cost(last)), "agent"),
			NsPer(fmt.Sprintf("at %d", first.Live), float64(op.cost(first)), "agent"), OursOverBase, &Target{Op: AtMost, Value: 1.3})
		if err != nil {
			return nil, err
		}
		var sizes []string
		for _, c := range all {
			sizes = append(sizes, fmt.Sprintf("%s: %s (%d GC)", liveCount(c.Live), FormatNs(float64(op.cost(c))), op.gc(c.GC)))
		}
		l.Note = "per agent (collections during it) at " + strings.Join(sizes, ", ")
		lines = append(lines, l)
	}
	var heaps []string
	for _, c := range all {
		heaps = append(heaps, fmt.Sprintf("%s: %s", liveCount(c.Live), FormatBytes(float64(c.Heap))))
	}
	lines[1].Note += "; live heap a collection marks, " + strings.Join(heaps, ", ")
	lines[0].Note += fmt.Sprintf("; one parent, children in a sleeping turn, dsh.Open over a JSONL store without fsync; %d short children for 9c; Close on a second runtime of as many children", settle)
	return lines, nil
}

// liveCount writes a number of children exactly, in thousands when it is
// a whole number of them: "60", "1k", "100k".
func liveCount(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
